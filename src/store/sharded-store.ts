// The node's in-memory store: records spread over shards by key hash. Every write path (client
// writes, replica sets, hints, read repair, migration, anti-entropy) goes through `apply`, the
// one version-gated write. Eviction and expiration are local, physical removals.
import type { ByteString } from "../core/byte-string.js";
import type { Clock } from "../core/clock.js";
import { keyedHash32, type HashSeed } from "../core/keyed-hash.js";
import type { EvictionAlgorithm } from "../config/index.js";
import type { Metrics } from "../observability/index.js";
import { createPolicy } from "./policies/index.js";
import { Applied, type ApplyResult, type RecordHeader, type VersionedRecord } from "./record.js";
import { OriginTable } from "./origin-table.js";
import { Shard } from "./shard.js";
import { DataBudget, PASS_VICTIMS_MAX } from "./data-budget.js";
import { EXPIRE_SLICE_MAX, ExpirySweep, type SliceResult } from "./expiry-sweep.js";
import { shardKeysPage } from "./keys-page.js";
import type { KeysPage, KeysPageFilter, LiveItem, MakeRoom, StoreCounters, StoreMemory } from "./store-types.js";

/** A record's charge against the byte budget: key length (exact for ASCII; eviction corrects the rest) and value. */
const budgetBytesOf = (rec: VersionedRecord): number => rec.key.length + rec.value.length;

export interface StoreOptions {
  readonly shards: number;
  /** Live items the store holds at most, within plus or minus the shard count. */
  readonly capacity: number;
  readonly algorithm: EvictionAlgorithm;
  readonly tombstoneTtlMs: number;
  /** Bytes of tombstones the store holds at most (SERVICE_TOMBSTONE_MAX_BYTES); the oldest go first. */
  readonly tombstoneBytesMax: number;
  /** Tombstones that arrived at or after this monotonic ms stay past their TTL (sync-receipts.ts); absent: none held. */
  readonly tombstoneHoldAfter?: () => number;
  /**
   * The key of the hash that places keys in the shards and in each shard's index (keyedHash32),
   * drawn from crypto random bytes per process (node-parts.ts), so clients cannot build keys that
   * pile up there. The ring and the Merkle leaves never see it: they hash with hash32.
   */
  readonly hashSeed: HashSeed;
  /** Bytes of live keys and values the store holds at most (SERVICE_MAX_DATA_BYTES); 0 or absent: no limit. */
  readonly maxDataBytes?: number;
  /** Runs a function at the end of the event-loop turn (Timers.defer): the byte budget's cap per turn. */
  readonly defer?: (fn: () => void) => void;
  readonly clock: Clock;
  readonly metrics: Metrics;
}

export type { KeysPage, KeysPageFilter, LiveItem, StoreCounters, StoreMemory } from "./store-types.js";

export class ShardedStore {
  private readonly shards: Shard[];
  private readonly mask: number;
  readonly counters: StoreCounters = { hits: 0, misses: 0, sets: 0, deletes: 0, evictions: 0, expirations: 0 };
  private readonly onEvict: (slot: number) => void;
  private readonly makeRoom: MakeRoom;
  private readonly budget: DataBudget;
  /** Live items at which a write evicts inline: capacity + shard count. */
  readonly hardLimit: number;
  private readonly onExpire: (slot: number) => void;
  private readonly expiry: ExpirySweep;
  /** The observer of stored records (onStored); undefined: none. */
  private storedObserver: ((rec: VersionedRecord) => void) | undefined;

