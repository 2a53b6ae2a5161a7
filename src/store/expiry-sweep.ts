// The store's expiration pass, in slices. An expired item costs a few microseconds to turn into
// a tombstone, and items written together with one TTL expire together: a pass over 800,000 of
// them held the event loop for 2.6 s in one piece (found by a review; peers suspect a node that
// stalls for a second). A slice does at most `maxWork` expirations and compactions and remembers
// where it stopped; the next one goes on from there, the pass is done when a slice reaches the
// last shard's end. Pure: no timers (the loop schedules the slices).
import type { Shard } from "./shard.js";

/** Expirations and compactions one slice does at most (about 10–15 ms of work). */
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
  ) {}

  /** One slice of the pass under way (or of a new one), at `nowMs`. */
  slice(nowMs: number, maxWork: number): SliceResult {
    let expired = 0;
    let compacted = 0;
    while (this.shard < this.shards.length) {
      const r = (this.shards[this.shard] as Shard).sweep(nowMs, this.tombstoneTtlMs, this.onExpire, this.slot, maxWork - expired - compacted);
      expired += r.expired;
      compacted += r.compacted;
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
