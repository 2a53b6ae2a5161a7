// One store shard: records in parallel typed arrays indexed by slot, key and value bytes in pages
// (record-bytes.ts), a key index, an eviction policy over the live slots and the tombstones in
// age order: no record is a JS object (docs/design.md, "Memory per item"). A record's last-updated
// time is the wall-clock part of its version, so every replica reports the same for one version.
import type { MakeRoom } from "./store-types.js";
import type { ByteString } from "../core/byte-string.js";
import { KeyIndex } from "./key-index.js";
import { RecordBytes, type RecordBytesStats } from "./record-bytes.js";
import { compareVersions } from "./lww.js";
import type { OriginTable } from "./origin-table.js";
import type { EvictionPolicy } from "./policies/index.js";
import { Applied, REFUSED, STALE_DUPLICATE, STALE_OLDER, STORED_FRESH, tombstoneCost, versionTimeMs, type ApplyResult, type RecordHeader, type VersionedRecord } from "./record.js";
import type { SweepResult } from "./store-types.js";
import { TombstoneQueue } from "./tombstone-queue.js";

const EMPTY = 0;
const LIVE = 1;
const TOMB = 2;
const INITIAL_SLOTS = 16;

export class Shard {
  private readonly records = new RecordBytes(INITIAL_SLOTS);
  private origins = new Uint16Array(INITIAL_SLOTS);
  private hashes = new Uint32Array(INITIAL_SLOTS);
  private versions = new Float64Array(INITIAL_SLOTS);
  private expires = new Float64Array(INITIAL_SLOTS);
  private state = new Uint8Array(INITIAL_SLOTS);
  private readonly free: number[] = [];
  private highWater = 0;
  private readonly index = new KeyIndex(
    (slot, key) => this.records.keyEquals(slot, key),
    (slot) => this.hashes[slot] as number,
  );

  live = 0;
  /** Bytes of the live values, and of their keys (UTF-8): together what SERVICE_MAX_DATA_BYTES counts. */
  bytes = 0;
  keyBytes = 0;
  /** Bytes charged for the tombstones held (tombstoneCost of each key). */
  tombstoneBytes = 0;

  constructor(
    private readonly policy: EvictionPolicy,
    private readonly originTable: OriginTable,
    /** The shard's share of the capacity (sizes the policy's aging). */
    readonly capacityShare: number,
    /** Tombstone bytes this shard holds at most (its share of SERVICE_TOMBSTONE_MAX_BYTES); the oldest go first. */
    readonly tombstoneBytesMax: number,
    /** Called for each tombstone dropped before its TTL because the budget was full. */
    private readonly onTombstoneDropped: () => void = () => undefined,
    /**
     * Tombstone slots, oldest first, each with the local time it became a tombstone (compaction
     * counts SERVICE_TOMBSTONE_TTL from there); a tombstone's slot keeps its node in `expires`.
     */
    private readonly tombstoneQueue = new TombstoneQueue(),
  ) {
    policy.resize(INITIAL_SLOTS);
  }

  get tombstones(): number {
    return this.tombstoneQueue.size;
  }

  /** What the shard's key and value bytes hold (pages, garbage, large records). */
  recordStats(): RecordBytesStats {
    return this.records.stats();
  }

  /** Records (live, expired or tombstone) in the shard. */
  get size(): number {
    return this.index.size;
  }

  /** The most buckets a lookup of one of the shard's keys looks at in its index (KeyIndex.probeLengthMax; tests). */
  probeLengthMax(): number {
    return this.index.probeLengthMax();
  }

  /** Slot of `key` (hashed to `hash`), or -1. */
  find(key: string, hash: number): number {
    return this.index.find(key, hash);
  }

  isLive(slot: number): boolean {
    return this.state[slot] === LIVE;
  }

  isTombstone(slot: number): boolean {
    return this.state[slot] === TOMB;
  }

  /** When the tombstone in `slot` arrived here (this process's monotonic ms). */
  tombstoneSinceAt(slot: number): number {
    return this.tombstoneQueue.sinceOf(this.expires[slot] as number);
  }

