// The store's expiration pass, in slices. An expired item costs a few microseconds to turn into
// a tombstone, and items written together with one TTL expire together: a pass over 800,000 of
// them held the event loop for 2.6 s in one piece (found by a review; peers suspect a node that
// stalls for a second). A slice does at most `maxWork` expirations and compactions and remembers
// where it stopped; the next one goes on from there, the pass is done when a slice reaches the
// last shard's end. Pure: no timers (the loop schedules the slices).
import type { Shard } from "./shard.js";

/**
 * Units of work one slice does at most: an expiration or compaction each, one per 64 slots looked
 * at (about 10–15 ms when every unit is an expiration; a slice of slots alone, 262,144 of them,
 * is about 1 ms).
 */
export const EXPIRE_SLICE_MAX = 4096;

export interface SliceResult {
  readonly expired: number;
  readonly compacted: number;
  /** True when this slice finished the pass; the next slice starts a new one. */
  readonly done: boolean;
}

export class ExpirySweep {
  private shard = 0;
  private slot = 0;

  constructor(
    private readonly shards: readonly Shard[],
    private readonly tombstoneTtlMs: number,
    private readonly onExpire: (slot: number) => void,
    /** Tombstones that arrived at or after this monotonic time stay past their TTL (StoreOptions.tombstoneHoldAfter). */
    private readonly holdAfter: () => number = () => Number.POSITIVE_INFINITY,
  ) {}

  /** Forgets the pass under way: the next slice starts a new one at the first shard. */
  restart(): void {
    this.shard = 0;
    this.slot = 0;
  }

  /** One slice of the pass under way (or of a new one), at `nowMs` (wall: expiry) and `monoMs` (tombstones' TTL). */
  slice(nowMs: number, maxWork: number, monoMs: number): SliceResult {
    let expired = 0;
    let compacted = 0;
    let work = 0;
    const holdAfterMs = this.holdAfter();
    while (this.shard < this.shards.length) {
      if (work >= maxWork) return { expired, compacted, done: false };
      const r = (this.shards[this.shard] as Shard).sweep(nowMs, this.tombstoneTtlMs, this.onExpire, this.slot, maxWork - work, holdAfterMs, monoMs);
      expired += r.expired;
      compacted += r.compacted;
      work += r.work;
      if (r.next !== undefined) {
        this.slot = r.next;
        return { expired, compacted, done: false };
      }
      this.shard++;
      this.slot = 0;
    }
    this.shard = 0;
    return { expired, compacted, done: true };
  }
}
