// MemberTable against every row of SPEC.md's peer-membership table, with the exact log records
// and dist.* metrics: alive -> suspect, suspect -> dead and pruned, self-refutation above the
// claim, manual removal, same-state marks (last-seen only), real changes (incarnation, version,
// observers once, after the commit); knownCount with pruned and removed peers; the gauges.
import { expect } from "chai";
import { LOG, recordingLogger, type RecordingLogger } from "../../../src/log/index.js";
import { MemberTable, type Member } from "../../../src/membership/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

interface Fixture {
  readonly clock: ManualClock;
  readonly metrics: Metrics;
  readonly logger: RecordingLogger;
  readonly members: MemberTable;
  /** Snapshots passed to the observer, one per call. */
  readonly calls: Array<readonly Member[]>;
  /** "level message" of every record so far. */
  records(): string[];
}

function fixture(peers: readonly string[] = []): Fixture {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  const members = new MemberTable({ selfId: "me", selfAddress: "me:7946", clock, metrics, logger });
  for (const p of peers) members.addPeer(p, `${p}:7946`);
  const calls: Array<readonly Member[]> = [];
  members.onChange(() => calls.push(members.list()));
  logger.records.length = 0;
  return { clock, metrics, logger, members, calls, records: () => logger.records.map((r) => `${r.level} ${r.message}`) };
}

/** The fields that must not move on a same-state mark. */
function frozenPart(f: Fixture, id: string) {
  const m = f.members.get(id);
  return { state: m?.state, incarnation: m?.incarnation, version: f.members.version, observerCalls: f.calls.length, records: f.logger.records.length };
}

