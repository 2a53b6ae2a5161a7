// Rebalance when the ring changes. A fourth node joins a loaded 3-node cluster (c.join): keys
// move to their new owners in batches (dist.rebalance.*), every key stays readable from every node during and
// after, non-owners release their copies at once (grace 0) or after SERVICE_REMOVAL_GRACE, failed
// migrations are queued (dist.migration.*) and replayed. A node that leaves (pruned) has its keys
// re-replicated to the new owners.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { LOG } from "../../src/log/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { logRecords, text } from "./data-path-fixtures.js";
import { expectFullyAlive, total } from "./membership-fixtures.js";

const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_REBALANCE_INTERVAL: "250ms" };
const KEYS = 120;

describe("sim/rebalance: join and leave", () => {
  const cluster = simClusters();

  const value = (k: string) => `v-${k}`;

  /** A 3-node cluster holding KEYS keys on all their owners; returns the keys. */
  async function loaded(seed: number, env: Record<string, string> = {}): Promise<{ c: SimCluster; keys: string[] }> {
    const c = await cluster({ nodes: 3, seed, env: { ...ENV, ...env } });
    await c.advance(1_000);
    const keys = Array.from({ length: KEYS }, (_, i) => `item-${i}`);
    for (const [i, k] of keys.entries()) await c.node(`n${(i % 3) + 1}`).cache.admitWrite().set(k, fromUtf8(value(k)), 0, "all");
    await c.settle();
    return { c, keys };
  }

  /** Keys whose owners (as `viewer` sees them) include or exclude `id`. */
  const ownedBy = (c: SimCluster, keys: readonly string[], id: string, viewer = "n1") => keys.filter((k) => c.node(viewer).cache.owners(k).ids.includes(id));

  /** Reads every key from every node (or from `from`); returns "node:key" of each read that missed or failed. */
  async function unreadable(c: SimCluster, keys: readonly string[], from: readonly string[] = c.nodes.map((n) => n.id)): Promise<string[]> {
    const bad: string[] = [];
    for (const id of from) {
      for (const k of keys) {
        try {
          const got = text((await c.node(id).cache.get(k)).item?.value);
          if (got !== value(k)) bad.push(`${id}:${k}`);
        } catch (err) {
          bad.push(`${id}:${k}:${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    return bad;
  }

  /** "node:key" of every copy held where it is not owned, and of every owner missing its copy. */
  function misplaced(c: SimCluster, keys: readonly string[]): { extra: string[]; missing: string[] } {
    const extra: string[] = [];
    const missing: string[] = [];
    for (const n of c.nodes) {
      for (const k of keys) {
        const owns = n.node.cache.owners(k).ids.includes(n.id);
        const holds = n.node.store.peek(k) !== undefined;
        if (holds && !owns) extra.push(`${n.id}:${k}`);
        if (owns && !holds) missing.push(`${n.id}:${k}`);
      }
    }
    return { extra, missing };
  }

  it(
    "a fourth node joins: keys whose owners changed migrate to it in batches, every owner ends up with its copy and no node keeps one it does not own (grace 0)",
    withSeed(231, async () => {
      const { c, keys } = await loaded(231, { SERVICE_REBALANCE_BATCH_SIZE: "16" });
      const primariesBefore = new Map(keys.map((k) => [k, c.node("n1").cache.owners(k).primary]));
      c.join("n4", ENV);
      await c.settle();
      expectFullyAlive(c, ["n1", "n2", "n3", "n4"], ["n1", "n2", "n3", "n4"]);
      const toN4 = ownedBy(c, keys, "n4");
      expect(toN4.length).to.be.within(KEYS / 2, KEYS);
      expect(c.node("n4").store.items, "nothing moved before the first rebalance tick").to.equal(0);

      await c.advance(2_000);
      expect(misplaced(c, keys)).to.deep.equal({ extra: [], missing: [] });
      for (const k of toN4) expect(text(c.node("n4").store.peek(k)?.value), k).to.equal(value(k));
      const moved = keys.filter((k) => c.node("n1").cache.owners(k).primary !== primariesBefore.get(k));
      expect(moved.length / KEYS, "about a quarter of the primaries move to the newcomer").to.be.within(0.1, 0.45);
      expect(moved.every((k) => c.node("n1").cache.owners(k).primary === "n4")).to.equal(true);
      expect(total(c, "dist.rebalance.keys"), "each newcomer copy sent at least once").to.be.at.least(toN4.length);
      for (const id of ["n1", "n2", "n3"]) {
        const m = c.node(id).metrics;
        expect(m.get("dist.rebalance.batches"), id).to.be.at.least(Math.ceil(m.get("dist.rebalance.keys") / 16));
        expect(m.get("dist.rebalance.last_ns"), id).to.be.greaterThan(0);
        expect(m.get("dist.migration.queued"), id).to.equal(0);
      }
      expect(await unreadable(c, keys)).to.deep.equal([]);
    }),
  );

  it(
    "every key stays readable from every node while a fourth node joins: from the old nodes right after the join and at every rebalance tick (batches of 8), and from all four after",
    withSeed(232, async () => {
      const { c, keys } = await loaded(232, { SERVICE_REBALANCE_BATCH_SIZE: "8" });
      c.join("n4", ENV);
      await c.settle();
      // Reads through n4 itself would fill its store (read fallback) and hide the window, so the
      // newcomer is read from only once the rebalance is over.
      const failures: string[] = [];
      for (let step = 0; step <= 12; step++) {
        const bad = await unreadable(c, keys, ["n1", "n2", "n3"]);
        if (bad.length > 0) failures.push(`+${step * 250} ms: ${bad.length} unreadable, e.g. ${bad.slice(0, 3).join(", ")}`);
        await c.advance(250);
      }
      const after = await unreadable(c, keys);
      expect({ during: failures, after }, "reads that missed (a non-owner asks the new primary first, which has no copy yet and answers 'absent')").to.deep.equal({ during: [], after: [] });
    }),
  );

  it(
    "with SERVICE_REMOVAL_GRACE=5s a node that lost a key keeps its copy (still readable) until the grace has elapsed after the migration, then releases it",
    withSeed(233, async () => {
      const { c, keys } = await loaded(233, { SERVICE_REMOVAL_GRACE: "5s" });
      c.join("n4", { ...ENV, SERVICE_REMOVAL_GRACE: "5s" });
      await c.settle();
      const joinedAt = c.clock.monotonicMs();
      await c.advance(1_000);
      const held = misplaced(c, keys);
      expect(held.missing).to.deep.equal([]);
      expect(held.extra.length, "copies kept by the nodes that lost ownership").to.be.greaterThan(0);
      expect(total(c, "dist.rebalance.keys")).to.be.greaterThan(0);
      await c.advance(joinedAt + 5_000 - c.clock.monotonicMs());
      expect(misplaced(c, keys).extra, "still within the grace (the migration ran at the first tick after the join)").to.deep.equal(held.extra);
      await c.advance(500);
      expect(misplaced(c, keys)).to.deep.equal({ extra: [], missing: [] });
      expect(await unreadable(c, keys)).to.deep.equal([]);
    }),
  );

  /** Joins n4, then cuts n1 <-> n4 before the first rebalance tick; n2 and n3 still reach both. */
  async function migrationBlocked(seed: number, env: Record<string, string> = {}) {
    const { c, keys } = await loaded(seed, env);
    c.join("n4", { ...ENV, ...env });
    await c.settle();
    c.chaos.partition(["n1"], ["n4"]);
    await c.advance(300);
    // Keys n1 no longer owns and must hand to n4, their new primary.
    const lost = keys.filter((k) => {
      const o = c.node("n1").cache.owners(k);
      return !o.ids.includes("n1") && o.primary === "n4";
    });
    return { c, keys, lost };
  }

  it(
    "a migration that fails is queued (dist.migration.queued) with warn 'rebalance migration forward failed; queued for hint replay'; the copy is kept until the replay delivers it, then released",
    withSeed(234, async () => {
      const { c, keys, lost } = await migrationBlocked(234);
      expect(lost.length).to.be.greaterThan(0);
      const n1 = c.node("n1");
      const queued = n1.metrics.get("dist.migration.queued");
      expect(queued).to.be.at.least(lost.length);
      expect(n1.migrations.size("n4")).to.equal(queued);
      const warns = logRecords(c, "n1", LOG.migrationForwardFailed);
      expect(warns.map((w) => w.level)).to.include("warn");
      expect(warns[0]!.fields).to.include({ peer: "n4" });
      for (const k of lost) expect(text(n1.store.peek(k)?.value), `${k} kept on n1 until migrated`).to.equal(value(k));
      expect(n1.members.get("n4")?.state, "n4 stays alive (indirect probes)").to.equal("alive");
      await c.advance(2_000);
      expect(n1.migrations.size("n4"), "any replay error keeps the migration queued").to.equal(queued);
      expect(await unreadable(c, keys)).to.deep.equal([]);

      c.chaos.heal();
      await c.advance(200);
      expect(n1.metrics.get("dist.migration.replayed")).to.equal(queued);
      expect(n1.migrations.size()).to.equal(0);
      for (const k of lost) {
        expect(n1.store.peek(k), `${k} released by n1 after the replay`).to.equal(undefined);
        expect(text(c.node("n4").store.peek(k)?.value), k).to.equal(value(k));
      }
      await c.advance(1_000);
      expect(misplaced(c, keys)).to.deep.equal({ extra: [], missing: [] });
      expect(await unreadable(c, keys)).to.deep.equal([]);
    }),
  );

  it(
    "with SERVICE_REMOVAL_GRACE=5s a copy whose migration was replayed from the queue is also kept until the grace has elapsed",
    withSeed(235, async () => {
      const { c, lost } = await migrationBlocked(235, { SERVICE_REMOVAL_GRACE: "5s" });
      expect(lost.length).to.be.greaterThan(0);
      c.chaos.heal();
      await c.advance(200);
      expect(c.node("n1").metrics.get("dist.migration.replayed")).to.be.greaterThan(0);
      const released = lost.filter((k) => c.node("n1").store.peek(k) === undefined);
      expect(released, "released at once by the replay, without the removal grace").to.deep.equal([]);
      await c.advance(5_000);
      expect(lost.filter((k) => c.node("n1").store.peek(k) !== undefined), "released once the grace elapsed").to.deep.equal([]);
    }),
  );

  it(
    "a node that leaves (crashed, then pruned) has its keys copied to their new owners by the surviving owners",
    withSeed(236, async () => {
      const c = await cluster({ nodes: 4, seed: 236, env: ENV });
      await c.advance(1_000);
      const keys = Array.from({ length: KEYS }, (_, i) => `item-${i}`);
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(value(k)), 0, "all");
      const hadN4 = ownedBy(c, keys, "n4");
      c.crash("n4");
      await c.advance(8_000);
      for (const id of ["n1", "n2", "n3"]) expect(c.node(id).members.get("n4"), id).to.equal(undefined);
      // n4 is gone for good: take it out of the cluster's node list (and stop its loops).
      await c.nodes.splice(c.nodes.indexOf(c.sim("n4")), 1)[0]!.node.stop();
      await c.advance(1_000);
      expect(hadN4.length).to.be.greaterThan(0);
      expect(misplaced(c, keys)).to.deep.equal({ extra: [], missing: [] });
      expect(total(c, "dist.rebalance.keys")).to.be.at.least(hadN4.length);
      expect(await unreadable(c, keys)).to.deep.equal([]);
    }),
  );
});

describe("sim/rebalance: two joins seeded with one node", () => {
  const cluster = simClusters();
  const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_REBALANCE_INTERVAL: "250ms" };

  it(
    "acknowledged QUORUM writes stay readable at QUORUM while n4 and n5 join at once, both seeded with n1 only (a peer that did not know a joiner yet answered its Merkle root for no shared keys, and the empty joiner counted as caught up)",
    withSeed(1701, async () => {
      const c = await cluster({ nodes: 3, seed: 1701, env: ENV });
      await c.advance(1_000);
      const keys = Array.from({ length: 300 }, (_, i) => `k-${i}`);
      for (const [i, k] of keys.entries()) await c.node(`n${(i % 3) + 1}`).cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "quorum");
      await c.advance(100);
      const one = { ...ENV, SERVICE_SEEDS: "n1@n1.sim:7946" };
      c.join("n4", one);
      c.join("n5", one);
      await c.settle();
      await c.advance(20); // the joiners' start-up catch-up; no rebalance tick or gossip round yet
      const n4 = c.node("n4");
      const n5 = c.node("n5");
      const both = keys.filter((k) => {
        const ids = n5.cache.owners(k).ids;
        return ids.includes("n5") && ids.includes("n4") && n4.cache.owners(k).ids.includes("n4") && !n4.store.peek(k) && !n5.store.peek(k);
      });
      const lost: string[] = [];
      for (const k of both) {
        try {
          const got = text((await n5.cache.get(k, "quorum")).item?.value);
          if (got !== `v-${k}`) lost.push(`${k}=${got}`);
        } catch {
          // 503 QUORUM_FAILED is the documented answer while the joiners catch up.
        }
      }
      expect(lost, `QUORUM reads at n5 that answered absent for acknowledged keys (${lost.length} of ${both.length})`).to.deep.equal([]);
    }),
  );
});
