// A deleted key does not come back (hardening §3):
// - tombstones live for SERVICE_TOMBSTONE_TTL under their own byte budget, not the item capacity;
// - an item whose TTL passes leaves a tombstone of its version;
// - a read never answers with a value older than a tombstone the node holds;
// - a node that saw no majority for longer than the tombstone TTL drops its data and rejoins as a
//   new node, so it cannot spread keys deleted while it was away.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { CacheError } from "../../src/core/errors.js";
import { HashRing } from "../../src/ring/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { keyWhere, text } from "./data-path-fixtures.js";
import { stateOf } from "./membership-fixtures.js";

/** Syncs every pair of nodes both ways (anti-entropy by hand). */
async function syncAll(c: SimCluster): Promise<void> {
  for (const a of c.nodes) for (const b of c.nodes) if (a !== b) await a.node.merkle.syncer.syncWith({ id: b.id, address: b.address });
}

describe("sim/deletes stay deleted", () => {
  const cluster = simClusters();

  it(
    "deleting 2,000 absent keys on a node with capacity 1,000 keeps the real tombstones: anti-entropy does not bring the deleted key back",
    withSeed(511, async () => {
      const env = { SERVICE_REPLICATION: "2", SERVICE_CAPACITY: "1000", SERVICE_HINT_TTL: "1s", SERVICE_AUTO_SYNC_INTERVAL: "0" };
      const c = await cluster({ nodes: 2, seed: 511, env });
      await c.advance(1_000);
      await c.node("n1").cache.admitWrite().set("victim", fromUtf8("v"), 0, "all");
      c.crash("n2");
      await c.node("n1").cache.admitWrite().remove("victim", "one");
      for (let i = 0; i < 2000; i++) await c.node("n1").cache.admitWrite().remove(`absent-${i}`, "one");
      await c.advance(3_000); // the hints for n2 expire
      c.revive("n2");
      // A probe finds n2 alive again (QUORUM and ALL reads need a majority alive), and both nodes,
      // which lost sight of a majority, count again once caught up (the hold, then a catch-up pass).
      await c.advance(8_000);
      await syncAll(c);
      expect(c.node("n1").store.peek("victim")?.tombstone, "n1 still holds the tombstone").to.equal(true);
      expect((await c.node("n1").cache.get("victim", "all")).item).to.equal(undefined);
      expect(c.node("n2").store.peek("victim")?.tombstone, "the tombstone reached n2").to.equal(true);
      expect(c.node("n1").metrics.get("dist.tombstones.dropped"), "no tombstone dropped within the budget").to.equal(0);
    }),
  );

  it(
    "an item whose TTL passes leaves a tombstone of its version: a replica that missed the TTL'd write cannot bring the older value back",
    withSeed(512, async () => {
      const env = { SERVICE_REPLICATION: "2", SERVICE_HINT_TTL: "1s", SERVICE_AUTO_SYNC_INTERVAL: "0" };
      const c = await cluster({ nodes: 2, seed: 512, env });
      await c.advance(1_000);
      await c.node("n1").cache.admitWrite().set("ttl-key", fromUtf8("older, no ttl"), 0, "all");
      c.crash("n2");
      const w = await c.node("n1").cache.admitWrite().set("ttl-key", fromUtf8("newer, 2 s ttl"), 2_000, "one");
      await c.advance(5_000); // the newer value expires on n1; the hint for n2 expires too
      expect(c.node("n1").store.peek("ttl-key"), "n1 keeps a tombstone of the expired version").to.deep.include({ tombstone: true, version: w.version });
      c.revive("n2");
      // A probe finds n2 alive again (QUORUM and ALL reads need a majority alive), and both nodes,
      // which lost sight of a majority, count again once caught up (the hold, then a catch-up pass).
      await c.advance(8_000);
      await syncAll(c);
      expect((await c.node("n1").cache.get("ttl-key", "all")).item).to.equal(undefined);
      expect(c.node("n2").store.peek("ttl-key")?.tombstone, "n2's older value was replaced by the tombstone").to.equal(true);
    }),
  );

  it(
    "an owner that holds a tombstone and looks past its local miss (catch-up not done yet) does not answer the older value its peers still hold",
    withSeed(513, async () => {
      const c = await cluster({ nodes: 3, seed: 513 });
      // No time passes: catch-up has not run, so reads on an owner look past a local miss.
      const key = keyWhere(c, (o) => o.primary === "n1", "past");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("before the delete"), 0, "all");
      c.chaos.isolate("n2");
      c.chaos.isolate("n3");
      await c.node("n1").cache.admitWrite().remove(key, "one");
      await c.settle(); // the pushes to n2 and n3 fail (they become hints, replayed only on a tick)
      c.chaos.heal();
      expect(c.node("n2").store.peek(key)?.tombstone, "n2 missed the delete").to.equal(false);
      expect(c.node("n1").store.peek(key)?.tombstone).to.equal(true);
      expect((await c.node("n1").cache.get(key, "one")).item, "ONE read on the owner with the tombstone").to.equal(undefined);
      expect(c.node("n1").store.peek(key)?.tombstone, "the tombstone stays").to.equal(true);
    }),
  );

  it(
    "a node that saw no majority for longer than the tombstone TTL drops its data and rejoins as a new node: keys deleted while it was away do not come back",
    withSeed(514, async () => {
      const env = { SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_AUTO_SYNC_INTERVAL: "2s" };
      const c = await cluster({ nodes: 3, seed: 514, env });
      await c.advance(2_000);
      const key = keyWhere(c, (o) => o.primary === "n1", "away");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("deleted while n3 was away"), 0, "all");
      await c.node("n1").cache.admitWrite().set("kept", fromUtf8("kept"), 0, "all");
      c.chaos.isolate("n3");
      await c.advance(1_000);
      await c.node("n1").cache.admitWrite().remove(key, "quorum");
      await c.advance(40_000); // n3 has seen no majority for 40 s
      expect(c.node("n1").store.peek(key)?.tombstone, "n1 keeps the tombstone past its TTL for n3, which has not pulled it").to.equal(true);
      expect(c.node("n3").metrics.get("dist.contact.resets"), "n3 dropped its data").to.equal(1);
      c.chaos.heal();
      await c.advance(20_000);
      for (const n of c.nodes) expect(await quorumRead(c, n.id, key), `QUORUM read through ${n.id}`).to.equal("absent");
      expect(text((await c.node("n3").cache.get("kept", "all")).item?.value), "n3 caught up like a new node").to.equal("kept");
      await c.advance(40_000); // every node has pulled the tombstone: it goes everywhere
      for (const n of c.nodes) expect(n.node.store.peek(key), `${n.id} holds nothing for the deleted key`).to.equal(undefined);
    }),
  );
});

