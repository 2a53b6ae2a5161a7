// One store shard: records in parallel arrays indexed by slot ("struct of arrays"), a Map from
// key to slot, an eviction policy over the live slots and a FIFO of tombstones. Numbers live in
// typed arrays, so a record costs no per-item JS object and the GC has almost nothing to trace.
import type { ByteString } from "../core/byte-string.js";
import { compareVersions } from "./lww.js";
import { LruPolicy, type EvictionPolicy } from "./policies/index.js";
import { Applied, type ApplyResult, type VersionedRecord } from "./record.js";

const EMPTY = 0;
const LIVE = 1;
const TOMB = 2;
const INITIAL_SLOTS = 16;

const STALE_DUPLICATE: ApplyResult = Object.freeze({ applied: Applied.Duplicate, previousLive: false, previousBytes: 0 });
const STALE_OLDER: ApplyResult = Object.freeze({ applied: Applied.Older, previousLive: false, previousBytes: 0 });
const STORED_FRESH: ApplyResult = Object.freeze({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });

/** Why a live slot left the shard, for the store's counters. */
export type RemovalCause = "evicted" | "expired" | "released";

export class Shard {
  readonly index = new Map<string, number>();
  private keys: (string | undefined)[] = new Array<string | undefined>(INITIAL_SLOTS).fill(undefined);
  private values: ByteString[] = new Array<ByteString>(INITIAL_SLOTS).fill("");
  private origins: string[] = new Array<string>(INITIAL_SLOTS).fill("");
  private versions = new Float64Array(INITIAL_SLOTS);
  private updated = new Float64Array(INITIAL_SLOTS);
  private expires = new Float64Array(INITIAL_SLOTS);
  private state = new Uint8Array(INITIAL_SLOTS);
  private readonly free: number[] = [];
  private highWater = 0;
  /** Tombstones in creation order: the oldest is the policy's victim. */
  private readonly tombstoneOrder = new LruPolicy();

  live = 0;
  tombstones = 0;
  bytes = 0;

  constructor(
    private readonly policy: EvictionPolicy,
    /** Live items this shard holds at most. */
    readonly capacityShare: number,
    /** Tombstones this shard holds at most; the oldest is dropped first. */
    readonly tombstoneCap: number,
  ) {
    policy.resize(INITIAL_SLOTS);
    this.tombstoneOrder.resize(INITIAL_SLOTS);
  }

  /** Slot of `key`, or -1. */
  find(key: string): number {
    const slot = this.index.get(key);
    return slot === undefined ? -1 : slot;
  }

  isLive(slot: number): boolean {
    return this.state[slot] === LIVE;
  }

  isTombstone(slot: number): boolean {
    return this.state[slot] === TOMB;
  }

  /** True when the live slot's expiry has passed at `nowMs`. */
  isExpired(slot: number, nowMs: number): boolean {
    const e = this.expires[slot] as number;
    return e !== 0 && e <= nowMs;
  }

  keyAt(slot: number): string {
    return this.keys[slot] as string;
  }
  valueAt(slot: number): ByteString {
    return this.values[slot] as ByteString;
  }
  versionAt(slot: number): number {
    return this.versions[slot] as number;
  }
  originAt(slot: number): string {
    return this.origins[slot] as string;
  }
  updatedAt(slot: number): number {
    return this.updated[slot] as number;
  }
  expiresAt(slot: number): number {
    return this.expires[slot] as number;
  }

  /** The whole record in a slot. */
  recordAt(slot: number): VersionedRecord {
    return {
      key: this.keys[slot] as string,
      value: this.values[slot] as ByteString,
      version: this.versions[slot] as number,
      origin: this.origins[slot] as string,
      lastUpdatedMs: this.updated[slot] as number,
      expiresAtMs: this.expires[slot] as number,
      tombstone: this.state[slot] === TOMB,
    };
  }

  touchRead(slot: number): void {
    this.policy.touchRead(slot);
  }

  /**
   * Applies `rec` when it is newer than the local record (last-write-wins). Making room for a
   * new live record evicts first, through `onEvict`, so the new record is never its own victim.
   */
  apply(rec: VersionedRecord, nowMs: number, onEvict: (slot: number) => void): ApplyResult {
    const existing = this.index.get(rec.key);
    if (existing === undefined) {
      if (rec.tombstone) {
        this.makeRoomForTombstone();
        const slot = this.allocate(rec);
        this.state[slot] = TOMB;
        this.tombstones++;
        this.tombstoneOrder.insert(slot);
      } else {
        if (this.live >= this.capacityShare) this.evictOne(onEvict);
        const slot = this.allocate(rec);
        this.state[slot] = LIVE;
        this.live++;
        this.bytes += rec.value.length;
        this.policy.insert(slot);
      }
      return STORED_FRESH;
    }
    const slot = existing;
    const cmp = compareVersions(rec.version, rec.origin, this.versions[slot] as number, this.origins[slot] as string);
    if (cmp <= 0) return cmp === 0 ? STALE_DUPLICATE : STALE_OLDER;
    const wasLive = this.state[slot] === LIVE;
    const previousLive = wasLive && !this.isExpired(slot, nowMs);
    const previousBytes = previousLive ? (this.values[slot] as string).length : 0;
    if (rec.tombstone) {
      if (wasLive) {
        this.policy.remove(slot);
        this.live--;
        this.bytes -= (this.values[slot] as string).length;
        this.makeRoomForTombstone();
        this.state[slot] = TOMB;
        this.tombstones++;
        this.tombstoneOrder.insert(slot);
      } else {
        // A newer tombstone replaces an older one: it restarts its age.
        this.tombstoneOrder.touchWrite(slot);
      }
    } else if (wasLive) {
      this.bytes += rec.value.length - (this.values[slot] as string).length;
      this.policy.touchWrite(slot);
    } else {
      this.tombstoneOrder.remove(slot);
      this.tombstones--;
      if (this.live >= this.capacityShare) this.evictOne(onEvict);
      this.state[slot] = LIVE;
      this.live++;
      this.bytes += rec.value.length;
      this.policy.insert(slot);
    }
    this.write(slot, rec);
    return previousLive ? { applied: Applied.Stored, previousLive, previousBytes } : STORED_FRESH;
  }

