// decideGossip, the pure SWIM decision for one gossiped entry, by table: claims about the local
// node (refuted above the claim only when suspect/dead at or above the local incarnation), a
// node's own claim about itself (accepted, also after it was pruned: that is how it rejoins),
// and third-party claims (never add a dead member, never resurrect a pruned one, "dead" taken as
// "suspect", higher incarnation wins, at equal incarnations suspicion overrides alive, lower
// ignored). isDeadBy, the dead window, by table too.
import { expect } from "chai";
import { decideGossip, isDeadBy, type GossipDecision, type Member, type MemberState } from "../../../src/membership/index.js";

const SELF = "me";

function member(id: string, state: MemberState, incarnation: number, address = `${id}:7946`): Member {
  return { id, address, state, incarnation, lastSeenMs: 0 };
}

interface Row {
  readonly why: string;
  readonly from: string;
  readonly claim: Member;
  readonly local: Member | undefined;
  readonly pruned?: boolean;
  readonly want: GossipDecision;
}

function check(rows: readonly Row[], selfIncarnation: number): void {
  for (const r of rows) {
    it(r.why, () => {
      expect(decideGossip(SELF, selfIncarnation, r.from, r.claim, r.local, r.pruned ?? false)).to.deep.equal(r.want);
    });
  }
}