/** A QUORUM read through `id`: the value's text, "absent", or the error code. */
function quorumRead(c: SimCluster, id: string, key: string): Promise<string> {
  return c.node(id).cache.get(key, "quorum").then(
    (r) => (r.item ? (text(r.item.value) ?? "") : "absent"),
    (e: unknown) => (e instanceof CacheError ? e.code : String(e)),
  );
}

/** Failure detection in seconds, and no anti-entropy (it would repair what the tests look at). */
const MEMBERSHIP_ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_AUTO_SYNC_INTERVAL: "0" };

/** The owners of `key` in a ring of `ids` with replication `rf`, primary first. */
function ownersIn(ids: readonly string[], key: string, rf: number): readonly string[] {
  return HashRing.build(ids, rf).ownersOf(key).ids;
}

/**
 * A key and three nodes for the uneven-views scenario after n1's return: `a` owns the key with
 * and without n1 and has not re-added n1, `b` owns it in both views, `z` owned it only while n1
 * was away, and n1's own view (everyone but `a`) makes n1 and `b` owners.
 */
function unevenViewsKey(): { key: string; a: string; b: string; z: string } {
  const all = ["n1", "n2", "n3", "n4", "n5"];
  for (let i = 0; i < 10_000; i++) {
    const key = `views-${i}`;
    const full = ownersIn(all, key, 3);
    if (!full.includes("n1")) continue;
    const away = ownersIn(all.filter((id) => id !== "n1"), key, 3);
    const z = away.find((id) => !full.includes(id));
    if (z === undefined) continue;
    for (const a of away.filter((id) => id !== z)) {
      const b = away.find((id) => id !== z && id !== a) as string;
      const mine = ownersIn(all.filter((id) => id !== a), key, 3);
      if (mine.includes("n1") && mine.includes(b)) return { key, a, b, z };
    }
  }
  throw new Error("no key fits the uneven-views scenario");
}

