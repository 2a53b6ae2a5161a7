// The drain hand-off across real nodes: a draining node gossips `draining`, peers drop it from
// their rings, it pushes every key it holds to the owners that lack it, hands the hints of an
// unreachable target to a live owner (which replays them once the target is back), reports
// safe_to_stop only when nothing is pending and every alive peer confirmed, and on leaving is
// removed by its peers like a manual removal (quorum sizes drop).
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { text } from "./data-path-fixtures.js";

const KEYS = Array.from({ length: 300 }, (_, i) => `drain-${i}`);

/** Advances in steps until `done()` or `maxMs` passed; returns the time it took. */
async function advanceUntil(c: SimCluster, done: () => boolean, maxMs: number, stepMs = 100): Promise<number> {
  let t = 0;
  while (!done() && t < maxMs) {
    await c.advance(stepMs);
    t += stepMs;
  }
  return t;
}

/** Keys (of `keys`) that some owner in `viewer`'s ring does not hold with the value `value-<key>`. */
function missingOnOwners(c: SimCluster, keys: readonly string[], viewer: string): string[] {
  const out: string[] = [];
  for (const key of keys) {
    for (const id of c.node(viewer).cache.owners(key).ids) {
      if (text(c.node(id).store.peek(key)?.value) !== `value-${key}`) out.push(`${key}@${id}`);
    }
  }
  return out;
}

async function writeAll(c: SimCluster, via: string, keys: readonly string[]): Promise<void> {
  await Promise.all(keys.map((k) => c.node(via).cache.admitWrite().set(k, fromUtf8(`value-${k}`), 0, "quorum")));
  await c.settle();
}

