// SERVICE_MAX_DATA_BYTES: the bytes of live keys and values a store holds at most. The item
// capacity alone let a node holding large values grow until the kernel killed it (100,000 items
// of 8 MiB is 800 GB); past the budget a write evicts by the store's policy, as past the
// capacity.
//
// The work is bounded per write and per turn, and the bytes are bounded too:
// - A write of a new key makes room for itself first, with at most INLINE_VICTIMS_MAX victims,
//   and all the writes of one event-loop turn with at most TURN_VICTIMS_MAX (a batch of large
//   values landing among many small ones evicted a million records in 231 ms before this cap,
//   found by a review).
// - Whatever that left over the budget (and an overwrite that grows a value, which never evicts
//   inline: its own slot could be the victim) is trimmed at the end of the turn and in every turn
//   after it, TURN_VICTIMS_MAX victims a turn, until the store is within its budget; the eviction
//   loop's pass (PASS_VICTIMS_MAX victims) is the fallback when no turn scheduler is given.
// - A write that would add bytes while the store is already more than `overshootMax` over the
//   budget is refused (the store answers Applied.Refused; clients get 503 UNAVAILABLE with
//   Retry-After, peers keep a hint): the store holds at most budget + overshootMax + one write.
//   Without that, 1 MiB writes into a store of 40-byte items outran the eviction (26,000
//   victims each) and a node of an 8 MiB budget held 210 MB (review 17f).
// Victims come from the shards in turn, each by its own policy: keys spread evenly over the
// shards, so this follows the policy over the whole store (taking them from the shard holding the
// most bytes instead emptied the one holding a large value of its newer small ones, and then took
// the large value itself).

/** What the budget reads of a shard, and the one thing it asks of it. */
export interface BudgetedShard {
  /** Bytes of the live values. */
  readonly bytes: number;
  /** Bytes of the live keys. */
  readonly keyBytes: number;
  readonly live: number;
  evictOne(onEvict: (slot: number) => void): boolean;
}

/** Victims one write takes at most to make room for itself (about 1 ms of work). */
export const INLINE_VICTIMS_MAX = 1024;
/** Victims the writes of one event-loop turn take inline at most, together, and the trim of one turn (about 3 ms each). */
export const TURN_VICTIMS_MAX = 4096;
/** Victims one eviction pass takes at most (about 13 ms). */
export const PASS_VICTIMS_MAX = 16_384;
/** The least overshoot a store admits writes within (see overshootMaxOf). */
export const OVERSHOOT_MIN_BYTES = 1024 * 1024;

/**
 * Bytes over its budget within which a store still admits writes that add bytes: an eighth of
 * the budget, at least OVERSHOOT_MIN_BYTES. An eighth lets a batch of 1000 values of 16 KiB land
 * in one piece among small items on a node of a 400 MB budget (a pod of 1 GiB) while the trim
 * catches up in about 40 turns; 0 (no budget): none.
 */
export function overshootMaxOf(maxBytes: number): number {
  return maxBytes <= 0 ? 0 : Math.max(OVERSHOOT_MIN_BYTES, Math.floor(maxBytes / 8));
}

export class DataBudget {
  /** The shard the next victim comes from. */
  private next = 0;

  /** Victims taken inline in this event-loop turn. */
  private spentThisTurn = 0;
  private resetQueued = false;
  /** A trim is queued for the end of this turn. */
  private trimQueued = false;
  /** Bytes over the budget within which writes are admitted. */
  readonly overshootMax: number;

  /**
   * `maxBytes` 0 sets no byte limit. `defer` runs a function at the end of the event-loop turn
   * (Timers.defer); without it there is no cap per turn, only per write, and no trim between
   * eviction passes. `onEvict` is told of every victim.
   */
  constructor(
    private readonly shards: readonly BudgetedShard[],
    readonly maxBytes: number,
    private readonly onEvict: (slot: number) => void,
    private readonly defer?: (fn: () => void) => void,
  ) {
    this.overshootMax = overshootMaxOf(maxBytes);
  }

  /**
   * Admits a write that adds `incoming` bytes: false (refuse it) while the store is more than
   * overshootMax over its budget. `mayEvict` (a new key, which cannot be its own victim): first
   * makes room within the caps per write and per turn. Whatever stays over the budget is
   * trimmed from the end of this turn on.
   */
  admit(incoming: number, mayEvict: boolean): boolean {
    if (this.maxBytes <= 0 || incoming <= 0) return true;
    let over = this.overBy(0);
    if (over > this.overshootMax) {
      this.queueTrim();
      return false;
    }
    if (mayEvict && over + incoming > 0) {
      this.makeRoomInline(incoming);
      over = this.overBy(0);
    }
    if (over + incoming > 0) this.queueTrim();
    return true;
  }

  /** Makes room for a new record of `incoming` bytes, within the caps per write and per turn; returns the victims. */
  private makeRoomInline(incoming: number): number {
    const allowed = this.defer === undefined ? INLINE_VICTIMS_MAX : Math.min(INLINE_VICTIMS_MAX, TURN_VICTIMS_MAX - this.spentThisTurn);
    if (allowed <= 0) return 0;
    const n = this.evictFor(incoming, allowed);
    if (n > 0 && this.defer !== undefined) {
      this.spentThisTurn += n;
      if (!this.resetQueued) {
        this.resetQueued = true;
        this.defer(() => {
          this.spentThisTurn = 0;
          this.resetQueued = false;
        });
      }
    }
    return n;
  }

  /** Queues a trim for the end of the turn; each trim takes TURN_VICTIMS_MAX victims at most and queues the next while the store is over. */
  private queueTrim(): void {
    if (this.defer === undefined || this.trimQueued) return;
    this.trimQueued = true;
    this.defer(() => {
      this.trimQueued = false;
      // Stops when nothing is left to take (a store of one item larger than its budget).
      if (this.evictFor(0, TURN_VICTIMS_MAX) > 0 && this.overBy(0) > 0) this.queueTrim();
    });
  }

  /** Live key and value bytes over every shard. */
  get dataBytes(): number {
    let n = 0;
    for (const s of this.shards) n += s.bytes + s.keyBytes;
    return n;
  }

  /** Bytes past the budget once `incoming` more are stored (0 or less: they fit, or there is no budget). */
  overBy(incoming: number): number {
    return this.maxBytes <= 0 ? 0 : this.dataBytes + incoming - this.maxBytes;
  }

  /**
   * Evicts until `incoming` more bytes fit the budget, or `victimsMax` victims are gone, or no
   * live item is left; returns how many were evicted.
   */
  evictFor(incoming: number, victimsMax: number): number {
    let over = this.overBy(incoming);
    let n = 0;
    let empty = 0;
    while (over > 0 && n < victimsMax && empty < this.shards.length) {
      const shard = this.shards[this.next] as BudgetedShard;
      this.next = (this.next + 1) % this.shards.length;
      const before = shard.bytes + shard.keyBytes;
      if (!shard.evictOne(this.onEvict)) {
        empty++;
        continue;
      }
      empty = 0;
      over -= before - (shard.bytes + shard.keyBytes);
      n++;
    }
    return n;
  }
}