describe("sim/deletes stay deleted: quorums across uneven ring views", () => {
  const cluster = simClusters();

  it(
    "after a heal, a quorum read on a node that has not re-added the returning primary does not count a former owner's answer: it never returns the value a quorum delete replaced",
    withSeed(515, async () => {
      const { key, a, b, z } = unevenViewsKey();
      const env = MEMBERSHIP_ENV;
      const c = await cluster({ nodes: 5, seed: 515, env });
      await c.advance(3_000);
      c.chaos.isolate("n1");
      await c.advance(10_000); // every node prunes n1, and n1 prunes every node
      for (const id of [a, b, z]) expect(stateOf(c, id, "n1"), `${id} pruned n1`).to.equal("absent");
      await c.node(a).cache.admitWrite().set(key, fromUtf8("before the delete"), 0, "all"); // on a, b and z
      // The heal reaches every node but a, which keeps n1 pruned (hearsay cannot bring it back).
      c.chaos.heal();
      c.chaos.partition(["n1"], [a]);
      await c.advance(3_000);
      for (const id of [b, z]) expect(stateOf(c, id, "n1"), `${id} re-added n1`).to.equal("alive");
      expect(stateOf(c, a, "n1"), `${a} has not re-added n1`).to.equal("absent");
      expect(c.node(z).cache.owners(key).ids, `${z} no longer owns the key`).to.not.include(z);
      expect(c.node(a).cache.owners(key).ids, `${a}'s view still has ${z} as an owner`).to.include(z);
      // The delete: n1 (primary in its view) and b (an owner in every view) acknowledge it.
      await c.node("n1").cache.admitWrite().remove(key, "quorum");
      expect(c.node(b).store.peek(key)?.tombstone, `${b} holds the tombstone`).to.equal(true);
      // a's quorum read while only z (no longer an owner) answers it: not a quorum of owners.
      c.chaos.partition(["n1", b], [a]);
      expect(c.node(z).endpoint.getRecords([key])[0], `${z}, a former owner, answers without counting`).to.deep.include({ counts: false });
      const onlyFormerOwner = await quorumRead(c, a, key);
      expect(onlyFormerOwner, "a quorum of a's owners did not answer").to.equal("QUORUM_FAILED");
      // Healed, and every node caught up: a's quorum read counts the tombstone.
      c.chaos.heal();
      await c.advance(20_000);
      expect((await c.node(a).cache.get(key, "quorum")).item, "the deleted key stays deleted").to.equal(undefined);
    }),
  );
});

/** The first `<prefix>-<n>` whose owner pairs (replication 2, sorted, "a,b") in rings of given members fit. */
function keyWithPairs(prefix: string, fits: (pair: (ids: readonly string[]) => string) => boolean): string {
  for (let i = 0; i < 10_000; i++) {
    const key = `${prefix}-${i}`;
    if (fits((ids) => [...ownersIn(ids, key, 2)].sort().join(","))) return key;
  }
  throw new Error(`no ${prefix} key fits its scenario`);
}

/**
 * A key for the returning-minority scenario, replication 2: n4 and n5 own it in the full view and
 * in every view that holds them both; the majority side (n1, n2, n3) gives it to n1 and n2.
 */
