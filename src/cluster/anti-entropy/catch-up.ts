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
}

export class CatchUp {
  private caughtUpFlag = false;
  private everCaughtUpFlag = false;
  private timer: TimerHandle | undefined;
  private running = false;
  private requested = false;

  constructor(private readonly deps: CatchUpDeps) {}

  /** True once a pass reached every alive or suspect peer since start-up or the last ring change. */
  get caughtUp(): boolean {
    return this.caughtUpFlag;
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
    try {
      for (const peer of this.deps.view.ringPeers()) {
        const r = await this.deps.syncer.syncWith(peer);
        if (r.failed) complete = false;
      }
    } finally {
      this.running = false;
    }
    if (complete && !this.requested) {
      if (!this.caughtUpFlag) this.deps.logger.info(LOG.caughtUp, { peers: this.deps.view.ringPeers().length });
      this.caughtUpFlag = true;
      this.everCaughtUpFlag = true;
    } else {
      this.timer = this.deps.timers.after(this.requested ? 0 : this.deps.retryMs, () => void this.runPass());
    }
    return complete;
  }
}