describe("membership/member-table", () => {
  describe("start and peers added", () => {
    it("starts with the local node alive at incarnation 1, membership version 1, and the gauges set", () => {
      const f = fixture();
      expect(f.members.get("me")).to.include({ id: "me", address: "me:7946", state: "alive", incarnation: 1 });
      expect(f.members.selfIncarnation).to.equal(1);
      expect(f.members.version).to.equal(1);
      expect(f.members.knownCount()).to.equal(1);
      expect(f.metrics.get("dist.members.alive")).to.equal(1);
      expect(f.metrics.get("dist.nodes.suspect")).to.equal(0);
      expect(f.metrics.get("dist.membership.version")).to.equal(1);
    });

    it("get hands out the same frozen member while its entry is unchanged, and a new one showing each change", () => {
      const f = fixture(["a"]);
      const first = f.members.get("a");
      expect(Object.isFrozen(first)).to.equal(true);
      expect(f.members.get("a")).to.equal(first);
      f.clock.advance(1_000);
      f.members.probeSucceeded("a");
      const seen = f.members.get("a");
      expect(seen).to.not.equal(first);
      expect(seen?.lastSeenMs).to.equal(f.clock.nowMs());
      f.members.markSuspect("a");
      expect(f.members.get("a")).to.include({ state: "suspect", incarnation: 2 });
      f.members.addPeer("a", "a2:7946");
      expect(f.members.get("a")?.address).to.equal("a2:7946");
      f.members.merge("a", [{ id: "a", address: "a2:7946", state: "alive", incarnation: 5, lastSeenMs: 0, apiUrl: "http://a2:8080", mgmtUrl: "http://a2:9090" }]);
      expect(f.members.get("a")).to.include({ state: "alive", incarnation: 5, apiUrl: "http://a2:8080", mgmtUrl: "http://a2:9090" });
      const self = f.members.get("me");
      expect(self?.draining).to.equal(undefined);
      f.members.startDraining();
      expect(f.members.get("me")?.draining).to.equal(true);
      f.members.remove("a");
      expect(f.members.get("a")).to.equal(undefined);
    });

    it("addPeer adds a new peer alive with info 'peer added to membership', bumps the version and fires observers once", () => {
      const f = fixture();
      expect(f.members.addPeer("a", "a:7946")).to.equal(true);
      expect(f.members.get("a")).to.include({ state: "alive", incarnation: 1, address: "a:7946" });
      expect(f.records()).to.deep.equal([`info ${LOG.peerAdded}`]);
      expect(f.logger.records[0]!.fields).to.include({ peer: "a", address: "a:7946" });
      expect(f.members.version).to.equal(2);
      expect(f.calls).to.have.length(1);
      expect(f.calls[0]!.map((m) => m.id)).to.deep.equal(["a", "me"]);
      expect(f.members.knownCount()).to.equal(2);
      expect(f.metrics.get("dist.members.alive")).to.equal(2);
      expect(f.metrics.get("dist.membership.version")).to.equal(2);
    });

    it("addPeer of a known peer, of the local node or of an empty id changes nothing (a new address is taken silently)", () => {
      const f = fixture(["a"]);
      expect(f.members.addPeer("a", "a2:7946")).to.equal(false);
      expect(f.members.addPeer("me", "x:1")).to.equal(false);
      expect(f.members.addPeer("", "x:1")).to.equal(false);
      expect(f.members.get("a")?.address).to.equal("a2:7946");
      expect(f.members.version).to.equal(2);
      expect(f.calls).to.have.length(0);
      expect(f.records()).to.deep.equal([]);
    });
  });

  describe("alive -> suspect (probe failed, no indirect probe succeeded)", () => {
    it("logs warn 'peer marked suspect (timeout)', bumps the peer's incarnation and the version, and moves the gauges", () => {
      const f = fixture(["a", "b"]);
      f.clock.advance(1_500);
      f.members.markSuspect("a");
      expect(f.members.get("a")).to.include({ state: "suspect", incarnation: 2, lastSeenMs: f.clock.nowMs() });
      expect(f.records()).to.deep.equal([`warn ${LOG.peerSuspect}`]);
      expect(f.logger.records[0]!.fields).to.include({ peer: "a", incarnation: 2 });
      expect(f.members.version).to.equal(4);
      expect(f.metrics.get("dist.members.alive")).to.equal(2);
      expect(f.metrics.get("dist.nodes.suspect")).to.equal(1);
      expect(f.metrics.get("dist.membership.version")).to.equal(4);
    });

    it("fires observers exactly once, after the change is committed (the observer already reads the new state and version)", () => {
      const f = fixture(["a"]);
      const seen: Array<{ state: string | undefined; version: number; suspectGauge: number }> = [];
      f.members.onChange(() => seen.push({ state: f.members.get("a")?.state, version: f.members.version, suspectGauge: f.metrics.get("dist.nodes.suspect") }));
      f.members.markSuspect("a");
      expect(seen).to.deep.equal([{ state: "suspect", version: 3, suspectGauge: 1 }]);
      expect(f.calls).to.have.length(1);
      expect(f.calls[0]!.find((m) => m.id === "a")?.state).to.equal("suspect");
    });

    it("markSuspect of an unknown peer or of the local node does nothing", () => {
      const f = fixture(["a"]);
      f.members.markSuspect("zz");
      f.members.markSuspect("me");
      expect(f.members.get("me")?.state).to.equal("alive");
      expect(f.members.version).to.equal(2);
      expect(f.records()).to.deep.equal([]);
    });
  });

  describe("probe success or a mark to the same state: last-seen only", () => {
    it("a probe success on an alive peer refreshes last-seen; incarnation, version and observers unchanged (even with a higher reported incarnation)", () => {
      const f = fixture(["a"]);
      const before = frozenPart(f, "a");
      f.clock.advance(2_000);
      f.members.probeSucceeded("a", 7);
      expect(f.members.get("a")?.lastSeenMs).to.equal(f.clock.nowMs());
      expect(frozenPart(f, "a")).to.deep.equal(before);
      expect(f.metrics.get("dist.membership.version")).to.equal(before.version);
    });

    it("marking a suspect peer suspect again refreshes last-seen only: no record, no bump, no observer call", () => {
      const f = fixture(["a"]);
      f.members.markSuspect("a");
      const before = frozenPart(f, "a");
      f.clock.advance(1_000);
      f.members.markSuspect("a");
      expect(f.members.get("a")?.lastSeenMs).to.equal(f.clock.nowMs());
      expect(frozenPart(f, "a")).to.deep.equal(before);
    });

    it("a gossip claim in the same state refreshes last-seen without a version bump", () => {
      const f = fixture(["a"]);
      const before = f.members.version;
      f.clock.advance(500);
      expect(f.members.merge("a", [{ id: "a", address: "a:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }])).to.equal(false);
      expect(f.members.get("a")).to.include({ state: "alive", incarnation: 1, lastSeenMs: f.clock.nowMs() });
      expect(f.members.version).to.equal(before);
      expect(f.calls).to.have.length(0);
    });
  });

  describe("suspect -> alive (real change)", () => {
    it("a probe success on a suspect peer bumps its incarnation and the version and fires observers once", () => {
      const f = fixture(["a"]);
      f.members.markSuspect("a");
      f.calls.length = 0;
      const version = f.members.version;
      f.members.probeSucceeded("a", 1);
      expect(f.members.get("a")).to.include({ state: "alive", incarnation: 3 });
      expect(f.members.version).to.equal(version + 1);
      expect(f.calls).to.have.length(1);
      expect(f.metrics.get("dist.nodes.suspect")).to.equal(0);
      expect(f.metrics.get("dist.members.alive")).to.equal(2);
    });

    it("takes the incarnation the peer reports when it is higher than the local bump", () => {
      const f = fixture(["a"]);
      f.members.markSuspect("a");
      f.members.probeSucceeded("a", 9);
      expect(f.members.get("a")).to.include({ state: "alive", incarnation: 9 });
    });
  });

  describe("suspect -> dead, pruned (suspect window exceeded)", () => {
    it("overdueSuspects names suspects without a successful probe for SERVICE_DEAD_AFTER, counted from the last successful probe", () => {
      const f = fixture(["a", "b"]);
      f.clock.advance(1_000);
      f.members.probeSucceeded("a");
      f.members.probeSucceeded("b");
      f.clock.advance(1_000);
      f.members.markSuspect("a");
      f.members.markSuspect("b");
      f.clock.advance(4_999);
      expect(f.members.overdueSuspects(6_000)).to.deep.equal([]);
      f.clock.advance(1);
      expect(f.members.overdueSuspects(6_000)).to.have.members(["a", "b"]);
      expect(f.members.overdueSuspects(6_001)).to.deep.equal([]);
    });

    it("alive peers are never overdue, however long ago they were probed", () => {
      const f = fixture(["a"]);
      f.clock.advance(60_000);
      expect(f.members.overdueSuspects(6_000)).to.deep.equal([]);
    });

    it("prune logs warn 'peer pruned (dead)' then info 'peer removed from membership', counts dist.nodes.dead and dist.nodes.removed", () => {
      const f = fixture(["a", "b"]);
      f.members.markSuspect("a");
      f.calls.length = 0;
      const version = f.members.version;
      expect(f.members.prune("a")).to.equal(true);
      expect(f.records()).to.deep.equal([`warn ${LOG.peerSuspect}`, `warn ${LOG.peerPruned}`, `info ${LOG.peerRemoved}`]);
      expect(f.logger.records[1]!.fields).to.include({ peer: "a" });
      expect(f.logger.records[2]!.fields).to.include({ peer: "a" });
      expect(f.members.get("a")).to.equal(undefined);
      expect(f.metrics.get("dist.nodes.dead")).to.equal(1);
      expect(f.metrics.get("dist.nodes.removed")).to.equal(1);
      expect(f.metrics.get("dist.nodes.suspect")).to.equal(0);
      expect(f.metrics.get("dist.members.alive")).to.equal(2);
      expect(f.members.version).to.equal(version + 1);
      expect(f.metrics.get("dist.membership.version")).to.equal(version + 1);
      expect(f.calls).to.have.length(1);
      expect(f.calls[0]!.map((m) => m.id)).to.deep.equal(["b", "me"]);
    });

    it("a pruned peer leaves the ring members and the not-dead count but still counts as known", () => {
      const f = fixture(["a", "b"]);
      f.members.markSuspect("a");
      expect(f.members.ringMembers(), "a suspect keeps its ring position").to.have.members(["me", "a", "b"]);
      expect(f.members.aliveCount(), "a suspect is not alive").to.equal(2);
      expect(f.members.notDeadCount()).to.equal(3);
      f.members.prune("a");
      expect(f.members.ringMembers()).to.have.members(["me", "b"]);
      expect(f.members.notDeadCount()).to.equal(2);
      expect(f.members.knownCount()).to.equal(3);
    });

    it("prune of an unknown peer or of the local node is refused", () => {
      const f = fixture(["a"]);
      expect(f.members.prune("zz")).to.equal(false);
      expect(f.members.prune("me")).to.equal(false);
      expect(f.metrics.get("dist.nodes.dead")).to.equal(0);
      expect(f.records()).to.deep.equal([]);
    });
  });

  describe("manual removal", () => {
    it("removing an alive peer logs only info 'peer removed from membership' (no pruned record) and lowers the known count", () => {
      const f = fixture(["a", "b"]);
      const version = f.members.version;
      expect(f.members.remove("a")).to.equal(true);
      expect(f.records()).to.deep.equal([`info ${LOG.peerRemoved}`]);
      expect(f.logger.records[0]!.fields).to.include({ peer: "a" });
      expect(f.members.get("a")).to.equal(undefined);
      expect(f.members.knownCount()).to.equal(2);
      expect(f.metrics.get("dist.nodes.dead")).to.equal(0);
      expect(f.metrics.get("dist.nodes.removed")).to.equal(1);
      expect(f.members.version).to.equal(version + 1);
      expect(f.calls).to.have.length(1);
    });

    it("removing a suspect peer logs only the removed record too", () => {
      const f = fixture(["a"]);
      f.members.markSuspect("a");
      f.logger.records.length = 0;
      f.members.remove("a");
      expect(f.records()).to.deep.equal([`info ${LOG.peerRemoved}`]);
      expect(f.metrics.get("dist.nodes.suspect")).to.equal(0);
    });

    it("knownCount counts a pruned peer until it is removed by hand; the removal logs the removed record and bumps the version", () => {
      const f = fixture(["a", "b"]);
      f.members.markSuspect("a");
      f.members.prune("a");
      expect(f.members.knownCount()).to.equal(3);
      f.logger.records.length = 0;
      const version = f.members.version;
      expect(f.members.remove("a")).to.equal(true);
      expect(f.members.knownCount()).to.equal(2);
      expect(f.records()).to.deep.equal([`info ${LOG.peerRemoved}`]);
      expect(f.members.version).to.equal(version + 1);
      expect(f.members.remove("a"), "a second removal finds nothing").to.equal(false);
    });

    it("removing a pruned peer learned by gossip alone is a removal too (true, logged): it had answered 404 while removing it", () => {
      const f = fixture(["b"]);
      f.members.merge("b", [{ id: "c", address: "c:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }]);
      f.members.markSuspect("c");
      f.members.prune("c");
      expect(f.members.absentPeers().map((p) => p.id)).to.deep.equal(["c"]);
      f.logger.records.length = 0;
      expect(f.members.remove("c")).to.equal(true);
      expect(f.records()).to.deep.equal([`info ${LOG.peerRemoved}`]);
      expect(f.members.absentPeers()).to.deep.equal([]);
      expect(f.members.isRemoved("c")).to.equal(true);
      expect(f.members.remove("c"), "a second removal finds nothing").to.equal(false);
    });

    it("a removed peer is not re-added from hearsay (another peer still listing it), only by its own claim", () => {
      const f = fixture(["a", "b"]);
      f.members.remove("a");
      f.members.merge("b", [{ id: "a", address: "a:7946", state: "suspect", incarnation: 2, lastSeenMs: 0 }]);
      expect(f.members.get("a"), "hearsay after a manual removal").to.equal(undefined);
      expect(f.members.knownCount()).to.equal(2);
      f.members.merge("a", [{ id: "a", address: "a:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }]);
      expect(f.members.get("a")?.state, "the node's own claim").to.equal("alive");
    });

    it("the local node and unknown ids cannot be removed", () => {
      const f = fixture(["a"]);
      expect(f.members.remove("me")).to.equal(false);
      expect(f.members.remove("nobody")).to.equal(false);
      expect(f.members.knownCount()).to.equal(2);
      expect(f.records()).to.deep.equal([]);
    });

    it("removing an id that was never a member records nothing: hearsay about it later still adds it", () => {
      const f = fixture(["a", "b"]);
      expect(f.members.remove("stranger")).to.equal(false);
      expect(f.members.isRemoved("stranger"), "no removal recorded").to.equal(false);
      f.members.merge("b", [{ id: "stranger", address: "stranger:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }]);
      expect(f.members.get("stranger")?.state).to.equal("alive");
    });
  });

  describe("addresses: a claim with an unspecified host never replaces a known address", () => {
    for (const unspecified of [":7946", "0.0.0.0:7946", "[::]:7946"]) {
      it(`a peer's own claim with ${unspecified} keeps the address this node reached it at (refresh and change alike)`, () => {
        const f = fixture(["a"]);
        f.members.merge("a", [{ id: "a", address: unspecified, state: "alive", incarnation: 1, lastSeenMs: 0 }]);
        expect(f.members.get("a")?.address, "refresh").to.equal("a:7946");
        f.members.markSuspect("a");
        f.members.merge("a", [{ id: "a", address: unspecified, state: "alive", incarnation: 3, lastSeenMs: 0 }]);
        expect(f.members.get("a")).to.deep.include({ address: "a:7946", state: "alive" });
      });

      it(`an unknown member claiming ${unspecified} is not added (nobody could dial it); a claim with a real address adds it`, () => {
        const f = fixture(["b"]);
        f.members.merge("c", [{ id: "c", address: unspecified, state: "alive", incarnation: 1, lastSeenMs: 0 }]);
        expect(f.members.get("c")).to.equal(undefined);
        f.members.merge("b", [{ id: "c", address: "10.0.0.3:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }]);
        expect(f.members.get("c")?.address).to.equal("10.0.0.3:7946");
      });
    }

    it("a real new address from the peer itself still replaces the old one (a node that moved)", () => {
      const f = fixture(["a"]);
      f.members.merge("a", [{ id: "a", address: "10.0.0.9:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }]);
      expect(f.members.get("a")?.address).to.equal("10.0.0.9:7946");
    });
  });

  describe("self-refutation (a claim about the local node)", () => {
    const claim = (state: "suspect" | "dead", incarnation: number): Member => ({ id: "me", address: "me:7946", state, incarnation, lastSeenMs: 0 });

    it("a suspect claim at the local incarnation: info 'self-refuted suspect/dead claim from peer', incarnation strictly above the claim, still alive", () => {
      const f = fixture(["a"]);
      expect(f.members.merge("a", [claim("suspect", 1)])).to.equal(true);
      expect(f.members.get("me")).to.include({ state: "alive", incarnation: 2 });
      expect(f.members.selfIncarnation).to.equal(2);
      expect(f.records()).to.deep.equal([`info ${LOG.selfRefuted}`]);
      expect(f.logger.records[0]!.fields).to.include({ from: "a", claimed_state: "suspect", claimed_incarnation: 1, incarnation: 2 });
      expect(f.calls).to.have.length(1);
    });

    it("a dead claim above the local incarnation is refuted above the claim, not just above the local incarnation", () => {
      const f = fixture(["a"]);
      f.members.merge("a", [claim("dead", 6)]);
      expect(f.members.selfIncarnation).to.equal(7);
      expect(f.members.get("me")?.state).to.equal("alive");
    });

    it("a claim below the local incarnation is stale: no refutation, no record", () => {
      const f = fixture(["a"]);
      f.members.merge("a", [claim("suspect", 4)]);
      f.logger.records.length = 0;
      const version = f.members.version;
      expect(f.members.merge("a", [claim("suspect", 4)])).to.equal(false);
      expect(f.members.selfIncarnation).to.equal(5);
      expect(f.members.version).to.equal(version);
      expect(f.records()).to.deep.equal([]);
    });
  });

  describe("rejoin of a pruned node", () => {
    it("the node's own claim adds it back (info 'peer added to membership'); the known count does not grow twice", () => {
      const f = fixture(["a", "b"]);
      f.members.markSuspect("a");
      f.members.prune("a");
      f.logger.records.length = 0;
      expect(f.members.merge("a", [{ id: "a", address: "a:7946", state: "alive", incarnation: 1, lastSeenMs: 0 }])).to.equal(true);
      expect(f.members.get("a")).to.include({ state: "alive" });
      expect(f.records()).to.deep.equal([`info ${LOG.peerAdded}`]);
      expect(f.members.knownCount()).to.equal(3);
    });

    it("hearsay about a pruned node (from another peer) does not bring it back", () => {
      const f = fixture(["a", "b"]);
      f.members.markSuspect("a");
      f.members.prune("a");
      const version = f.members.version;
      expect(f.members.merge("b", [{ id: "a", address: "a:7946", state: "alive", incarnation: 50, lastSeenMs: 0 }])).to.equal(false);
      expect(f.members.get("a")).to.equal(undefined);
      expect(f.members.version).to.equal(version);
    });
  });
});
