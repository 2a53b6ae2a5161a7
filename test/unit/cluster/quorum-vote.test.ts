// The quorum vote through the contact guard's looks, on a ManualClock: a node that lost sight of a
// majority, was paused or whose view disagrees with its peers' abstains from quorum reads until it
// has seen a majority with agreeing views for the hold and a catch-up pass started after the hold
// has reached every peer. A started node votes once it sees a majority and its catch-up after the
// last ring change is done; a node alone in its cluster always votes.
import { expect } from "chai";
import { ContactGuard, QuorumVote, ViewsDisagreement, type ClusterView } from "../../../src/cluster/index.js";
import { LOG, recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import type { ShardedStore } from "../../../src/store/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const HEARTBEAT_MS = 1_000;
const HOLD_MS = 5_000;

function fixture(known = 5) {
  const clock = new ManualClock();
  const members = { alive: 1, known, disagree: false };
  const view: Pick<ClusterView, "notDeadCount" | "aliveCount" | "knownCount"> = {
    notDeadCount: () => members.alive,
    aliveCount: () => members.alive,
    knownCount: () => members.known,
  };
  const logger = recordingLogger("debug");
  const metrics = new Metrics();
  const catchUp = { requests: 0, caughtUp: true, request() { this.requests++; this.caughtUp = false; } };
  const vote = new QuorumVote({ holdMs: HOLD_MS, knownCount: () => members.known, majority: () => members.alive * 2 > members.known, logger, metrics });
  vote.catchUpWith(catchUp);
  // The tombstone TTL is far away: the guard never drops data here.
  const guard = new ContactGuard({ clock, timers: clock, view, store: {} as ShardedStore, metrics, logger, tombstoneTtlMs: 3_600_000, intervalMs: HEARTBEAT_MS, vote, viewsDisagree: () => members.disagree });
  guard.start();
  const messages = () => logger.records.map((r) => r.message).filter((m) => m === LOG.quorumVoteSuspended || m === LOG.quorumVoteResumed);
  return { clock, members, vote, guard, catchUp, metrics, messages };
}

/** A node of five that has joined (sees every node alive) and looked once. */
function joined() {
  const f = fixture();
  f.members.alive = 5;
  f.clock.advance(HEARTBEAT_MS);
  return f;
}

/** Lets the hold pass, checks the catch-up pass started (`requests` so far) and ends it: the node votes again. */
function holdThenCatchUp(f: ReturnType<typeof fixture>, requests: number): void {
  f.clock.advance(HOLD_MS + HEARTBEAT_MS);
  expect(f.catchUp.requests, "a catch-up pass started after the hold").to.equal(requests);
  f.catchUp.caughtUp = true;
  f.clock.advance(HEARTBEAT_MS);
  expect(f.vote.voting).to.equal(true);
}

describe("cluster/quorum vote", () => {
  it("a node that was never started (no start-up catch-up) votes", () => {
    const f = fixture();
    f.clock.advance(10 * HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
    expect(f.catchUp.requests).to.equal(0);
  });

  it("a started node (a restart with an empty memory) votes once it sees a majority and its catch-up after the last ring change is done", () => {
    const f = fixture();
    f.catchUp.request(); // node.start(): the start-up catch-up
    f.vote.starting();
    expect(f.vote.voting, "started, alone in its view").to.equal(false);
    f.catchUp.caughtUp = true; // a pass with no peer yet
    f.clock.advance(2 * HEARTBEAT_MS);
    expect(f.vote.voting, "caught up with nobody: it sees no majority").to.equal(false);
    f.members.alive = 5;
    f.catchUp.request(); // joining changes the ring: catch-up again
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting, "catching up from its peers").to.equal(false);
    f.catchUp.caughtUp = true;
    expect(f.vote.voting, "caught up between two looks").to.equal(true);
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
    expect(f.metrics.get("dist.contact.abstentions"), "starting is no suspension").to.equal(0);
  });

  it("a node whose view disagrees with its peers' (hearsay of a member it pruned) abstains until the views agreed for the hold and it caught up", () => {
    const f = joined();
    f.members.disagree = true;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(false);
    f.clock.advance(3 * HOLD_MS);
    expect(f.catchUp.requests, "no catch-up while the views disagree").to.equal(0);
    f.members.disagree = false;
    f.clock.advance(HEARTBEAT_MS);
    holdThenCatchUp(f, 1);
    expect(f.messages()).to.deep.equal([LOG.quorumVoteSuspended, LOG.quorumVoteResumed]);
  });

  it("a node left alone by a manual removal votes again (its own copy is the whole quorum)", () => {
    const f = fixture(2);
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    f.members.alive = 1; // the other node died: a minority of 2
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(false);
    f.members.known = 1; // removed by hand
    expect(f.vote.voting).to.equal(true);
    f.clock.advance(HEARTBEAT_MS);
    f.members.known = 2; // a new node joins: no catch-up owed for the time alone
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
  });

  it("a node that loses sight of a majority abstains; back in contact it abstains for the hold, then votes once a catch-up pass started after the hold is done", () => {
    const f = joined();
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting, "on the minority side").to.equal(false);
    expect(f.metrics.get("dist.contact.abstentions")).to.equal(1);
    expect(f.metrics.get("dist.contact.voting"), "the gauge").to.equal(0);
    f.clock.advance(20 * HEARTBEAT_MS);
    f.members.alive = 3;
    f.clock.advance(HEARTBEAT_MS); // sees a majority again: the hold starts
    f.clock.advance(HOLD_MS - HEARTBEAT_MS);
    expect(f.vote.voting, "during the hold").to.equal(false);
    expect(f.catchUp.requests, "no catch-up during the hold").to.equal(0);
    f.clock.advance(HEARTBEAT_MS);
    expect(f.catchUp.requests, "the hold is over: a catch-up pass starts").to.equal(1);
    expect(f.vote.voting).to.equal(false);
    f.clock.advance(3 * HEARTBEAT_MS);
    expect(f.vote.voting, "the pass has not reached every peer").to.equal(false);
    f.catchUp.caughtUp = true;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
    expect(f.metrics.get("dist.contact.voting"), "the gauge").to.equal(1);
    expect(f.messages()).to.deep.equal([LOG.quorumVoteSuspended, LOG.quorumVoteResumed]);
  });

  it("what a node stores counts as a write acknowledgement unless it lost contact and has not caught up since; a starting node's does", () => {
    const started = fixture();
    started.catchUp.request();
    started.vote.starting();
    expect([started.vote.voting, started.vote.acknowledges], "starting: its reads abstain, its acknowledgements count").to.deep.equal([false, true]);
    const f = joined();
    expect(f.vote.acknowledges).to.equal(true);
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.acknowledges, "on the minority side").to.equal(false);
    f.members.alive = 3;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.acknowledges, "sees a majority again, in the hold: its ring may still be the minority's").to.equal(false);
    f.clock.advance(HOLD_MS);
    expect(f.vote.acknowledges, "catching up").to.equal(false);
    f.catchUp.caughtUp = true;
    f.clock.advance(HEARTBEAT_MS);
    expect([f.vote.voting, f.vote.acknowledges]).to.deep.equal([true, true]);
    expect(fixture(1).vote.acknowledges, "alone: nothing to miss").to.equal(true);
  });

  it("losing the majority again during the hold or the catch-up starts over", () => {
    const f = joined();
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    f.members.alive = 3;
    f.clock.advance(HOLD_MS - HEARTBEAT_MS); // most of the hold
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    f.members.alive = 3;
    f.clock.advance(HOLD_MS - HEARTBEAT_MS);
    expect(f.catchUp.requests, "the hold started over").to.equal(0);
    f.clock.advance(2 * HEARTBEAT_MS);
    expect(f.catchUp.requests).to.equal(1);
    f.members.alive = 2; // lost again while catching up
    f.clock.advance(HEARTBEAT_MS);
    f.catchUp.caughtUp = true;
    f.members.alive = 5;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting, "a pass from before the new hold does not count").to.equal(false);
    holdThenCatchUp(f, 2);
    expect(f.metrics.get("dist.contact.abstentions"), "one suspension, however often it lost contact in it").to.equal(1);
  });

  it("a paused node (its looks stopped for more than 3 heartbeats) abstains until it has caught up, though it sees a majority", () => {
    const f = joined();
    // A SIGSTOP: no timer runs, then the clock has moved on (the first look after it sees the gap).
    f.clock.jump(8_000);
    f.clock.advance(0);
    expect(f.vote.voting, "resumed after a pause").to.equal(false);
    holdThenCatchUp(f, 1);
    // Looks a heartbeat apart, or a peer's request in between, are no pause.
    f.guard.check();
    f.clock.advance(3 * HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
  });

  it("a node alone in its cluster always votes, paused or not", () => {
    const f = fixture(1);
    f.clock.advance(HEARTBEAT_MS);
    f.clock.jump(60_000);
    f.clock.advance(0);
    expect(f.vote.voting).to.equal(true);
    expect(f.catchUp.requests).to.equal(0);
  });
});