  constructor(private readonly opts: StoreOptions) {
    // Capacity counts the whole store: a write evicts inline only once the store holds
    // capacity + shard count live items, and the eviction loop trims it back to the capacity,
    // taking victims from the shards furthest above their share. Shares sum to the capacity.
    const base = Math.floor(opts.capacity / opts.shards);
    const remainder = opts.capacity % opts.shards;
    const origins = new OriginTable();
    // Tombstones have a byte budget of their own, apart from the item capacity: deletes of many
    // distinct keys never flush the tombstones that keep deleted keys from coming back.
    const tombstoneShare = Math.floor(opts.tombstoneBytesMax / opts.shards);
    const onTombstoneDropped = () => opts.metrics.inc("dist.tombstones.dropped");
    this.shards = Array.from({ length: opts.shards }, (_, i) => {
      const share = base + (i < remainder ? 1 : 0);
      return new Shard(createPolicy(opts.algorithm, Math.max(1, share)), origins, share, tombstoneShare, onTombstoneDropped);
    });
    this.mask = (opts.shards & (opts.shards - 1)) === 0 ? opts.shards - 1 : -1;
    this.onEvict = () => {
      this.counters.evictions++;
      this.opts.metrics.inc("item_evicted_count");
      this.opts.metrics.inc("evicted_item_count");
    };
    this.onExpire = () => {
      this.counters.expirations++;
    };
    this.expiry = new ExpirySweep(this.shards, opts.tombstoneTtlMs, this.onExpire, opts.tombstoneHoldAfter);
    this.hardLimit = opts.capacity + opts.shards;
    this.budget = new DataBudget(this.shards, opts.maxDataBytes ?? 0, this.onEvict, opts.defer);
    this.makeRoom = (shard, rec, replacedBytes) => {
      // An overwrite only grows or shrinks a value: it never evicts inline (its own slot could be
      // the victim), and is refused only when it grows the store past the overshoot.
      if (replacedBytes !== undefined) return this.budget.admit(rec.value.length - replacedBytes, false);
      if (!this.budget.admit(budgetBytesOf(rec), true)) return false;
      if (this.items < this.hardLimit) return true;
      // Evict from the shard being written (it stays the same size); an empty one borrows a
      // victim from the fullest shard.
      if (!shard.evictOne(this.onEvict)) this.fullestShard()?.evictOne(this.onEvict);
      return true;
    };
  }

  /** The shard furthest above its share (most live items over its share). */
  private fullestShard(): Shard | undefined {
    let best: Shard | undefined;
    for (const s of this.shards) if (s.live > 0 && (!best || s.live - s.capacityShare > best.live - best.capacityShare)) best = s;
    return best;
  }

  get shardCount(): number {
    return this.shards.length;
  }

  get capacity(): number {
    return this.opts.capacity;
  }

  /** Shard index of a key. */
  shardOf(key: string): number {
    return this.shardOfHash(this.hashOf(key));
  }

  /** The store's hash of a key: where it goes in the shards and their indexes, in this store only. */
  private hashOf(key: string): number {
    return keyedHash32(key, this.opts.hashSeed.k0, this.opts.hashSeed.k1);
  }

  private shardOfHash(h: number): number {
    return this.mask >= 0 ? h & this.mask : h % this.shards.length;
  }

  /** The live, unexpired value of `key`, counting a hit or a miss; expired values are removed. */
  get(key: string): LiveItem | undefined {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    if (slot < 0 || !shard.isLive(slot)) {
      this.counters.misses++;
      return undefined;
    }
    const now = this.opts.clock.nowMs();
    if (shard.isExpired(slot, now)) {
      this.onExpire(slot);
      shard.expireSlot(slot, this.opts.clock.monotonicMs());
      this.counters.misses++;
      return undefined;
    }
    shard.touchRead(slot);
    this.counters.hits++;
    return {
      key,
      value: shard.valueAt(slot),
      version: shard.versionAt(slot),
      origin: shard.originAt(slot),
      lastUpdatedMs: shard.updatedAt(slot),
      expiresAtMs: shard.expiresAt(slot),
    };
  }

  /** The record of `key` (live, expired or tombstone) without touching counters or the policy. */
  peek(key: string): VersionedRecord | undefined {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    return slot < 0 ? undefined : shard.recordAt(slot);
  }

  /** The record of `key` without its value (live, expired or tombstone), nothing counted or copied. */
  peekHeader(key: string): RecordHeader | undefined {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    return slot < 0 ? undefined : shard.headerAt(slot);
  }

