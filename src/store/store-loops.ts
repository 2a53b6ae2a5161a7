// The store's background loops: capacity-driven eviction and TTL expiration. Each is a
// schedule plus a tick; tests call the tick directly.
import type { Clock, TimerHandle, Timers } from "../core/clock.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import type { ShardedStore } from "./sharded-store.js";

export interface StoreLoopDeps {
  readonly store: ShardedStore;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** A store pass run every `intervalMs`: the schedule; subclasses hold the tick. */
abstract class StoreLoop {
  private timer: TimerHandle | undefined;

  constructor(
    protected readonly deps: StoreLoopDeps,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer ??= this.deps.timers.every(this.intervalMs, () => this.runTick());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One pass; returns how many items it removed. */
  abstract runTick(): number;
}

/** Evicts from shards above their capacity share every `intervalMs`. */
export class EvictionLoop extends StoreLoop {
  /** One pass; returns the number of evicted items. */
  runTick(): number {
    const { store, clock, metrics, logger } = this.deps;
    const started = clock.monotonicMs();
    const evicted = store.evictPass();
    const durationNs = Math.round((clock.monotonicMs() - started) * 1e6);
    metrics.inc("eviction_loop_count");
    metrics.set("eviction_loop_duration", durationNs);
    if (evicted > 0) logger.info(LOG.evictionTick, { evicted, items: store.items, duration_ns: durationNs });
    else logger.debug(LOG.evictionTickIdle, { items: store.items });
    return evicted;
  }
}

/**
 * Removes expired items and compacts old tombstones every `intervalMs`, in slices of at most
 * EXPIRE_SLICE_MAX (expiry-sweep.ts): a pass that does not end in one slice goes on at the end
 * of each event-loop turn (Timers.defer), so requests are served between slices, and logs once,
 * with its totals, when it is done.
 */
export class ExpirationLoop extends StoreLoop {
  /** A pass is under way across turns: ticks wait for it. */
  private continuing = false;
  /** The pass POST /trigger-expiration runs (expireNow); the loop's own waits while it runs. */
  private manual: Promise<number> | undefined;
  private stopped = false;
  private passExpired = 0;
  private passCompacted = 0;

  override start(): void {
    this.stopped = false;
    super.start();
  }

  override stop(): void {
    this.stopped = true;
    super.stop();
  }

  /** One slice, and the rest of its pass scheduled; returns the items this slice expired (0 while a pass goes on). */
  runTick(): number {
    if (this.continuing || this.manual !== undefined) return 0;
    return this.slice();
  }

  /**
   * A whole pass now, from the first shard, a slice per turn (POST /trigger-expiration); resolves
   * with the items it expired. The loop's pass under way is set aside (its next tick starts a
   * new one); a request while one runs shares its pass.
   */
  expireNow(): Promise<number> {
    this.manual ??= this.manualPass().finally(() => (this.manual = undefined));
    return this.manual;
  }

  private async manualPass(): Promise<number> {
    this.passExpired = this.passCompacted = 0;
    this.deps.store.restartExpiry();
    let expired = 0;
    for (;;) {
      const r = this.deps.store.expireSlice();
      expired += r.expired;
      this.count(r.expired, r.compacted, r.done);
      if (r.done) return expired;
      await new Promise<void>((resolve) => this.deps.timers.defer(resolve));
    }
  }

  private slice(): number {
    const r = this.deps.store.expireSlice();
    this.count(r.expired, r.compacted, r.done);
    if (!r.done) {
      this.continuing = true;
      this.deps.timers.defer(() => {
        this.continuing = false;
        if (!this.stopped && this.manual === undefined) this.slice();
      });
    }
    return r.expired;
  }

  /** Adds a slice's work to its pass; logs the pass once it is done. */
  private count(expired: number, compacted: number, done: boolean): void {
    this.passExpired += expired;
    this.passCompacted += compacted;
    this.deps.metrics.set("dist.tombstones.bytes", this.deps.store.tombstoneBytes);
    if (!done) return;
    const fields = { expired: this.passExpired, tombstones_compacted: this.passCompacted, items: this.deps.store.items };
    if (this.passExpired > 0 || this.passCompacted > 0) this.deps.logger.info(LOG.expirationTick, fields);
    else this.deps.logger.debug(LOG.expirationTick, fields);
    this.passExpired = this.passCompacted = 0;
  }
}