  /** True when the slot's expiry has passed at `nowMs`. */
  isExpired(slot: number, nowMs: number): boolean {
    const e = this.expires[slot] as number;
    return this.state[slot] === LIVE && e !== 0 && e <= nowMs;
  }

  keyAt(slot: number): string {
    return this.records.keyAt(slot);
  }
  /** The first `length` bytes of the slot's value. */
  valueHead(slot: number, length: number): ByteString {
    return this.records.valueHead(slot, length);
  }

  valueAt(slot: number): ByteString {
    return this.records.valueAt(slot);
  }
  versionAt(slot: number): number {
    return this.versions[slot] as number;
  }
  originAt(slot: number): string {
    return this.originTable.nameOf(this.origins[slot] as number);
  }
  updatedAt(slot: number): number {
    return versionTimeMs(this.versions[slot] as number);
  }
  expiresAt(slot: number): number {
    return this.state[slot] === TOMB ? 0 : (this.expires[slot] as number);
  }

  /** The whole record in a slot. */
  recordAt(slot: number): VersionedRecord {
    return {
      key: this.records.keyAt(slot),
      value: this.records.valueAt(slot),
      version: this.versions[slot] as number,
      origin: this.originAt(slot),
      lastUpdatedMs: this.updatedAt(slot),
      expiresAtMs: this.state[slot] === TOMB ? 0 : (this.expires[slot] as number),
      tombstone: this.state[slot] === TOMB,
    };
  }

  /** The record in a slot without its value (the value's size instead): nothing is copied. */
  headerAt(slot: number): RecordHeader {
    const tombstone = this.state[slot] === TOMB;
    return {
      key: this.records.keyAt(slot),
      version: this.versions[slot] as number,
      origin: this.originAt(slot),
      lastUpdatedMs: this.updatedAt(slot),
      expiresAtMs: tombstone ? 0 : (this.expires[slot] as number),
      tombstone,
      valueBytes: tombstone ? 0 : this.records.valueLength(slot),
    };
  }

  touchRead(slot: number): void {
    this.policy.touchRead(slot);
  }

  /**
   * Applies `rec` when it is newer than the local record (last-write-wins). Before a live
   * record is stored, `makeRoom` runs (the store evicts there when it is full), so the new
   * record is never its own victim; when it refuses, nothing changes (Applied.Refused).
   */
  apply(rec: VersionedRecord, hash: number, nowMs: number, makeRoom: MakeRoom, monoMs = nowMs): ApplyResult {
    // Resolved before any change, so a full origin table refuses the record cleanly.
    const originId = this.originTable.idOf(rec.origin);
    const slot = this.index.find(rec.key, hash);
    if (slot < 0) {
      if (rec.tombstone) {
        this.makeRoomForTombstone(tombstoneCost(rec.key));
        this.addTombstone(this.allocate(rec, hash, originId), monoMs);
      } else {
        if (!makeRoom(this, rec)) return REFUSED;
        const s = this.allocate(rec, hash, originId);
        this.state[s] = LIVE;
        this.countLive(s, rec.value.length);
        this.policy.insert(s);
      }
      return STORED_FRESH;
    }
    const cmp = compareVersions(rec.version, rec.origin, this.versions[slot] as number, this.originAt(slot));
    if (cmp <= 0) return cmp === 0 ? STALE_DUPLICATE : STALE_OLDER;
    const wasLive = this.state[slot] === LIVE;
    const previousLive = wasLive && !this.isExpired(slot, nowMs);
    const previousBytes = previousLive ? this.records.valueLength(slot) : 0;
    if (rec.tombstone) {
      if (wasLive) {
        this.policy.remove(slot);
        this.uncountLive(slot);
        this.makeRoomForTombstone(tombstoneCost(rec.key));
      } else {
        this.dropTombstone(slot);
      }
      this.write(slot, rec, originId);
      this.addTombstone(slot, monoMs);
      return previousLive ? { applied: Applied.Stored, previousLive, previousBytes } : STORED_FRESH;
    } else if (wasLive) {
      const replaced = this.records.valueLength(slot);
      if (!makeRoom(this, rec, replaced)) return REFUSED;
      this.bytes += rec.value.length - replaced;
      this.policy.touchWrite(slot);
    } else {
      if (!makeRoom(this, rec)) return REFUSED;
      this.dropTombstone(slot);
      this.state[slot] = LIVE;
      this.countLive(slot, rec.value.length);
      this.policy.insert(slot);
    }
    this.write(slot, rec, originId);
    return previousLive ? { applied: Applied.Stored, previousLive, previousBytes } : STORED_FRESH;
  }

