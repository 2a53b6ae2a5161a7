// The answering side of Inspect: what this node holds for each key, described without the value.
// Reads nothing but the records' headers (no value copied, no hit or miss counted, no
// eviction-policy touch).
import type { Clock } from "../../core/clock.js";
import { badRequest } from "../../core/errors.js";
import { INSPECT_KEYS_MAX } from "../../core/limits.js";
import { isLiveAt, type RecordHeader } from "../../store/index.js";
import type { RecordMeta } from "../../transport/index.js";

/** Where the records are read: the store's headers. */
export interface RecordHeaders {
  peekHeader(key: string): RecordHeader | undefined;
}

/** Describes one local record (undefined: none) at `nowMs`; an expired value counts as absent. */
export function recordMeta(key: string, rec: RecordHeader | undefined, nowMs: number): RecordMeta {
  if (rec?.tombstone === true) return { key, state: "tombstone", version: rec.version, origin: rec.origin, expiresAtMs: 0, lastUpdatedMs: rec.lastUpdatedMs, valueBytes: 0 };
  if (!isLiveAt(rec, nowMs)) return { key, state: "absent", version: 0, origin: "", expiresAtMs: 0, lastUpdatedMs: 0, valueBytes: 0 };
  return { key, state: "live", version: rec.version, origin: rec.origin, expiresAtMs: rec.expiresAtMs, lastUpdatedMs: rec.lastUpdatedMs, valueBytes: rec.valueBytes };
}

/** One description per key, in order; 400 BAD_REQUEST for no keys or more than INSPECT_KEYS_MAX. */
export function describeRecords(store: RecordHeaders, clock: Clock, keys: readonly string[]): RecordMeta[] {
  if (keys.length === 0 || keys.length > INSPECT_KEYS_MAX) throw badRequest(`inspect takes 1 to ${INSPECT_KEYS_MAX} keys, got ${keys.length}`);
  const now = clock.nowMs();
  return keys.map((k) => recordMeta(k, store.peekHeader(k), now));
}
