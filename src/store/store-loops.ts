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

/** Removes expired items and compacts old tombstones every `intervalMs`. */
export class ExpirationLoop extends StoreLoop {
  /** One pass; returns the number of expired items. */
  runTick(): number {
    const { expired, compacted } = this.deps.store.expirePass();
    this.deps.metrics.set("dist.tombstones.bytes", this.deps.store.tombstoneBytes);
    const fields = { expired, tombstones_compacted: compacted, items: this.deps.store.items };
    if (expired > 0 || compacted > 0) this.deps.logger.info(LOG.expirationTick, fields);
    else this.deps.logger.debug(LOG.expirationTick, fields);
    return expired;
  }
}