  /** Physically removes a slot (live or tombstone); no tombstone is left. */
  removeSlot(slot: number): void {
    const s = this.state[slot];
    if (s === EMPTY) return;
    if (s === LIVE) {
      this.policy.remove(slot);
      this.uncountLive(slot);
    } else {
      this.dropTombstone(slot);
    }
    this.index.remove(slot, this.hashes[slot] as number);
    this.records.remove(slot);
    this.origins[slot] = 0;
    this.expires[slot] = 0;
    this.state[slot] = EMPTY;
    this.free.push(slot);
  }

  /**
   * From slot `from` on, turns expired live records into tombstones of their version, then removes
   * tombstones older than `tombstoneTtlMs` that arrived before `holdAfterMs` (monotonic, as `monoMs`),
   * within `budget` units of work (one per expiration, compaction or 64 slots). `next`: where to go on, or undefined: done.
   */
  sweep(nowMs: number, tombstoneTtlMs: number, onExpire: (slot: number) => void, from = 0, budget = Infinity, holdAfterMs = Infinity, monoMs = nowMs): SweepResult {
    let expired = 0;
    let compacted = 0;
    let work = 0;
    for (let slot = from; slot < this.highWater; slot++) {
      if (((slot - from) & 63) === 63) work++;
      if (work >= budget) return { expired, compacted, work, next: slot };
      if (this.state[slot] !== LIVE || !this.isExpired(slot, nowMs)) continue;
      onExpire(slot);
      this.expireSlot(slot, monoMs);
      expired++;
      work++;
    }
    for (let node = this.tombstoneQueue.oldest(); node >= 0; node = this.tombstoneQueue.oldest()) {
      const since = this.tombstoneQueue.sinceOf(node);
      if (since + tombstoneTtlMs > monoMs || since >= holdAfterMs) break;
      if (work >= budget) return { expired, compacted, work, next: this.highWater };
      this.removeSlot(this.tombstoneQueue.slotOf(node));
      compacted++;
      work++;
    }
    return { expired, compacted, work, next: undefined };
  }

  /**
   * An expired live record becomes a tombstone of its own version: a replica that missed the
   * write with the TTL cannot bring an older value back once it expires. Local: nothing is sent.
   */
  expireSlot(slot: number, monoMs: number): void {
    if (this.state[slot] !== LIVE) return;
    this.policy.remove(slot);
    this.uncountLive(slot);
    this.records.setValue(slot, "");
    this.makeRoomForTombstone(tombstoneCost(this.records.keyAt(slot)));
    this.addTombstone(slot, monoMs);
  }

  /** Removes every record; returns how many live records there were. */
  clear(): number {
    const n = this.live;
    this.index.clear();
    this.records.clear();
    this.origins.fill(0);
    this.versions.fill(0);
    this.expires.fill(0);
    this.state.fill(EMPTY);
    this.free.length = 0;
    this.highWater = 0;
    this.policy.clear();
    this.tombstoneQueue.clear();
    this.live = this.bytes = this.keyBytes = this.tombstoneBytes = 0;
    return n;
  }

