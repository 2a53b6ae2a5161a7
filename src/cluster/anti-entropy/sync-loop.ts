// The anti-entropy loop: every tick it syncs with every alive peer. Adaptive backoff: after each
// fully clean tick the sleep doubles, up to SERVICE_AUTO_SYNC_MAX_FACTOR x the interval; any
// divergent tick resets it to 1x.
import type { Clock, TimerHandle, Timers } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { MerkleSyncer } from "./syncer.js";

export interface SyncLoopDeps {
  readonly view: ClusterView;
  readonly syncer: MerkleSyncer;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  /** 0 disables the timer (ticks can still be run by hand). */
  readonly intervalMs: number;
  readonly maxFactor: number;
}

/** Next backoff factor after a tick (pure). */
export function nextBackoffFactor(current: number, clean: boolean, maxFactor: number): number {
  return clean ? Math.min(current * 2, Math.max(1, maxFactor)) : 1;
}

export class SyncLoop {
  private timer: TimerHandle | undefined;
  private running = false;
  private factor = 1;

  constructor(private readonly deps: SyncLoopDeps) {
    deps.metrics.set("dist.auto_sync.backoff_factor", 1);
  }

  get backoffFactor(): number {
    return this.factor;
  }

  start(): void {
    if (this.deps.intervalMs > 0 && !this.timer) this.schedule();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = this.deps.timers.after(this.deps.intervalMs * this.factor, () => {
      void this.runSyncTick().finally(() => {
        if (this.timer) this.schedule();
      });
    });
  }

  /** One tick: syncs with every alive peer and adapts the backoff. */
  async runSyncTick(): Promise<{ pulled: number; clean: boolean }> {
    if (this.running) return { pulled: 0, clean: true };
    this.running = true;
    const started = this.deps.clock.monotonicMs();
    let pulled = 0;
    let clean = true;
    try {
      for (const peer of this.deps.view.alivePeers()) {
        const r = await this.deps.syncer.syncWith(peer);
        if (!r.clean) clean = false;
        pulled += r.pulled;
      }
    } finally {
      this.running = false;
    }
    const m = this.deps.metrics;
    m.set("dist.auto_sync.last_ns", Math.round((this.deps.clock.monotonicMs() - started) * 1e6));
    if (clean) m.inc("dist.auto_sync.clean_ticks");
    this.adapt(clean);
    return { pulled, clean };
  }

  private adapt(clean: boolean): void {
    const next = nextBackoffFactor(this.factor, clean, this.deps.maxFactor);
    if (next === this.factor) return;
    // Backing off is what an idle cluster does (debug); a reset means divergence (info).
    const log = next < this.factor ? this.deps.logger.info : this.deps.logger.debug;
    log(LOG.backoffFactorChanged, { from: this.factor, to: next });
    this.factor = next;
    this.deps.metrics.set("dist.auto_sync.backoff_factor", next);
  }
}