describe("cluster/quorum vote: views that lastingly disagree", () => {
  const WINDOW_MS = 5_000;
  const PERSIST_MS = 4_000;
  const T0 = Date.UTC(2026, 0, 1);

  it("hearsay of a pruned member for a second or two (a rejoin under way) is no disagreement", () => {
    const d = new ViewsDisagreement(WINDOW_MS, PERSIST_MS);
    expect(d.disagree(0, T0)).to.equal(false);
    for (const t of [0, 1_000, 2_000]) expect(d.disagree(T0 + t, T0 + t), `heard at ${t}`).to.equal(false);
    expect(d.disagree(T0 + 2_000, T0 + 10_000)).to.equal(false);
  });

  it("hearsay again and again for 4 s (a bridge) is, until none came for the window", () => {
    const d = new ViewsDisagreement(WINDOW_MS, PERSIST_MS);
    const heard = [0, 1_500, 2_500, 4_000, 6_000];
    const seen = heard.map((t) => d.disagree(T0 + t, T0 + t));
    expect(seen).to.deep.equal([false, false, false, true, true]);
    expect(d.disagree(T0 + 6_000, T0 + 6_000 + WINDOW_MS - 1)).to.equal(true);
    expect(d.disagree(T0 + 6_000, T0 + 6_000 + WINDOW_MS)).to.equal(false);
  });

  it("a silence longer than the window starts a new episode", () => {
    const d = new ViewsDisagreement(WINDOW_MS, PERSIST_MS);
    d.disagree(T0, T0);
    d.disagree(T0 + 3_000, T0 + 3_000);
    expect(d.disagree(T0 + 9_000, T0 + 9_000), "6 s after the last: a new episode").to.equal(false);
    expect(d.disagree(T0 + 12_000, T0 + 12_000)).to.equal(false);
    expect(d.disagree(T0 + 13_000, T0 + 13_000)).to.equal(true);
  });
});
