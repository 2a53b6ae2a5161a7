// The quorum vote through the contact guard's looks, on a ManualClock: a node that lost sight of a
// majority (or was paused) abstains from quorum reads until it has seen a majority for the hold
// and a catch-up pass started after the hold has reached every peer. A starting node and a node
// alone in its cluster always vote.
import { expect } from "chai";
import { ContactGuard, QuorumVote, type ClusterView } from "../../../src/cluster/index.js";
import { LOG, recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import type { ShardedStore } from "../../../src/store/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const HEARTBEAT_MS = 1_000;
const HOLD_MS = 5_000;

function fixture(known = 5) {
  const clock = new ManualClock();
  const members = { alive: 1, known };
  const view: Pick<ClusterView, "notDeadCount" | "aliveCount" | "knownCount"> = {
    notDeadCount: () => members.alive,
    aliveCount: () => members.alive,
    knownCount: () => members.known,
  };
  const logger = recordingLogger("debug");
  const metrics = new Metrics();
  const catchUp = { requests: 0, caughtUp: true, request() { this.requests++; this.caughtUp = false; } };
  const vote = new QuorumVote({ holdMs: HOLD_MS, logger, metrics });
  vote.catchUpWith(catchUp);
  // The tombstone TTL is far away: the guard never drops data here.
  const guard = new ContactGuard({ clock, timers: clock, view, store: {} as ShardedStore, metrics, logger, tombstoneTtlMs: 3_600_000, intervalMs: HEARTBEAT_MS, vote });
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
  it("a starting node votes before it has seen a majority: catch-up at start-up covers a new node", () => {
    const f = fixture();
    f.clock.advance(10 * HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
    f.members.alive = 5;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting).to.equal(true);
    expect(f.catchUp.requests).to.equal(0);
  });

  it("a node that loses sight of a majority abstains; back in contact it abstains for the hold, then votes once a catch-up pass started after the hold is done", () => {
    const f = joined();
    f.members.alive = 2;
    f.clock.advance(HEARTBEAT_MS);
    expect(f.vote.voting, "on the minority side").to.equal(false);
    expect(f.metrics.get("dist.contact.abstentions")).to.equal(1);
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
    expect(f.messages()).to.deep.equal([LOG.quorumVoteSuspended, LOG.quorumVoteResumed]);
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
