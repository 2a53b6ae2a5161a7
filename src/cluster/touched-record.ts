// The record a touch leaves on a node that holds the item touched (pure). A touch's result carries
// no value, so both of its receivers that apply it without one build it here from what they hold:
// a forwarding owner the primary counted (write/forward-result.ts) and a replica the primary
// pushed the touch to (ReplicaApplier.applyTouches).
import type { RecordHeader, VersionedRecord } from "../store/index.js";
import type { TouchPush } from "../transport/index.js";

/** What a touch says: the item it was applied on (base), and the new version, origin and expiry. */
export type TouchResult = Pick<TouchPush, "baseVersion" | "baseOrigin" | "version" | "origin" | "expiresAtMs" | "lastUpdatedMs">;

/**
 * True when `held` (a record or its header) is the item touched: a value (expired or not, not a
 * tombstone) of the base's version and origin.
 */
export function isTouchBase(held: Pick<RecordHeader, "version" | "origin" | "tombstone"> | undefined, t: Pick<TouchResult, "baseVersion" | "baseOrigin">): boolean {
  return held !== undefined && !held.tombstone && held.version === t.baseVersion && held.origin === t.baseOrigin;
}

/**
 * `held` with the touch's version, origin, expiry and last-updated time (the same value), when it
 * is the item touched: a value (expired or not, not a tombstone) of the base's version and origin.
 * Undefined otherwise (another version, a tombstone, nothing held).
 */
export function touchedRecord(held: VersionedRecord | undefined, t: TouchResult): VersionedRecord | undefined {
  if (held === undefined || !isTouchBase(held, t)) return undefined;
  return { key: held.key, value: held.value, version: t.version, origin: t.origin, lastUpdatedMs: t.lastUpdatedMs, expiresAtMs: t.expiresAtMs, tombstone: false };
}
