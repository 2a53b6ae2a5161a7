// Readiness (/readyz) by its checks, on a ManualClock: not bound until main.ts says so; not ready
// while draining; not joined until a peer answered (a node without seeds is joined); caught up
// once the start-up catch-up ended or SERVICE_READY_CATCHUP_TIMEOUT passed, and latched (later
// catch-ups after ring changes never make a ready node unready).
import { expect } from "chai";
import { CatchUp, type ClusterView, type MerkleSyncer, Readiness } from "../../../src/cluster/index.js";
import { recordingLogger } from "../../../src/log/index.js";
import { flush, ManualClock } from "../../helpers/manual-clock.js";

function fixture(hasSeeds = true) {
  const clock = new ManualClock();
  const state = { draining: false, contacted: false, everCaughtUp: false };
  const r = new Readiness({ clock, catchupTimeoutMs: 60_000, hasSeeds, draining: () => state.draining, contacted: () => state.contacted, everCaughtUp: () => state.everCaughtUp });
  const failing = () => Object.entries(r.checks()).filter(([, c]) => !c.ok).map(([name]) => name);
  return { clock, state, r, failing };
}

describe("cluster/readiness", () => {
  it("a fresh node with seeds fails bound, joined and caught_up; each turns ok in turn", () => {
    const { state, r, failing } = fixture();
    expect(failing()).to.deep.equal(["bound", "joined", "caught_up"]);
    r.markBound();
    expect(failing()).to.deep.equal(["joined", "caught_up"]);
    state.contacted = true;
    expect(failing()).to.deep.equal(["caught_up"]);
    state.everCaughtUp = true;
    expect(failing()).to.deep.equal([]);
    expect(r.status().ready).to.equal(true);
  });

  it("a pass that found no peer to sync with latches readiness only without seeds, and counts as caught up only while no peer is on the ring (a node restarted empty while cut off voted and was ready once its peers were back)", async () => {
    const clock = new ManualClock();
    const syncer = { syncWith: async () => ({ pulled: 0, clean: true, failed: false }) } as unknown as MerkleSyncer;
    for (const hasSeeds of [true, false]) {
      let peers: Array<{ id: string; address: string }> = [];
      const view = { ringPeers: () => peers, knownCount: () => 3 } as unknown as ClusterView;
      const catchUp = new CatchUp({ view, syncer, logger: recordingLogger("debug"), timers: clock, retryMs: 1_000, hasSeeds });
      catchUp.request();
      await clock.advanceAsync(0);
      await flush(5);
      expect([catchUp.caughtUp, catchUp.everCaughtUp], `alone, hasSeeds ${hasSeeds}`).to.deep.equal([true, !hasSeeds]);
      peers = [{ id: "n2", address: "n2.sim:7946" }];
      expect(catchUp.caughtUp, "a peer on the ring again, before any new pass").to.equal(false);
      catchUp.stop();
    }
  });

  it("caught up is latched: a later catch-up (after a ring change) keeps the node ready, with no /readyz poll in between", async () => {
    const clock = new ManualClock();
    const peer = { id: "n2", address: "n2.sim:7946" };
    let reachable = true;
    const view = { ringPeers: () => [peer] } as unknown as ClusterView;
    const syncer = { syncWith: async () => ({ pulled: 0, clean: true, failed: !reachable }) } as unknown as MerkleSyncer;
    const catchUp = new CatchUp({ view, syncer, logger: recordingLogger("debug"), timers: clock, retryMs: 1_000, hasSeeds: true });
    const r = new Readiness({ clock, catchupTimeoutMs: 60_000, hasSeeds: true, draining: () => false, contacted: () => true, everCaughtUp: () => catchUp.everCaughtUp });
    r.markBound();
    catchUp.request();
    await clock.advanceAsync(0);
    await flush(5);
    expect(catchUp.caughtUp).to.equal(true);
    reachable = false;
    catchUp.request(); // a ring change; the pass that follows cannot reach the peer
    await clock.advanceAsync(2_500);
    await flush(5);
    expect(catchUp.caughtUp).to.equal(false);
    expect(r.status().ready).to.equal(true);
    expect(r.checks().caught_up).to.deep.equal({ ok: true, detail: "caught up with peers" });
    catchUp.stop();
  });

  it("SERVICE_READY_CATCHUP_TIMEOUT after start, caught_up is ok without the catch-up", () => {
    const { clock, r, state } = fixture();
    r.markBound();
    state.contacted = true;
    clock.advance(59_999);
    expect(r.checks().caught_up.ok).to.equal(false);
    clock.advance(1);
    expect(r.checks().caught_up).to.deep.equal({ ok: true, detail: "catch-up not finished, ready after SERVICE_READY_CATCHUP_TIMEOUT" });
  });

  it("draining makes the node unready; a node without seeds is joined at once", () => {
    const { state, r, failing } = fixture(false);
    r.markBound();
    state.everCaughtUp = true;
    expect(failing()).to.deep.equal([]);
    state.draining = true;
    expect(failing()).to.deep.equal(["not_draining"]);
  });
});
