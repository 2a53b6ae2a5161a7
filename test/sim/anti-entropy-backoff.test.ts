// Merkle auto-sync on its timer with adaptive backoff: with SERVICE_AUTO_SYNC_INTERVAL=1s and
// SERVICE_AUTO_SYNC_MAX_FACTOR=4 clean ticks sleep 1 s, 2 s, 4 s, 4 s (factor 1, 2, 4, 4: the
// gauge dist.auto_sync.backoff_factor, info 'merkle auto-sync backoff factor changed' on each
// change), and a divergent tick resets the factor to 1. A maximum of 1 disables the backoff.
import { expect } from "chai";
import { LOG } from "../../src/log/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { BASE_VERSION, logRecords, rec } from "./data-path-fixtures.js";

const ENV = { SERVICE_AUTO_SYNC_INTERVAL: "1s", SERVICE_AUTO_SYNC_MAX_FACTOR: "4" };

describe("sim/anti-entropy: auto-sync adaptive backoff", () => {
  const cluster = simClusters();

  /** Factor gauge, clean ticks and Merkle syncs of a node. */
  // Every node also syncs once with each peer right at start-up (catch-up), before the timer's
  // first tick: CATCH_UP_SYNCS of the dist.merkle.syncs count come from that pass.
  const CATCH_UP_SYNCS = 2;
  const state = (c: SimCluster, id: string) => {
    const m = c.node(id).metrics;
    return { factor: m.get("dist.auto_sync.backoff_factor"), cleanTicks: m.get("dist.auto_sync.clean_ticks"), syncs: m.get("dist.merkle.syncs") };
  };

  const factorRecords = (c: SimCluster, id: string) => logRecords(c, id, LOG.backoffFactorChanged).map((r) => ({ level: r.level, from: r.fields.from, to: r.fields.to }));

  it(
    "clean ticks double the sleep up to the maximum: ticks at 1 s, 3 s, 7 s, 11 s with factors 2, 4, 4, 4, and one debug record per change",
    withSeed(241, async () => {
      const c = await cluster({ nodes: 3, seed: 241, env: ENV });
      await c.advance(0);
      expect(state(c, "n1")).to.deep.equal({ factor: 1, cleanTicks: 0, syncs: CATCH_UP_SYNCS });
      const expectTickAt = async (atMs: number, factor: number, cleanTicks: number) => {
        await c.advance(atMs - 1 - c.clock.monotonicMs());
        for (const n of c.nodes) expect(state(c, n.id).cleanTicks, `${n.id}: no tick before ${atMs} ms`).to.equal(cleanTicks - 1);
        await c.advance(1);
        for (const n of c.nodes) expect(state(c, n.id), `${n.id} after the tick at ${atMs} ms`).to.deep.equal({ factor, cleanTicks, syncs: CATCH_UP_SYNCS + 2 * cleanTicks });
      };
      await expectTickAt(1_000, 2, 1);
      await expectTickAt(3_000, 4, 2);
      await expectTickAt(7_000, 4, 3);
      await expectTickAt(11_000, 4, 4);
      for (const n of c.nodes) {
        // Backing off is what an idle cluster does: logged at debug so it stays quiet.
        expect(factorRecords(c, n.id), n.id).to.deep.equal([
          { level: "debug", from: 1, to: 2 },
          { level: "debug", from: 2, to: 4 },
        ]);
      }
    }),
  );

  it(
    "a divergent tick resets the factor to 1 (info record 4 -> 1), and clean ticks double it again from there",
    withSeed(242, async () => {
      const c = await cluster({ nodes: 3, seed: 242, env: ENV });
      await c.advance(11_000);
      for (const n of c.nodes) expect(state(c, n.id).factor, n.id).to.equal(4);
      // n1 holds a record the others missed (as if its replica pushes had been lost).
      c.node("n1").store.apply(rec("drifted", "only-on-n1", BASE_VERSION + 5_000_000, "n1"));
      await c.advance(3_999);
      expect(c.node("n2").store.peek("drifted"), "not before the next tick (4 s after the last)").to.equal(undefined);
      await c.advance(1);
      for (const id of ["n2", "n3"]) {
        expect(c.node(id).store.peek("drifted")?.origin, id).to.equal("n1");
        expect(state(c, id).factor, id).to.equal(1);
        expect(c.node(id).metrics.get("dist.merkle.keys_pulled"), id).to.equal(1);
        expect(factorRecords(c, id).slice(-1), id).to.deep.equal([{ level: "info", from: 4, to: 1 }]);
      }
      await c.advance(1_000);
      for (const id of ["n2", "n3"]) expect(state(c, id).factor, `${id}: one clean tick later`).to.equal(2);
      await c.advance(2_000);
      for (const n of c.nodes) expect(state(c, n.id).factor, n.id).to.equal(4);
    }),
  );

  it(
    "SERVICE_AUTO_SYNC_MAX_FACTOR=1 disables the backoff: a tick every interval, the factor stays 1 and no record is logged",
    withSeed(243, async () => {
      const c = await cluster({ nodes: 3, seed: 243, env: { SERVICE_AUTO_SYNC_INTERVAL: "1s", SERVICE_AUTO_SYNC_MAX_FACTOR: "1" } });
      await c.advance(5_000);
      for (const n of c.nodes) {
        expect(state(c, n.id), n.id).to.deep.equal({ factor: 1, cleanTicks: 5, syncs: CATCH_UP_SYNCS + 10 });
        expect(factorRecords(c, n.id), n.id).to.deep.equal([]);
      }
    }),
  );
});
