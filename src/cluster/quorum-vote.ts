// Whether this node's copies count towards quorum reads: its own copy when it coordinates one, and
// its answers to peers' Get calls (GetResult.abstains).
//
// A node may hold copies that miss what a majority acknowledged:
// - it lost sight of a majority of the known nodes (the minority side of a partition, an isolated
//   node) or was paused: the majority re-owned its keys or queued hints meanwhile, deletes
//   included. After the heal two such nodes can make up a quorum of a key's owners and answer the
//   value the majority deleted;
// - its view lastingly disagrees with its peers' (peers keep gossiping as alive a member this node
//   pruned, for longer than a rejoin takes: ViewsDisagreement): the two see different owners for
//   some keys, as on both sides of a bridge (A-B-C, where A and C each see a majority through B);
// - it has just started (a restart comes back with an empty memory).
// So from such a moment until it has caught up the node abstains: once it sees a majority with
// agreeing views again it waits `holdMs` (the others re-add it and the views settle), then runs a
// catch-up pass (Merkle syncs with every alive or suspect peer in its view) and votes again once
// that pass reached every one of them. A started node votes once it sees a majority and its
// catch-up after the last ring change is done (no hold: nothing of its own to distrust). A node
// alone in its cluster always votes.
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";

/** The catch-up passes a node runs before it votes (CatchUp). */
export interface CatchUpPass {
  request(): void;
  /** A pass reached every peer since the last request (start-up or ring change). */
  readonly caughtUp: boolean;
}

export interface QuorumVoteDeps {
  /** How long after seeing a majority with agreeing views again the node waits before its catch-up pass. */
  readonly holdMs: number;
  /** The nodes this node has seen in its cluster (ClusterView.knownCount). */
  readonly knownCount: () => number;
  /** True while this node sees a strict majority of the known nodes alive. */
  readonly majority: () => boolean;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** One look at this node's contact (ContactGuard.check); whether it sees a majority is deps.majority(). */
export interface ContactLook {
  /** The looks stopped for longer than they should: the process was stopped or its loop blocked. */
  readonly paused: boolean;
  /** Peers keep gossiping as alive members this node pruned (ViewsDisagreement). */
  readonly viewsDisagree: boolean;
  /** The monotonic clock. */
  readonly monoMs: number;
}

type VoteState = "voting" | "starting" | "lost" | "holding" | "catching-up";

export class QuorumVote {
  private state: VoteState = "voting";
  private seenMajority = false;
  private regainedAtMs = 0;
  private catchUp: CatchUpPass | undefined;

  constructor(private readonly deps: QuorumVoteDeps) {
    deps.metrics.set("dist.contact.voting", 1);
  }

  /** Wiring: the catch-up this node runs before it votes (none: it votes after the hold). */
  catchUpWith(pass: CatchUpPass): void {
    this.catchUp = pass;
  }

  /** The node starts (node.start()): it votes once it sees a majority and has caught up. */
  starting(): void {
    if (this.state === "voting") this.enter("starting");
  }

  /** True when this node's copies count towards quorum reads. */
  get voting(): boolean {
    if (this.state === "voting" || this.deps.knownCount() <= 1) return true;
    // A starting node's catch-up may end between two looks.
    return this.state === "starting" && this.deps.majority() && this.caughtUp();
  }

  /**
   * Whether what this node stores now counts as a write acknowledgement: false from losing
   * contact (the minority side, a pause, views that disagree) until it has caught up. Back from
   * the minority side its ring is the minority's for a moment after it sees a majority again, so
   * a write acknowledged by such owners can be missed by every quorum read of the majority (chaos
   * seed 3131). A starting node acknowledges: what it stores of a new write it holds (it lost
   * older writes, which is why its reads abstain), and a new cluster's nodes all start at once.
   */
  get acknowledges(): boolean {
    if (this.deps.knownCount() <= 1) return true;
    return this.state === "voting" || this.state === "starting";
  }

  /** Follows one look at this node's contact (see the file comment). */
  observe(look: ContactLook): void {
    if (this.deps.knownCount() <= 1) {
      // Alone (a single node, or the others removed by hand): nothing to miss.
      this.enter("voting");
      return;
    }
    if (!this.deps.majority()) {
      if (this.seenMajority && this.state !== "starting") this.lose("minority");
      return;
    }
    if (look.paused && this.seenMajority) this.lose("paused");
    this.seenMajority = true;
    if (look.viewsDisagree) this.lose("views-disagree");
    switch (this.state) {
      case "voting":
        return;
      case "starting":
        if (this.caughtUp()) this.enter("voting");
        return;
      case "lost":
        this.enter("holding");
        this.regainedAtMs = look.monoMs;
        return;
      case "holding":
        if (look.monoMs - this.regainedAtMs < this.deps.holdMs) return;
        this.enter("catching-up");
        this.catchUp?.request();
        return;
      case "catching-up":
        if (!this.caughtUp()) return;
        this.enter("voting");
        this.deps.logger.info(LOG.quorumVoteResumed, {});
        return;
    }
  }

  /** Moves to `state`; the gauge dist.contact.voting says whether this node votes (1) or not (0). */
  private enter(state: VoteState): void {
    this.state = state;
    this.deps.metrics.set("dist.contact.voting", state === "voting" ? 1 : 0);
  }

  private caughtUp(): boolean {
    return this.catchUp === undefined || this.catchUp.caughtUp;
  }

  private lose(reason: "minority" | "paused" | "views-disagree"): void {
    if (this.state === "voting") {
      this.deps.metrics.inc("dist.contact.abstentions");
      this.deps.logger.info(LOG.quorumVoteSuspended, { reason });
    }
    this.enter("lost");
  }
}

/**
 * Whether hearsay of pruned members (MemberTable.prunedHeardAliveAtMs) says the views lastingly
 * disagree. While a returning node is re-added, peers that re-added it first gossip it as alive to
 * those that have not yet, for a second or two: that alone is no reason to abstain (the former
 * owner abstains from its answers instead). Hearsay heard again and again for `persistMs`, each
 * within `windowMs` of the previous, is a bridge: this node cannot reach nodes its peers reach.
 */
export class ViewsDisagreement {
  private lastHeardMs = 0;
  private episodeStartMs = 0;

  constructor(private readonly windowMs: number, private readonly persistMs: number) {}

  /** Follows the latest hearsay time (0: never) at wall-clock `nowMs`. */
  disagree(heardAtMs: number, nowMs: number): boolean {
    if (heardAtMs !== this.lastHeardMs) {
      if (this.lastHeardMs === 0 || heardAtMs - this.lastHeardMs > this.windowMs) this.episodeStartMs = heardAtMs;
      this.lastHeardMs = heardAtMs;
    }
    return heardAtMs > 0 && nowMs - heardAtMs < this.windowMs && heardAtMs - this.episodeStartMs >= this.persistMs;
  }
}