function minorityOwnedKey(): string {
  return keyWithPairs("minority", (pair) => pair(["n1", "n2", "n3", "n4", "n5"]) === "n4,n5" && pair(["n3", "n4", "n5"]) === "n4,n5" && pair(["n1", "n2", "n3"]) === "n1,n2");
}

describe("sim/deletes stay deleted: nodes back from the minority side", () => {
  const cluster = simClusters();

  it(
    "after a 3|2 split heals, two owners back from the minority side do not make up a quorum read that answers the value the majority deleted",
    withSeed(516, async () => {
      const key = minorityOwnedKey();
      const env = { ...MEMBERSHIP_ENV, SERVICE_REPLICATION: "2" };
      const c = await cluster({ nodes: 5, seed: 516, env });
      await c.advance(3_000);
      await c.node("n4").cache.admitWrite().set(key, fromUtf8("before the delete"), 0, "all"); // on n4 and n5
      c.chaos.partition(["n1", "n2", "n3"], ["n4", "n5"]);
      await c.advance(10_000); // each side prunes the other
      expect(stateOf(c, "n5", "n1"), "n5 pruned n1").to.equal("absent");
      await c.node("n1").cache.admitWrite().remove(key, "quorum"); // on n1 and n2, the owners the majority sees
      // The heal reaches n3 first: n4 and n5 see a majority again (n3, n4, n5), n1 and n2 not yet.
      c.chaos.partition(["n1", "n2"], ["n4", "n5"]);
      await c.advance(3_000);
      for (const id of ["n4", "n5"]) expect(stateOf(c, id, "n3"), `${id} re-added n3`).to.equal("alive");
      expect(c.node("n5").cache.owners(key).ids, "n5's view gives the key to n4 and n5").to.have.members(["n4", "n5"]);
      const read = await quorumRead(c, "n5", key);
      expect(read, "n4 and n5 have not caught up with the majority: they are no quorum").to.equal("QUORUM_FAILED");
      // Still bridged through n3 after the hold: n3 gossips n1 and n2 as alive, whom n4 and n5
      // pruned and cannot reach. Their views disagree, so they still abstain.
      await c.advance(12_000);
      expect(stateOf(c, "n5", "n1"), "n5 still cannot reach n1").to.equal("absent");
      expect(await quorumRead(c, "n5", key), "bridged: n4 and n5 still abstain").to.equal("QUORUM_FAILED");
      // Fully healed: once both have caught up (hold, catch-up pass, the majority's migrations), the delete holds.
      c.chaos.heal();
      await c.advance(20_000);
      expect((await c.node("n5").cache.get(key, "quorum")).item, "the deleted key stays deleted").to.equal(undefined);
      for (const id of ["n4", "n5"]) expect(c.node(id).store.peek(key)?.tombstone, `${id} holds the tombstone`).to.equal(true);
    }),
  );
});

/** A key the minority's ring with n1 back (n1, n4, n5) gives to n4 and n5 alone, replication 2. */
function keyOfTheReturningMinority(): string {
  return keyWithPairs("returning", (pair) => pair(["n1", "n4", "n5"]) === "n4,n5");
}

