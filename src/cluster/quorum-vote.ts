// Whether this node's copies count towards quorum reads: its own copy when it coordinates one, and
// its answers to peers' Get calls (GetResult.abstains).
//
// A node that lost sight of a majority of the known nodes (the minority side of a partition, an
// isolated node, a paused process) missed what the majority acknowledged meanwhile, deletes
// included, on keys it owns: the majority re-owned them or queued hints. After the heal two such
// nodes can make up a quorum of a key's owners and answer the value the majority deleted. So from
// the loss until it has caught up the node abstains: once it sees a majority again it waits
// `holdMs` (the other nodes re-add it and the ring views settle), then runs a catch-up pass
// (Merkle syncs with every alive peer) and votes again once a pass reached every peer.
//
// A node that never saw a majority yet (starting up) votes: a new node is caught up by its
// start-up catch-up, which readiness waits for.
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";

/** The catch-up passes a returning node runs before it votes again (CatchUp). */
export interface CatchUpPass {
  request(): void;
  readonly caughtUp: boolean;
}

export interface QuorumVoteDeps {
  /** How long after seeing a majority again the node waits before its catch-up pass. */
  readonly holdMs: number;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

type VoteState = "voting" | "lost" | "holding" | "catching-up";

export class QuorumVote {
  private state: VoteState = "voting";
  private seenMajority = false;
  private regainedAtMs = 0;
  private catchUp: CatchUpPass | undefined;

  constructor(private readonly deps: QuorumVoteDeps) {}

  /** Wiring: the catch-up this node runs before it votes again (none: it votes after the hold). */
  catchUpWith(pass: CatchUpPass): void {
    this.catchUp = pass;
  }

  /** True when this node's copies count towards quorum reads. */
  get voting(): boolean {
    return this.state === "voting";
  }

  /**
   * One look at this node's contact (ContactGuard.check). `majority`: it sees a strict majority of
   * the known nodes alive. `paused`: the looks stopped for longer than they should (the process
   * was stopped or its event loop blocked), so it may have missed writes like a partitioned node.
   * `monoMs`: the monotonic clock.
   */
  observe(majority: boolean, paused: boolean, monoMs: number): void {
    if (!majority) {
      if (this.seenMajority) this.lose("minority");
      return;
    }
    if (paused && this.seenMajority) this.lose("paused");
    this.seenMajority = true;
    switch (this.state) {
      case "voting":
        return;
      case "lost":
        this.state = "holding";
        this.regainedAtMs = monoMs;
        return;
      case "holding":
        if (monoMs - this.regainedAtMs < this.deps.holdMs) return;
        this.state = "catching-up";
        this.catchUp?.request();
        return;
      case "catching-up":
        if (this.catchUp !== undefined && !this.catchUp.caughtUp) return;
        this.state = "voting";
        this.deps.logger.info(LOG.quorumVoteResumed, {});
        return;
    }
  }

  private lose(reason: "minority" | "paused"): void {
    if (this.state === "voting") {
      this.deps.metrics.inc("dist.contact.abstentions");
      this.deps.logger.info(LOG.quorumVoteSuspended, { reason });
    }
    this.state = "lost";
  }
}