  /** Physically removes a slot (live or tombstone); no tombstone is left. */
  removeSlot(slot: number): void {
    const s = this.state[slot];
    if (s === EMPTY) return;
    if (s === LIVE) {
      this.policy.remove(slot);
      this.live--;
      this.bytes -= (this.values[slot] as string).length;
    } else {
      this.tombstoneOrder.remove(slot);
      this.tombstones--;
    }
    this.index.delete(this.keys[slot] as string);
    this.keys[slot] = undefined;
    this.values[slot] = "";
    this.origins[slot] = "";
    this.expires[slot] = 0;
    this.state[slot] = EMPTY;
    this.free.push(slot);
  }

  /** Evicts live records while the shard is over its share; returns how many. */
  evictOverCapacity(onEvict: (slot: number) => void): number {
    let n = 0;
    while (this.live > this.capacityShare && this.evictOne(onEvict)) n++;
    return n;
  }

  /** Removes expired live records and tombstones older than `tombstoneTtlMs`. */
  sweep(nowMs: number, tombstoneTtlMs: number, onExpire: (slot: number) => void): { expired: number; compacted: number } {
    let expired = 0;
    for (let slot = 0; slot < this.highWater; slot++) {
      if (this.state[slot] === LIVE) {
        const e = this.expires[slot] as number;
        if (e !== 0 && e <= nowMs) {
          onExpire(slot);
          this.removeSlot(slot);
          expired++;
        }
      }
    }
    let compacted = 0;
    for (;;) {
      const oldest = this.tombstoneOrder.victim();
      if (oldest < 0 || (this.updated[oldest] as number) + tombstoneTtlMs > nowMs) break;
      this.removeSlot(oldest);
      compacted++;
    }
    return { expired, compacted };
  }

  /** Removes every record; returns how many live records there were. */
  clear(): number {
    const n = this.live;
    this.index.clear();
    this.keys.fill(undefined);
    this.values.fill("");
    this.origins.fill("");
    this.versions.fill(0);
    this.updated.fill(0);
    this.expires.fill(0);
    this.state.fill(EMPTY);
    this.free.length = 0;
    this.highWater = 0;
    this.policy.clear();
    this.tombstoneOrder.clear();
    this.live = this.tombstones = this.bytes = 0;
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
      if (!visit(this.keys[slot] as string, slot)) return slot + 1;
    }
    return -1;
  }

  /** Visits every record slot (live, expired or tombstone). */
  forEachSlot(visit: (slot: number) => void): void {
    for (let slot = 0; slot < this.highWater; slot++) if (this.state[slot] !== EMPTY) visit(slot);
  }

  private evictOne(onEvict: (slot: number) => void): boolean {
    const victim = this.policy.victim();
    if (victim < 0) return false;
    onEvict(victim);
    this.removeSlot(victim);
    return true;
  }

  private makeRoomForTombstone(): void {
    if (this.tombstones >= this.tombstoneCap) {
      const oldest = this.tombstoneOrder.victim();
      if (oldest >= 0) this.removeSlot(oldest);
    }
  }

  private allocate(rec: VersionedRecord): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.highWater === this.state.length) this.grow();
      slot = this.highWater++;
    }
    this.keys[slot] = rec.key;
    this.index.set(rec.key, slot);
    this.write(slot, rec);
    return slot;
  }

  private write(slot: number, rec: VersionedRecord): void {
    this.values[slot] = rec.value;
    this.origins[slot] = rec.origin;
    this.versions[slot] = rec.version;
    this.updated[slot] = rec.lastUpdatedMs;
    this.expires[slot] = rec.tombstone ? 0 : rec.expiresAtMs;
  }

  private grow(): void {
    const n = this.state.length * 2;
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.versions = f64(this.versions);
    this.updated = f64(this.updated);
    this.expires = f64(this.expires);
    const st = new Uint8Array(n);
    st.set(this.state);
    this.state = st;
    const old = this.keys.length;
    for (let i = old; i < n; i++) {
      this.keys.push(undefined);
      this.values.push("");
      this.origins.push("");
    }
    this.policy.resize(n);
    this.tombstoneOrder.resize(n);
  }
}
