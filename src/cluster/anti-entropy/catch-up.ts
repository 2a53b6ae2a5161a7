// Catch-up: a node starts empty, and a new owner may not have every copy yet. At start-up and
// after every ring change it runs passes of Merkle syncs with every alive or suspect peer (they
// keep their ring positions, so they are co-owners to catch up from), a pass every `retryMs`
// until one reaches every such peer; pruned peers drop out. Until then the node counts as not
// caught up: reads look past local misses and management /health reports catching_up.
import type { TimerHandle, Timers } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { MerkleSyncer } from "./syncer.js";

export interface CatchUpDeps {
  readonly view: ClusterView;
  readonly syncer: MerkleSyncer;
  readonly logger: Logger;
  readonly timers: Timers;
  /** Delay between passes that did not reach every peer. */
  readonly retryMs: number;
  /**
   * SERVICE_SEEDS names other nodes: a pass that found no peer to sync with does not latch
   * everCaughtUp (a node restarted empty while cut off pruned its peers, passed with none, and
   * reported ready as soon as they were back, still empty; a review).
   */
  readonly hasSeeds: boolean;
}

export class CatchUp {
  private caughtUpFlag = false;
  /** The pass that caught up found no peer to sync with. */
  private alone = false;
  private everCaughtUpFlag = false;
  private timer: TimerHandle | undefined;
  private running = false;
  private requested = false;

  constructor(private readonly deps: CatchUpDeps) {}

  /**
   * True once a pass reached every alive or suspect peer since start-up or the last ring change.
   * Caught up alone (every peer pruned), it is not once peers are on the ring again, even before
   * the ring change that asks for a new pass: a node restarted empty while cut off had caught up
   * alone, and after the heal it voted and its empty answers counted towards QUORUM reads (a
   * review).
   */
  get caughtUp(): boolean {
    return this.caughtUpFlag && !(this.alone && this.deps.view.ringPeers().length > 0);
  }

  /**
   * True once any pass reached every peer since start-up; a later ring change does not reset it.
   * Readiness latches on it, so the catch-ups after ring changes never make a ready node unready.
   */
  get everCaughtUp(): boolean {
    return this.everCaughtUpFlag;
  }

  /** Starts (or restarts) catch-up. Called at start-up and after every ring change. */
  request(): void {
    this.caughtUpFlag = false;
    if (this.running) {
      this.requested = true;
      return;
    }
    this.timer?.cancel();
    this.timer = this.deps.timers.after(0, () => void this.runPass());
  }

  /**
   * Starts over as a node that never caught up: after this node dropped its data (ContactGuard),
   * readiness waits for a pass again (a review: the latched everCaughtUp kept the emptied node
   * ready through the isolation and after the heal).
   */
  restartEmpty(): void {
    this.everCaughtUpFlag = false;
    this.request();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One catch-up pass; schedules the next one unless every peer was synced. */
  async runPass(): Promise<boolean> {
    if (this.running) return false;
    this.running = true;
    this.requested = false;
    let complete = true;
    let reached = 0;
    try {
      for (const peer of this.deps.view.ringPeers()) {
        reached++;
        const r = await this.deps.syncer.syncWith(peer);
        if (r.failed) complete = false;
      }
    } finally {
      this.running = false;
    }
    if (complete && !this.requested) {
      if (!this.caughtUpFlag) this.deps.logger.info(LOG.caughtUp, { peers: this.deps.view.ringPeers().length });
      this.caughtUpFlag = true;
      this.alone = reached === 0;
      // Alone with seeds naming others: cut off rather than a cluster of one; readiness waits for
      // a pass that reaches them (or its catch-up timeout).
      if (reached > 0 || !this.deps.hasSeeds) this.everCaughtUpFlag = true;
    } else {
      this.timer = this.deps.timers.after(this.requested ? 0 : this.deps.retryMs, () => void this.runPass());
    }
    return complete;
  }
}