describe("membership/transitions: decideGossip", () => {
  describe("claims about the local node (local incarnation 3)", () => {
    const self = member(SELF, "alive", 3);
    check(
      [
        { why: "suspect at the local incarnation is refuted with one above the claim", from: "a", claim: member(SELF, "suspect", 3), local: self, want: { kind: "refute", incarnation: 4 } },
        { why: "dead at the local incarnation is refuted with one above the claim", from: "a", claim: member(SELF, "dead", 3), local: self, want: { kind: "refute", incarnation: 4 } },
        { why: "suspect above the local incarnation is refuted strictly above the claim (not local + 1)", from: "a", claim: member(SELF, "suspect", 7), local: self, want: { kind: "refute", incarnation: 8 } },
        { why: "dead above the local incarnation is refuted strictly above the claim", from: "a", claim: member(SELF, "dead", 9), local: self, want: { kind: "refute", incarnation: 10 } },
        { why: "suspect below the local incarnation is stale: ignored", from: "a", claim: member(SELF, "suspect", 2), local: self, want: { kind: "ignore" } },
        { why: "dead below the local incarnation is stale: ignored", from: "a", claim: member(SELF, "dead", 1), local: self, want: { kind: "ignore" } },
        { why: "alive at any incarnation needs no refutation", from: "a", claim: member(SELF, "alive", 12), local: self, want: { kind: "ignore" } },
        { why: "alive at the local incarnation is ignored", from: "a", claim: member(SELF, "alive", 3), local: self, want: { kind: "ignore" } },
      ],
      3,
    );
  });

  describe("a node's own claim about itself (accepted: how a restarted or pruned node rejoins)", () => {
    check(
      [
        { why: "an unknown node is added alive at its incarnation and address", from: "b", claim: member("b", "alive", 1, "b-new:7946"), local: undefined, want: { kind: "add", state: "alive", incarnation: 1, address: "b-new:7946" } },
        { why: "a pruned node is added back (its own claim, not hearsay)", from: "b", claim: member("b", "alive", 1), local: undefined, pruned: true, want: { kind: "add", state: "alive", incarnation: 1, address: "b:7946" } },
        { why: "a suspect node becomes alive, keeping the higher local incarnation, at the address it reports", from: "b", claim: member("b", "alive", 1, "b-moved:7946"), local: member("b", "suspect", 4), want: { kind: "change", state: "alive", incarnation: 4, address: "b-moved:7946" } },
        { why: "a suspect node's claim above the local incarnation is taken", from: "b", claim: member("b", "alive", 6), local: member("b", "suspect", 4), want: { kind: "change", state: "alive", incarnation: 6, address: "b:7946" } },
        { why: "an alive node with a higher incarnation only refreshes (no state change)", from: "b", claim: member("b", "alive", 5), local: member("b", "alive", 2), want: { kind: "refresh", incarnation: 5 } },
        { why: "an alive node with a lower incarnation refreshes and keeps the local one", from: "b", claim: member("b", "alive", 1), local: member("b", "alive", 3), want: { kind: "refresh", incarnation: 3 } },
      ],
      1,
    );
  });

  describe("third-party claims (from another node)", () => {
    check(
      [
        { why: "an unknown alive member is added", from: "x", claim: member("c", "alive", 2), local: undefined, want: { kind: "add", state: "alive", incarnation: 2, address: "c:7946" } },
        { why: "an unknown suspect member is added as suspect", from: "x", claim: member("c", "suspect", 2), local: undefined, want: { kind: "add", state: "suspect", incarnation: 2, address: "c:7946" } },
        { why: "an unknown dead member is never added", from: "x", claim: member("c", "dead", 2), local: undefined, want: { kind: "ignore" } },
        { why: "a pruned member is never resurrected by hearsay, whatever its incarnation", from: "x", claim: member("c", "alive", 99), local: undefined, pruned: true, want: { kind: "ignore" } },
        { why: "a pruned member reported suspect is not added either", from: "x", claim: member("c", "suspect", 99), local: undefined, pruned: true, want: { kind: "ignore" } },
        { why: "a third-party dead at a higher incarnation is taken as suspect (local probes decide a death)", from: "x", claim: member("c", "dead", 5), local: member("c", "alive", 3), want: { kind: "change", state: "suspect", incarnation: 5, address: "c:7946" } },
        { why: "a third-party dead about a suspect member at a higher incarnation only refreshes", from: "x", claim: member("c", "dead", 5), local: member("c", "suspect", 3), want: { kind: "refresh", incarnation: 5 } },
        { why: "higher incarnation wins: alive to suspect", from: "x", claim: member("c", "suspect", 4), local: member("c", "alive", 3), want: { kind: "change", state: "suspect", incarnation: 4, address: "c:7946" } },
        { why: "higher incarnation wins: suspect to alive", from: "x", claim: member("c", "alive", 4), local: member("c", "suspect", 3), want: { kind: "change", state: "alive", incarnation: 4, address: "c:7946" } },
        { why: "higher incarnation in the same state refreshes", from: "x", claim: member("c", "alive", 4), local: member("c", "alive", 3), want: { kind: "refresh", incarnation: 4 } },
        { why: "a third-party change keeps the local address, not the claimed one", from: "x", claim: member("c", "suspect", 4, "elsewhere:1"), local: member("c", "alive", 3), want: { kind: "change", state: "suspect", incarnation: 4, address: "c:7946" } },
        { why: "equal incarnation: suspicion overrides alive", from: "x", claim: member("c", "suspect", 3), local: member("c", "alive", 3), want: { kind: "change", state: "suspect", incarnation: 3, address: "c:7946" } },
        { why: "equal incarnation: a dead claim (taken as suspect) overrides alive", from: "x", claim: member("c", "dead", 3), local: member("c", "alive", 3), want: { kind: "change", state: "suspect", incarnation: 3, address: "c:7946" } },
        { why: "equal incarnation: alive does not override suspicion", from: "x", claim: member("c", "alive", 3), local: member("c", "suspect", 3), want: { kind: "ignore" } },
        { why: "equal incarnation and state: ignored", from: "x", claim: member("c", "alive", 3), local: member("c", "alive", 3), want: { kind: "ignore" } },
        { why: "equal incarnation, both suspect: ignored", from: "x", claim: member("c", "suspect", 3), local: member("c", "suspect", 3), want: { kind: "ignore" } },
        { why: "lower incarnation ignored: stale alive about a suspect member", from: "x", claim: member("c", "alive", 2), local: member("c", "suspect", 3), want: { kind: "ignore" } },
        { why: "lower incarnation ignored: stale suspicion about an alive member", from: "x", claim: member("c", "suspect", 2), local: member("c", "alive", 3), want: { kind: "ignore" } },
        { why: "lower incarnation ignored: stale dead", from: "x", claim: member("c", "dead", 1), local: member("c", "alive", 3), want: { kind: "ignore" } },
      ],
      1,
    );
  });
});

describe("membership/transitions: isDeadBy (the dead window)", () => {
  const rows: Array<[lastProbeOkMs: number, nowMs: number, deadAfterMs: number, dead: boolean]> = [
    [1_000, 6_999, 6_000, false],
    [1_000, 7_000, 6_000, true],
    [1_000, 9_000, 6_000, true],
    [1_000, 1_000, 0, true],
    [5_000, 5_500, 1_000, false],
  ];
  for (const [last, now, after, dead] of rows) {
    it(`last ok ${last} ms, now ${now} ms, window ${after} ms: ${dead ? "dead" : "not yet dead"}`, () => {
      expect(isDeadBy(last, now, after)).to.equal(dead);
    });
  }
});