  /**
   * The first `length` bytes of the value of `key` ("" for a tombstone), undefined when the store
   * holds no record of it: a look at a value's prefix without copying the value.
   */
  valueHead(key: string, length: number): ByteString | undefined {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    return slot < 0 ? undefined : shard.valueHead(slot, length);
  }

  /** When the tombstone of `key` arrived here (monotonic ms: tombstones count their TTL on it); undefined when none. */
  tombstoneSince(key: string): number | undefined {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    return slot >= 0 && shard.isTombstone(slot) ? shard.tombstoneSinceAt(slot) : undefined;
  }

  /** Version of the record of `key`, 0 when there is none. */
  versionOf(key: string): number {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    return slot < 0 ? 0 : shard.versionAt(slot);
  }

  /**
   * Sets the one observer of records `apply` stored (the node's lease table). It is called after
   * the record is committed, must not write to the store and must return quickly.
   */
  onStored(observer: (rec: VersionedRecord) => void): void {
    this.storedObserver = observer;
  }

  /** The one version-gated write: stores `rec` only when newer than the local record. */
  apply(rec: VersionedRecord): ApplyResult {
    const h = this.hashOf(rec.key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const r = shard.apply(rec, h, this.opts.clock.nowMs(), this.makeRoom, rec.tombstone ? this.opts.clock.monotonicMs() : 0);
    if (r.applied === Applied.Stored) {
      if (rec.tombstone) {
        if (r.previousLive) this.counters.deletes++;
      } else {
        this.counters.sets++;
      }
      this.storedObserver?.(rec);
    } else if (r.applied === Applied.Refused) {
      this.opts.metrics.inc("dist.write.over_budget");
    }
    return r;
  }

  /** Physically removes the record of `key` (no tombstone); true when there was one. */
  removeLocal(key: string): boolean {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    if (slot < 0) return false;
    shard.removeSlot(slot);
    return true;
  }

  /**
   * One eviction pass: evicts until the store holds its capacity, from the fullest shards, and
   * its byte budget (at most PASS_VICTIMS_MAX victims for the bytes), from every shard in turn.
   */
  evictPass(): number {
    let n = this.budget.evictFor(0, PASS_VICTIMS_MAX);
    let over = this.items - this.opts.capacity;
    while (over > 0) {
      const shard = this.fullestShard();
      if (!shard || !shard.evictOne(this.onEvict)) break;
      n++;
      over--;
    }
    return n;
  }

  /** The rest of the expiration pass at once (tests; the node runs it in slices: expireSlice). */
  expirePass(): { expired: number; compacted: number } {
    const { expired, compacted } = this.expireSlice(Infinity);
    return { expired, compacted };
  }

  /** One slice of the expiration pass (expiry-sweep.ts): turns expired values into tombstones and compacts old tombstones. */
  expireSlice(maxWork = EXPIRE_SLICE_MAX): SliceResult {
    return this.expiry.slice(this.opts.clock.nowMs(), maxWork, this.opts.clock.monotonicMs());
  }

  /** Sets the expiration pass under way aside: the next slice starts a new pass at the first shard. */
  restartExpiry(): void {
    this.expiry.restart();
  }

  /** Removes every record of this node; returns how many live items there were. */
  clear(): number {
    let n = 0;
    for (const shard of this.shards) n += shard.clear();
    return n;
  }

  /**
   * The most buckets a lookup of a stored key looks at in its shard's index (its distance from its
   * home bucket, plus one), over every shard: how well keys spread. An inspection for tests: it
   * walks every index.
   */
  probeLengthMax(): number {
    return Math.max(0, ...this.shards.map((s) => s.probeLengthMax()));
  }

  /** Live items (unexpired ones not yet swept included). */
  get items(): number {
    let n = 0;
    for (const s of this.shards) n += s.live;
    return n;
  }

  get tombstones(): number {
    let n = 0;
    for (const s of this.shards) n += s.tombstones;
    return n;
  }

  /**
   * Where the stored key and value bytes sit, over every shard: live records in pages, garbage
   * in pages awaiting compaction, page space not in use (tails and spare pages), and records
   * with a buffer of their own. What an operator reads to tell churn from growth.
   */
  memory(): StoreMemory {
    let records = 0;
    let garbage = 0;
    let pages = 0;
    let large = 0;
    for (const s of this.shards) {
      const r = s.recordStats();
      records += r.liveBytes;
      garbage += r.garbageBytes;
      pages += r.pageBytes;
      large += r.largeBytes;
    }
    return { records, garbage, free: pages - records - garbage, large };
  }

  /** Bytes charged for the tombstones held (see SERVICE_TOMBSTONE_MAX_BYTES). */
  get tombstoneBytes(): number {
    let n = 0;
    for (const s of this.shards) n += s.tombstoneBytes;
    return n;
  }

  /** True when storing `rec` as a new item would take the store past its capacity or its byte budget. */
  isFullFor(rec: VersionedRecord): boolean {
    return this.items >= this.opts.capacity || this.budget.overBy(budgetBytesOf(rec)) > 0;
  }

  /** Live key and value bytes (what SERVICE_MAX_DATA_BYTES bounds). */
  get dataBytes(): number {
    return this.budget.dataBytes;
  }

  /** The byte budget of live keys and values; 0: none. */
  get maxDataBytes(): number {
    return this.budget.maxBytes;
  }

  /** Total size of the live values. */
  get bytes(): number {
    let n = 0;
    for (const s of this.shards) n += s.bytes;
    return n;
  }

  /**
   * One page of live keys matching `matching` (a filter, or a predicate whose matches cost one
   * unit each): the rest of shard `shard` from `slot`, cut short
   * after `limit` keys when limit > 0, or once matching has cost `workBudget` units
   * (filter.cost), so one page never holds the event loop for long.
   */
  keysPage(shard: number, slot: number, limit: number, matching: KeysPageFilter | ((key: string) => boolean), workBudget = Infinity): KeysPage {
    const filter: KeysPageFilter = typeof matching === "function" ? { matches: matching, cost: () => 1 } : matching;
    const s = this.shards[shard];
    if (!s) return { keys: [], next: undefined, truncated: false };
    return shardKeysPage(s, { shard, slot, shards: this.shards.length }, this.opts.clock.nowMs(), limit, filter, workBudget);
  }

  /**
   * Visits the live, unexpired keys of one shard from `fromSlot`; stops after the key for which
   * `visit` returns false. Returns the slot to resume at (after that key), or -1 when the shard
   * is done.
   */
  scanLiveKeys(shard: number, fromSlot: number, visit: (key: string) => boolean): number {
    const s = this.shards[shard];
    if (!s) return -1;
    return s.scanLiveKeys(fromSlot, this.opts.clock.nowMs(), visit);
  }

  /**
   * Visits the records (live, expired or tombstone) of one shard from `fromSlot`; stops at the
   * first record `visit` declines (returns false). Returns that record's slot, where the next scan
   * resumes (the declined record is visited again), or -1 when the shard is done. For scans over
   * several ticks (rebalance, anti-entropy), which take hash32 of a key, never the store's hash.
   */
  scanRecords(shard: number, fromSlot: number, visit: (rec: VersionedRecord) => boolean): number {
    const s = this.shards[shard];
    if (!s) return -1;
    return s.scanSlots(fromSlot, (slot) => visit(s.recordAt(slot)));
  }

  /** scanRecords for scans that need no value: each record's header (its value's size instead), nothing copied. */
  scanHeaders(shard: number, fromSlot: number, visit: (rec: RecordHeader) => boolean): number {
    const s = this.shards[shard];
    if (!s) return -1;
    return s.scanSlots(fromSlot, (slot) => visit(s.headerAt(slot)));
  }

  /** Removes `key` only while its record still has `version` (a newer write keeps it). */
  removeIfVersion(key: string, version: number): boolean {
    const h = this.hashOf(key);
    const shard = this.shards[this.shardOfHash(h)] as Shard;
    const slot = shard.find(key, h);
    if (slot < 0 || shard.versionAt(slot) !== version) return false;
    shard.removeSlot(slot);
    return true;
  }
}