  /**
   * Visits live, unexpired keys in slot order from `fromSlot`; stops when `visit` returns false.
   * Returns the slot after the last one visited (the resume point), or -1 when the shard is done.
   */
  scanLiveKeys(fromSlot: number, nowMs: number, visit: (key: string, slot: number) => boolean): number {
    for (let slot = fromSlot; slot < this.highWater; slot++) {
      if (this.state[slot] !== LIVE) continue;
      const e = this.expires[slot] as number;
      if (e !== 0 && e <= nowMs) continue;
      if (!visit(this.records.keyAt(slot), slot)) return slot + 1;
    }
    return -1;
  }

  /**
   * Visits record slots (live, expired or tombstone) from `fromSlot`; stops when `visit` returns
   * false. Returns the slot to resume at, or -1 when the shard is done.
   */
  scanSlots(fromSlot: number, visit: (slot: number) => boolean): number {
    for (let slot = fromSlot; slot < this.highWater; slot++) {
      if (this.state[slot] !== EMPTY && !visit(slot)) return slot;
    }
    return -1;
  }

  /** Evicts the policy's victim; false when the shard holds no live record. */
  evictOne(onEvict: (slot: number) => void): boolean {
    const victim = this.policy.victim();
    if (victim < 0) return false;
    onEvict(victim);
    this.removeSlot(victim);
    return true;
  }

  /** Counts `slot` live, with a value of `valueBytes` (its key is already in the slot). */
  private countLive(slot: number, valueBytes: number): void {
    this.live++;
    this.bytes += valueBytes;
    this.keyBytes += this.records.keyLength(slot);
  }

  /** Stops counting the live `slot`, before its value or record goes. */
  private uncountLive(slot: number): void {
    this.live--;
    this.bytes -= this.records.valueLength(slot);
    this.keyBytes -= this.records.keyLength(slot);
  }

  /** Marks `slot` a tombstone since `monoMs` (monotonic; its value must already be gone). */
  private addTombstone(slot: number, monoMs: number): void {
    this.state[slot] = TOMB;
    if (this.records.valueLength(slot) > 0) this.records.setValue(slot, "");
    this.expires[slot] = this.tombstoneQueue.push(slot, monoMs);
    this.tombstoneBytes += tombstoneCost(this.records.keyAt(slot));
  }

  /** Takes the tombstone `slot` out of the queue and the budget (it is being overwritten or removed). */
  private dropTombstone(slot: number): void {
    this.tombstoneQueue.remove(this.expires[slot] as number);
    this.tombstoneBytes -= tombstoneCost(this.records.keyAt(slot));
  }

  /** Drops the oldest tombstones until one costing `cost` bytes fits the budget. */
  private makeRoomForTombstone(cost: number): void {
    while (this.tombstoneBytes + cost > this.tombstoneBytesMax && this.tombstoneQueue.size > 0) {
      this.removeSlot(this.tombstoneQueue.slotOf(this.tombstoneQueue.oldest()));
      this.onTombstoneDropped();
    }
  }

  private allocate(rec: VersionedRecord, hash: number, originId: number): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.highWater === this.state.length) this.grow();
      slot = this.highWater++;
    }
    this.records.add(slot, rec.key, rec.value);
    this.hashes[slot] = hash;
    this.index.insert(slot, hash);
    this.writeFields(slot, rec, originId);
    return slot;
  }

  private write(slot: number, rec: VersionedRecord, originId: number): void {
    this.records.setValue(slot, rec.value);
    this.writeFields(slot, rec, originId);
  }

  /** The record's numbers (its bytes are written by the caller). */
  private writeFields(slot: number, rec: VersionedRecord, originId: number): void {
    this.origins[slot] = originId;
    this.versions[slot] = rec.version;
    this.expires[slot] = rec.tombstone ? 0 : rec.expiresAtMs;
  }

  private grow(): void {
    const n = this.state.length * 2;
    const grown = <T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.versions = grown(this.versions, (k) => new Float64Array(k));
    this.expires = grown(this.expires, (k) => new Float64Array(k));
    this.hashes = grown(this.hashes, (k) => new Uint32Array(k));
    this.origins = grown(this.origins, (k) => new Uint16Array(k));
    this.state = grown(this.state, (k) => new Uint8Array(k));
    this.records.resize(n);
    this.policy.resize(n);
  }
}
