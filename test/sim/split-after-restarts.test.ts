// Two routine SIGTERM restarts during a partition, a full heal, then a 2|2 partition: no side may
// accept QUORUM writes (each sees 2 of the 4 known nodes). Found by a review of a change that let
// nodes take hearsay of a departure for a seed they had not reached (reverted): a restarted node
// removed a live seed on a stale departure, the removal never undid itself, and after the heal
// two live nodes each counted 3 known nodes, so both sides of the later split acknowledged QUORUM
// writes of one key. The sequence is the review's (SIGTERM drains and sends `left`).
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { expectCacheError } from "./data-path-fixtures.js";

const ENV = { SERVICE_REPLICATION: "3", SERVICE_DRAIN_TIMEOUT: "20s", SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s" };

async function advanceUntil(c: SimCluster, done: () => boolean, maxMs: number, stepMs = 100): Promise<void> {
  for (let t = 0; t < maxMs && !done(); t += stepMs) await c.advance(stepMs);
}

/** What SIGTERM does (drain, then `left` to every alive peer), then a fresh process with the same id. */
async function sigtermRestart(c: SimCluster, id: string, before: () => void): Promise<void> {
  let result: { safe: boolean } | undefined;
  void c.node(id).depart("SIGTERM").then((r) => (result = r));
  await advanceUntil(c, () => result !== undefined, 25_000);
  expect(result?.safe, `${id} departed cleanly`).to.equal(true);
  before();
  await c.restart(id);
}

describe("sim/split after restarts during a partition", function () {
  const cluster = simClusters();

  for (const seed of [301, 302]) {
    it(
      `restarts of n4 and n2 while cut from each other, a heal, then a 2|2 split: both sides refuse QUORUM writes (seed ${seed})`,
      withSeed(seed, async () => {
        const c = await cluster({ nodes: 4, seed, env: ENV });
        await c.advance(3_000);
        await sigtermRestart(c, "n4", () => c.chaos.partition(["n1"], ["n4"]));
        await c.advance(5_000);
        await sigtermRestart(c, "n2", () => c.chaos.partition(["n1", "n2"], ["n4"]));
        await c.advance(5_000);
        c.chaos.heal();
        await c.advance(120_000);
        for (const id of ["n1", "n2", "n3", "n4"]) expect(c.node(id).members.knownIds(), id).to.deep.equal(["n1", "n2", "n3", "n4"]);
        c.chaos.partition(["n1", "n2"], ["n3", "n4"]);
        await c.advance(20_000);
        await expectCacheError(c.node("n2").cache.admitWrite().set("split-key", fromUtf8("side-A"), 0, "quorum"), "QUORUM_FAILED");
        await expectCacheError(c.node("n4").cache.admitWrite().set("split-key", fromUtf8("side-B"), 0, "quorum"), "QUORUM_FAILED");
      }),
    );
  }
});