describe("sim/drain hand-off", function () {
  this.timeout(30_000);
  const cluster = simClusters();

  it(
    "a draining node leaves every ring, pushes its keys to the new owners and is safe to stop once every peer confirmed",
    withSeed(91, async () => {
      const c = await cluster({ nodes: 4, seed: 91, env: { SERVICE_REPLICATION: "3" } });
      await c.advance(2_000);
      await writeAll(c, "n1", KEYS);
      expect(c.node("n1").drainStatus()).to.include({ state: "serving", safe_to_stop: false });
      c.node("n1").drain("test");
      const before = c.node("n1").drainStatus();
      expect(before.state).to.equal("draining");
      expect(before.safe_to_stop).to.equal(false);
      await advanceUntil(c, () => c.node("n1").drainStatus().safe_to_stop, 10_000);
      const status = c.node("n1").drainStatus();
      expect(status, JSON.stringify(status)).to.deep.include({ safe_to_stop: true, hints_pending: 0, migrations_pending: 0, blockers: [] });
      for (const id of ["n2", "n3", "n4"]) {
        expect(c.node(id).members.get("n1")?.draining, `${id} sees n1 draining`).to.equal(true);
        expect(c.node(id).cache.owners(KEYS[0]!).ids).to.not.include("n1");
      }
      expect(c.node("n1").cache.owners(KEYS[0]!).ids, "off its own ring").to.not.include("n1");
      expect(missingOnOwners(c, KEYS, "n2")).to.deep.equal([]);
      expect(c.node("n1").metrics.get("dist.rebalance.keys")).to.be.greaterThan(0);
    }),
  );

  it(
    "hints for an unreachable target are handed to a live owner, which replays them once the target is back",
    withSeed(92, async () => {
      const c = await cluster({ nodes: 4, seed: 92, env: { SERVICE_REPLICATION: "3", SERVICE_DEAD_AFTER: "60s", SERVICE_HINT_TTL: "120s" } });
      await c.advance(2_000);
      c.crash("n4");
      await c.advance(3_000);
      const keys = Array.from({ length: 3000 }, (_, i) => `many-${i}`);
      await writeAll(c, "n1", keys);
      // The pushes to n4 fail batch after batch (the writes were acknowledged by the others first).
      await c.advance(1_000);
      const hinted = c.node("n1").hints.size("n4");
      expect(hinted, `n1 holds more hints for n4 (${hinted}) than one hand-off call carries; dropped ${c.node("n1").metrics.get("dist.hinted.dropped")}`).to.be.greaterThan(512);
      c.node("n1").drain("test");
      const tookMs = await advanceUntil(c, () => c.node("n1").drainStatus().safe_to_stop, 20_000);
      expect(tookMs, "several hand-off calls in one pass, not one per tick").to.be.at.most(1000);
      const status = c.node("n1").drainStatus();
      expect(status.safe_to_stop, JSON.stringify(status)).to.equal(true);
      expect(c.node("n1").hints.size()).to.equal(0);
      expect(c.node("n1").metrics.get("dist.hinted.handed_off")).to.equal(hinted);
      const taken = c.node("n2").hints.size("n4") + c.node("n3").hints.size("n4");
      expect(taken, "the live owners hold hints for n4").to.be.greaterThan(0);
      c.revive("n4");
      await advanceUntil(c, () => missingOnOwners(c, keys, "n2").length === 0, 20_000);
      expect(missingOnOwners(c, keys, "n2")).to.deep.equal([]);
    }),
  );

  it(
    "with every peer unreachable the node is never safe to stop: its keys have no live owner",
    withSeed(93, async () => {
      const c = await cluster({ nodes: 3, seed: 93, env: { SERVICE_REPLICATION: "2" } });
      await c.advance(2_000);
      await writeAll(c, "n1", KEYS.slice(0, 50));
      c.crash("n2");
      c.crash("n3");
      c.node("n1").drain("test");
      await c.advance(20_000);
      const status = c.node("n1").drainStatus();
      expect(status.safe_to_stop).to.equal(false);
      expect(status.blockers.map((b) => b.reason), JSON.stringify(status)).to.include.members(["no_live_owner"]);
    }),
  );

  it(
    "records waiting for owners that stay unreachable keep the drain unsafe past the hint TTL (they do not expire while it drains)",
    withSeed(95, async () => {
      const c = await cluster({ nodes: 3, seed: 95, env: { SERVICE_REPLICATION: "3", SERVICE_HINT_TTL: "30s" } });
      await c.advance(2_000);
      c.crash("n2");
      c.crash("n3");
      await c.advance(500);
      const keys = KEYS.slice(0, 50);
      await Promise.all(keys.map((k) => c.node("n1").cache.admitWrite().set(k, fromUtf8(`value-${k}`), 0, "one")));
      c.node("n1").drain("test");
      // Past the 30 s TTL: the hints and queued migrations for n2 and n3 used to expire here, and
      // with them the blockers, so the drain said "data handed off" with every write on n1 alone.
      await c.advance(60_000);
      const status = c.node("n1").drainStatus();
      expect(status.safe_to_stop, JSON.stringify(status)).to.equal(false);
      expect(c.node("n1").metrics.get("dist.hinted.expired") + c.node("n1").metrics.get("dist.migration.expired"), "nothing expired while draining").to.equal(0);
      c.revive("n2");
      c.revive("n3");
      await advanceUntil(c, () => c.node("n1").drainStatus().safe_to_stop, 30_000);
      expect(c.node("n1").drainStatus().safe_to_stop, JSON.stringify(c.node("n1").drainStatus())).to.equal(true);
      expect(missingOnOwners(c, keys, "n2")).to.deep.equal([]);
    }),
  );

  it(
    "records the migration queue had no room for, with no reachable owner, keep the drain unsafe until a later pass sends them",
    withSeed(96, async () => {
      const c = await cluster({ nodes: 3, seed: 96, env: { SERVICE_REPLICATION: "3", SERVICE_HINT_MAX_PER_NODE: "10" } });
      await c.advance(2_000);
      const keys = KEYS.slice(0, 50);
      await writeAll(c, "n1", keys);
      c.crash("n2");
      c.crash("n3");
      c.node("n1").drain("test");
      await c.advance(5_000);
      c.revive("n2");
      c.revive("n3");
      // Before: 40 records per owner found no room (10 per node), were counted nowhere, and the
      // drain said safe once the 10 queued ones were delivered.
      await advanceUntil(c, () => c.node("n1").drainStatus().safe_to_stop, 30_000);
      expect(c.node("n1").drainStatus().safe_to_stop, JSON.stringify(c.node("n1").drainStatus())).to.equal(true);
      expect(missingOnOwners(c, keys, "n2"), "every owner holds every record once the drain is safe").to.deep.equal([]);
    }),
  );

  it(
    "work tracked by an admitted batch (its later slices) keeps a drain from being safe until it settles",
    withSeed(93, async () => {
      const c = await cluster({ nodes: 1, seed: 93 });
      const writes = c.node("n1").cache.admitWrite();
      let finish: () => void = () => undefined;
      const slices = writes.track(new Promise<void>((resolve) => (finish = resolve)));
      c.node("n1").drain("test");
      expect(c.node("n1").drainStatus()).to.deep.include({ safe_to_stop: false, blockers: [{ reason: "in_flight", count: 1 }] });
      finish();
      await slices;
      expect(c.node("n1").drainStatus()).to.deep.include({ safe_to_stop: true, blockers: [] });
    }),
  );

  it(
    "a cluster of one is safe to stop at once",
    withSeed(94, async () => {
      const c = await cluster({ nodes: 1, seed: 94 });
      await c.node("n1").cache.admitWrite().set("solo", fromUtf8("v"), 0, "one");
      c.node("n1").drain("test");
      expect(c.node("n1").drainStatus()).to.deep.include({ state: "draining", safe_to_stop: true, blockers: [] });
    }),
  );

  it(
    "depart(): after the hand-off the node announces that it left; peers remove it and their quorum sizes drop",
    withSeed(95, async () => {
      const c = await cluster({ nodes: 4, seed: 95, env: { SERVICE_REPLICATION: "3", SERVICE_DRAIN_TIMEOUT: "20s" } });
      await c.advance(2_000);
      await writeAll(c, "n1", KEYS.slice(0, 100));
      expect(c.node("n2").members.knownCount()).to.equal(4);
      const outcome = c.node("n1").depart("test");
      let result: Awaited<typeof outcome> | undefined;
      void outcome.then((r) => (result = r));
      await advanceUntil(c, () => result !== undefined, 20_000);
      expect(result?.safe).to.equal(true);
      expect(result?.status.state).to.equal("left");
      for (const id of ["n2", "n3", "n4"]) {
        expect(c.node(id).members.get("n1"), id).to.equal(undefined);
        expect(c.node(id).members.knownCount(), id).to.equal(3);
      }
      expect(c.sim("n1").logger.records.map((r) => r.message)).to.include.members(["drain complete: data handed off, leaving the cluster", "left the cluster"]);
    }),
  );

  it(
    "depart() gives up after SERVICE_DRAIN_TIMEOUT, logs what is left, and does not announce leaving",
    withSeed(96, async () => {
      const c = await cluster({ nodes: 3, seed: 96, env: { SERVICE_REPLICATION: "2", SERVICE_DRAIN_TIMEOUT: "3s" } });
      await c.advance(2_000);
      await writeAll(c, "n1", KEYS.slice(0, 20));
      c.crash("n2");
      c.crash("n3");
      let result: { safe: boolean } | undefined;
      void c.node("n1").depart("test").then((r) => (result = r));
      await advanceUntil(c, () => result !== undefined, 10_000);
      expect(result?.safe).to.equal(false);
      const timedOut = c.sim("n1").logger.records.find((r) => r.message === "drain timed out: stopping with data not handed off");
      expect(timedOut, "the timeout record").to.not.equal(undefined);
      expect(timedOut?.fields).to.have.property("blockers");
      expect(c.node("n1").members.hasLeft).to.equal(false);
    }),
  );
});