describe("sim/deletes stay deleted: writes coordinated by nodes back from the minority side", () => {
  const cluster = simClusters();

  it(
    "a node that sees a majority again before its ring matches the majority's does not acknowledge a QUORUM delete stored on owners whose copies abstain (chaos seed 3131)",
    withSeed(518, async () => {
      const key = keyOfTheReturningMinority();
      const env = { ...MEMBERSHIP_ENV, SERVICE_REPLICATION: "2" };
      const c = await cluster({ nodes: 5, seed: 518, env });
      await c.advance(3_000);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("before the delete"), 0, "all");
      c.chaos.partition(["n1", "n2", "n3"], ["n4", "n5"]);
      await c.advance(10_000); // each side prunes the other
      // The heal reaches n1 first: n4 and n5 see n1, 3 of the 5 known nodes, a majority; n2 and
      // n3 cannot reach them yet and keep them pruned.
      c.chaos.partition(["n2", "n3"], ["n4", "n5"]);
      await c.advance(2_000);
      for (const id of ["n4", "n5"]) expect(stateOf(c, id, "n1"), `${id} re-added n1`).to.equal("alive");
      expect(stateOf(c, "n2", "n4"), "n2 has not re-added n4").to.equal("absent");
      expect(c.node("n4").cache.owners(key).ids, "n4's ring gives the key to n4 and n5").to.have.members(["n4", "n5"]);
      for (const id of ["n4", "n5"]) expect(c.node(id).metrics.get("dist.contact.voting"), `${id} has not caught up since it lost contact`).to.equal(0);
      let refused: unknown;
      await c.node("n4").cache.admitWrite().remove(key, "quorum").catch((e: unknown) => (refused = e));
      expect((refused as CacheError | undefined)?.code, "stored on n4 and n5, whose copies abstain: no acknowledgement").to.equal("QUORUM_FAILED");
      expect((refused as CacheError).details).to.deep.include({ acknowledged: 0, required: 2, abstained: 2 });
      const n4 = c.node("n4").metrics;
      expect(n4.get("dist.write.quorum_failures"), "counted as a quorum failure").to.equal(1);
      expect(n4.get("dist.write.abstained_failures"), "and as one for abstaining owners").to.equal(1);
      // Fully healed and caught up, the same delete is acknowledged and every QUORUM read sees it.
      c.chaos.heal();
      await c.advance(20_000);
      await c.node("n4").cache.admitWrite().remove(key, "quorum");
      for (const id of ["n1", "n2", "n3", "n4", "n5"]) expect(await quorumRead(c, id, key), `QUORUM read on ${id}`).to.equal("absent");
    }),
  );
});

describe("sim/deletes stay deleted: a forwarding owner that lost contact", () => {
  const cluster = simClusters();

  it(
    "an owner back from isolation forwards a QUORUM delete to the primary without asking to be counted: the primary pushes to it and its answer abstains",
    withSeed(519, async () => {
      const c = await cluster({ nodes: 3, seed: 519, env: MEMBERSHIP_ENV });
      await c.advance(3_000);
      const key = keyWhere(c, (o) => o.primary === "n1", "forwarded");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("before the delete"), 0, "all");
      c.chaos.isolate("n3");
      await c.advance(3_000); // n3 sees no majority (both peers suspect), nobody is pruned yet
      c.chaos.reconnect("n3");
      c.chaos.partition(["n1", "n3"], ["n2"]); // n2 cannot acknowledge
      await c.advance(1_500); // n3 sees n1 again: a majority, in the hold
      expect(c.node("n3").metrics.get("dist.contact.voting"), "n3 has not caught up").to.equal(0);
      expect(c.node("n1").metrics.get("dist.contact.voting"), "n1 never lost contact").to.equal(1);
      let refused: unknown;
      await c.node("n3").cache.admitWrite().remove(key, "quorum").catch((e: unknown) => (refused = e));
      expect((refused as CacheError | undefined)?.code, "one voting copy (n1) is no quorum").to.equal("QUORUM_FAILED");
      expect((refused as CacheError).details).to.deep.include({ acknowledged: 1, abstained: 1 });
    }),
  );
});

