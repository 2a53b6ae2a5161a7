// drainStatus(), the pure decision behind GET /dist/drain and the shutdown: safe_to_stop only
// while draining, with nothing pending and every alive peer confirmed; a cluster of one is safe
// at once; each blocker names what holds the node back.
import { expect } from "chai";
import { drainStatus, type DrainFacts } from "../../../src/cluster/index.js";

const quiet: DrainFacts = {
  draining: true, left: false, alone: false, peersLeaving: false, hintsQueued: 0, migrationsQueued: 0, keysUnsent: 0, keysPassDone: true, noLiveOwner: 0, repairsQueued: 0, writesInFlight: 0, callsInFlight: 0, unconfirmedPeers: [],
};

describe("cluster/drain-status", () => {
  it("draining with nothing pending and every peer confirmed: safe to stop, no blocker", () => {
    expect(drainStatus(quiet)).to.deep.equal({ state: "draining", hints_pending: 0, migrations_pending: 0, repairs_queued: 0, in_flight: 0, safe_to_stop: true, blockers: [] });
  });

  it("serving is never safe (not_draining); left is reported as its own state", () => {
    expect(drainStatus({ ...quiet, draining: false })).to.deep.include({ state: "serving", safe_to_stop: false, blockers: [{ reason: "not_draining" }] });
    expect(drainStatus({ ...quiet, left: true }).state).to.equal("left");
  });

  const rows: Array<[string, Partial<DrainFacts>, object, Partial<ReturnType<typeof drainStatus>>]> = [
    ["an unconfirmed peer", { unconfirmedPeers: ["n3", "n2"] }, { reason: "peers_unconfirmed", peers: ["n2", "n3"] }, {}],
    ["queued hints", { hintsQueued: 4 }, { reason: "hints_pending", count: 4 }, { hints_pending: 4 }],
    ["queued migrations", { migrationsQueued: 3 }, { reason: "migrations_pending", count: 3 }, { migrations_pending: 3 }],
    ["keys the pass has not reached", { keysPassDone: false, keysUnsent: 120 }, { reason: "keys_unsent", count: 120 }, { migrations_pending: 120 }],
    ["keys without a live owner", { noLiveOwner: 7 }, { reason: "no_live_owner", count: 7 }, {}],
    ["queued read repairs", { repairsQueued: 2 }, { reason: "repairs_queued", count: 2 }, { repairs_queued: 2 }],
    ["writes and calls under way", { writesInFlight: 1, callsInFlight: 2 }, { reason: "in_flight", count: 3 }, { in_flight: 3 }],
  ];
  for (const [what, facts, blocker, counts] of rows) {
    it(`${what} blocks the stop`, () => {
      const s = drainStatus({ ...quiet, ...facts });
      expect(s.safe_to_stop).to.equal(false);
      expect(s.blockers).to.deep.equal([blocker]);
      expect(s).to.deep.include(counts);
    });
  }

  it("a cluster of one is safe at once, whatever it holds (nowhere to hand it)", () => {
    expect(drainStatus({ ...quiet, alone: true, keysPassDone: false, keysUnsent: 500, unconfirmedPeers: [] }).safe_to_stop).to.equal(true);
  });

  it("when every peer is leaving too (the whole cluster stops) the records held are no blocker: nobody can take them", () => {
    const held = { ...quiet, hintsQueued: 3, migrationsQueued: 23, noLiveOwner: 23, keysPassDone: false, keysUnsent: 40, repairsQueued: 2 };
    expect(drainStatus(held).safe_to_stop, "with a peer that failed (not leaving), they are").to.equal(false);
    const leaving = drainStatus({ ...held, peersLeaving: true });
    expect(leaving).to.deep.include({ safe_to_stop: true, blockers: [], hints_pending: 3 });
    expect(drainStatus({ ...held, peersLeaving: true, writesInFlight: 1 }).blockers, "writes under way still hold it").to.deep.equal([{ reason: "in_flight", count: 1 }]);
    expect(drainStatus({ ...held, peersLeaving: true, unconfirmedPeers: ["n2"] }).safe_to_stop, "and so do unconfirmed peers").to.equal(false);
  });
});
