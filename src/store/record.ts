// Records as the store holds and exchanges them.
import type { ByteString } from "../core/byte-string.js";

/** A versioned record: a live value or a tombstone. */
export interface VersionedRecord {
  readonly key: string;
  /** Value bytes; "" for a tombstone. */
  readonly value: ByteString;
  /** Last-write-wins version (hybrid clock: wall ms x 1000 + counter). */
  readonly version: number;
  /** Node that stamped the version. */
  readonly origin: string;
  /** When the origin applied the write, Unix ms: the wall-clock part of the version (version / 1000). The store derives it from the version and ignores the given value on apply. */
  readonly lastUpdatedMs: number;
  /** Absolute expiry, Unix ms; 0 = never. Always 0 for a tombstone. */
  readonly expiresAtMs: number;
  readonly tombstone: boolean;
  /**
   * On the record of an increment under an Idempotency-Key as its adding node pushes it (never
   * stored): what the increment answered, for the receivers to remember (Entry.idempotent).
   */
  readonly idempotent?: IdempotentStamp;
}

/** What an increment under an Idempotency-Key answered (the record gives version, origin, expiry). */
export interface IdempotentStamp {
  /** The Idempotency-Key as scoped to the caller (key-actions.ts scopedIdempotencyKey). */
  readonly idemKey: string;
  readonly fingerprint: string;
  /** The counter's value it answered. */
  readonly value: number;
  readonly appliedBy: string;
}

/** A record described without its value: what holding it costs, not what it holds. */
export interface RecordHeader extends Omit<VersionedRecord, "value"> {
  /** Bytes of the value; 0 for a tombstone. */
  readonly valueBytes: number;
}

/** The header of `rec` (its value's size in place of the value). */
export function headerOf(rec: VersionedRecord): RecordHeader {
  return { key: rec.key, version: rec.version, origin: rec.origin, lastUpdatedMs: rec.lastUpdatedMs, expiresAtMs: rec.expiresAtMs, tombstone: rec.tombstone, valueBytes: rec.value.length };
}

/**
 * True when `rec` is a live item at `nowMs`: a value, not a tombstone, whose expiry (0: never) has
 * not passed. The one live check of records outside the store's slots (reads, conditions,
 * counters, leases, scans).
 */
export function isLiveAt<R extends Pick<VersionedRecord, "tombstone" | "expiresAtMs">>(rec: R | undefined, nowMs: number): rec is R {
  return rec !== undefined && !rec.tombstone && (rec.expiresAtMs === 0 || rec.expiresAtMs > nowMs);
}

/** What a version-gated apply did. */
export const enum Applied {
  /** Stored: newer than the local record (or there was none). */
  Stored = 1,
  /** Ignored: the local record has the same version and origin (a duplicate delivery). */
  Duplicate = 2,
  /** Ignored: the local record is newer (a conflict, counted by the caller). */
  Older = 3,
  /**
   * Not stored, nothing changed: the write adds bytes while the store is more than its overshoot
   * over its byte budget and still evicting (data-budget.ts). Retry later.
   */
  Refused = 4,
}

/** The result of an apply, with what it replaced. */
export interface ApplyResult {
  readonly applied: Applied;
  /** The key held a live, unexpired value before this apply. */
  readonly previousLive: boolean;
  /** Size of that previous value; 0 when there was none. */
  readonly previousBytes: number;
}

/** The results of an apply that replaced no live value. */
export const STALE_DUPLICATE: ApplyResult = Object.freeze({ applied: Applied.Duplicate, previousLive: false, previousBytes: 0 });
export const STALE_OLDER: ApplyResult = Object.freeze({ applied: Applied.Older, previousLive: false, previousBytes: 0 });
export const STORED_FRESH: ApplyResult = Object.freeze({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });
export const REFUSED: ApplyResult = Object.freeze({ applied: Applied.Refused, previousLive: false, previousBytes: 0 });

/** Bookkeeping bytes counted per tombstone on top of its key (slot arrays, index, age queue). */
const TOMBSTONE_OVERHEAD_BYTES = 64;

/** Bytes one tombstone of `key` is charged against the tombstone budget. */
export function tombstoneCost(key: string): number {
  return 2 * key.length + TOMBSTONE_OVERHEAD_BYTES;
}

/** Wall-clock milliseconds of a version. */
export function versionTimeMs(version: number): number {
  return Math.floor(version / 1000);
}
