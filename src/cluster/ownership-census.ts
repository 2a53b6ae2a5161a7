// The ownership census: how many live items (and bytes of keys and values) this node holds as the
// primary of their key, as a replica, or as no owner at all (records in transit after a ring
// change). Ownership is a ring lookup per key, too costly to keep up to date on every write, so a
// background pass counts it every CENSUS_INTERVAL_MS, slice by slice with pauses between slices
// (like every long scan), and the metrics show the last complete count.
import { WorkSlicer, type Clock, type TimerHandle, type Timers, type YieldToLoop } from "../core/clock.js";
import { isLiveAt, type ShardedStore } from "../store/index.js";
import { SCAN_LIMITS } from "../core/limits.js";
import type { ClusterView } from "./cluster-view.js";

/** How often the census runs, ms. */
export const CENSUS_INTERVAL_MS = 15_000;

export interface RoleCount {
  items: number;
  bytes: number;
}

export interface Census {
  readonly primary: RoleCount;
  readonly replica: RoleCount;
  readonly none: RoleCount;
}

export interface OwnershipCensusDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly view: Pick<ClusterView, "ring">;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly yieldToLoop: YieldToLoop;
  readonly intervalMs?: number;
  /** Records per slice (default SCAN_LIMITS.censusRecords). */
  readonly sliceRecords?: number;
}

export class OwnershipCensus {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private result: Census | undefined;

  constructor(private readonly deps: OwnershipCensusDeps) {}

  /** The last complete count; undefined before the first one ends. */
  get last(): Census | undefined {
    return this.result;
  }

  start(): void {
    if (this.timer) return;
    this.timer = this.deps.timers.every(this.deps.intervalMs ?? CENSUS_INTERVAL_MS, () => void this.runCensusTick());
    void this.runCensusTick();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One complete count (joins the running one). */
  runCensusTick(): Promise<void> {
    this.running ??= this.count().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async count(): Promise<void> {
    const { store, selfId } = this.deps;
    const c: Census = { primary: { items: 0, bytes: 0 }, replica: { items: 0, bytes: 0 }, none: { items: 0, bytes: 0 } };
    // One budget across shards: a shard that ends mid-slice does not start a new one.
    const slicer = new WorkSlicer(this.deps.yieldToLoop, this.deps.sliceRecords ?? SCAN_LIMITS.censusRecords);
    for (let shard = 0; shard < store.shardCount; shard++) {
      let slot = 0;
      while (slot >= 0) {
        await slicer.pause();
        const ring = this.deps.view.ring();
        const now = this.deps.clock.nowMs();
        slot = store.scanHeaders(shard, slot, (rec) => {
          if (slicer.spend()) return false;
          if (!isLiveAt(rec, now)) return true;
          const ids = ring.ownersOf(rec.key).ids;
          const role = ids[0] === selfId ? c.primary : ids.includes(selfId) ? c.replica : c.none;
          role.items++;
          role.bytes += rec.key.length + rec.valueBytes;
          return true;
        });
      }
    }
    this.result = c;
  }
}
