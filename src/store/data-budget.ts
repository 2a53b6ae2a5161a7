// SERVICE_MAX_DATA_BYTES: the bytes of live keys and values a store holds at most. The item
// capacity alone let a node holding large values grow until the kernel killed it (100,000 items
// of 8 MiB is 800 GB); past the budget a write evicts by the store's policy, as past the
// capacity. A write of a new key makes room for itself first, with at most INLINE_VICTIMS_MAX
// victims, and all the writes of one event-loop turn with at most TURN_VICTIMS_MAX (a batch of
// large values landing among many small ones evicted a million records in 231 ms before this
// cap, found by a review); an overwrite that grows a value, and whatever the inline evictions
// left, is trimmed by the eviction loop, at most PASS_VICTIMS_MAX victims a pass (about 0.8 µs a
// victim). Between passes the store may hold the budget plus what one turn's writes brought. Victims come from the shards in turn, each by its own policy: keys
// spread evenly over the shards, so this follows the policy over the whole store (taking them
// from the shard holding the most bytes instead emptied the one holding a large value of its
// newer small ones, and then took the large value itself).

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
/** Victims the writes of one event-loop turn take inline at most, together (about 3 ms). */
export const TURN_VICTIMS_MAX = 4096;
/** Victims one eviction pass takes at most (about 13 ms). */
export const PASS_VICTIMS_MAX = 16_384;

export class DataBudget {
  /** The shard the next victim comes from. */
  private next = 0;

  /** Victims taken inline in this event-loop turn. */
  private spentThisTurn = 0;
  private resetQueued = false;

  /**
   * `maxBytes` 0 sets no byte limit. `defer` runs a function at the end of the event-loop turn
   * (Timers.defer); without it there is no cap per turn, only per write.
   */
  constructor(
    private readonly shards: readonly BudgetedShard[],
    readonly maxBytes: number,
    private readonly defer?: (fn: () => void) => void,
  ) {}

  /** Makes room for a new record of `incoming` bytes, within the caps per write and per turn; returns the victims. */
  makeRoomInline(incoming: number, onEvict: (slot: number) => void): number {
    const allowed = this.defer === undefined ? INLINE_VICTIMS_MAX : Math.min(INLINE_VICTIMS_MAX, TURN_VICTIMS_MAX - this.spentThisTurn);
    if (allowed <= 0) return 0;
    const n = this.evictFor(incoming, allowed, onEvict);
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
  evictFor(incoming: number, victimsMax: number, onEvict: (slot: number) => void): number {
    let over = this.overBy(incoming);
    let n = 0;
    let empty = 0;
    while (over > 0 && n < victimsMax && empty < this.shards.length) {
      const shard = this.shards[this.next] as BudgetedShard;
      this.next = (this.next + 1) % this.shards.length;
      const before = shard.bytes + shard.keyBytes;
      if (!shard.evictOne(onEvict)) {
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