describe("sim/deletes stay deleted: a restarted node", () => {
  const cluster = simClusters();

  it(
    "a node that dropped its data after losing contact reports not ready until it has caught up again (it stayed ready, empty, through the isolation and after the heal)",
    withSeed(1741, async () => {
      const env = { SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_AUTO_SYNC_INTERVAL: "0" };
      const c = await cluster({ nodes: 3, seed: 1741, env });
      for (const n of c.nodes) n.node.markBound();
      await c.advance(2_000);
      const keys = Array.from({ length: 100 }, (_, i) => `r-${i}`);
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "all");
      const n3 = c.node("n3");
      expect(n3.readiness.status().ready, "ready before").to.equal(true);
      c.chaos.isolate("n3");
      await c.advance(30_000); // past the tombstone TTL without a majority: n3 drops its data
      expect(n3.metrics.get("dist.contact.resets"), "n3 dropped its data").to.equal(1);
      expect(n3.store.items).to.equal(0);
      expect(n3.readiness.checks().caught_up.ok, "not caught up after dropping its data").to.equal(false);
      c.chaos.delayMs = 100;
      c.chaos.heal();
      const seen: string[] = [];
      for (let t = 0; t < 20_000; t += 50) {
        await c.advance(50);
        const held = n3.store.items;
        if (held < keys.length && n3.readiness.status().ready) seen.push(`+${t + 50} ms ready with ${held} items`);
      }
      expect(seen.slice(0, 3), `${seen.length} looks`).to.deep.equal([]);
      expect(n3.store.items, "caught up in the end").to.equal(keys.length);
      expect(n3.readiness.status().ready, "ready again once caught up").to.equal(true);
    }),
  );

  it(
    "a node restarted empty while cut off, long enough to prune its peers, neither reports ready nor counts towards QUORUM reads after the heal before it has caught up (it voted alone, and latched ready on a pass with no peer)",
    withSeed(1711, async () => {
      const c = await cluster({ nodes: 3, seed: 1711, env: { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_AUTO_SYNC_INTERVAL: "0" } });
      await c.advance(2_000);
      const keys = Array.from({ length: 100 }, (_, i) => `k-${i}`);
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "all");
      c.chaos.partition(["n3"], ["n1", "n2"]);
      const n3 = await c.restart("n3");
      n3.node.markBound();
      await c.advance(10_000); // past SERVICE_DEAD_AFTER: n3 prunes n1 and n2 and is alone on its ring
      expect(n3.node.readiness.status().ready, "not ready while cut off").to.equal(false);
      c.chaos.delayMs = 100; // the catch-up after the heal takes a little while
      c.chaos.heal();
      const seen: string[] = [];
      for (let t = 0; t < 8_000; t += 20) {
        await c.advance(20);
        const held = n3.node.store.items;
        if (held >= keys.length) continue;
        if (n3.node.readiness.status().ready) seen.push(`+${t + 20} ms ready with ${held} items`);
        const answer = (await n3.node.endpoint.getRecords([keys[0]!]))[0];
        if (answer?.counts === true && answer.record === undefined) seen.push(`+${t + 20} ms its empty answer counts towards QUORUM reads`);
      }
      expect(seen.slice(0, 3), `${seen.length} looks`).to.deep.equal([]);
      expect(n3.node.store.items, "caught up in the end").to.equal(keys.length);
    }),
  );

  it(
    "a node restarted with an empty memory does not count towards a quorum read before its start-up catch-up: it lost the tombstone it acknowledged",
    withSeed(517, async () => {
      const env = MEMBERSHIP_ENV;
      const c = await cluster({ nodes: 3, seed: 517, env });
      await c.advance(3_000);
      await c.node("n1").cache.admitWrite().set("k", fromUtf8("before the delete"), 0, "all");
      c.chaos.partition(["n1", "n2"], ["n3"]);
      await c.node("n1").cache.admitWrite().remove("k", "quorum"); // n1 and n2 acknowledge, n3 misses it
      c.chaos.heal();
      await c.restart("n1"); // loses its tombstone and its hint for n3
      expect(c.node("n1").store.peek("k"), "n1 came back empty").to.equal(undefined);
      c.chaos.partition(["n3"], ["n2"]); // only n1 (empty) and n3 (stale) answer n3's read
      expect(await quorumRead(c, "n3", "k"), "n1 has not caught up: no quorum").to.equal("QUORUM_FAILED");
      expect(c.node("n3").metrics.get("dist.read.quorum_failures"), "counted as a read quorum failure").to.equal(1);
      expect(c.node("n3").metrics.get("dist.read.abstained_failures"), "and as one for an abstaining owner").to.equal(1);
      c.chaos.heal();
      await c.advance(2_000);
      expect(c.node("n1").store.peek("k")?.tombstone, "n1 caught up from n2").to.equal(true);
      expect(await quorumRead(c, "n3", "k")).to.equal("absent");
    }),
  );
});
