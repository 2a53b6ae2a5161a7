// How a counter record that arrives from a peer meets the counter this node holds (pure):
// counters merge (core/counter-state.ts) instead of last-write-wins. Anything else (either side
// not a live counter) stays with the version gate, so a PUT or DELETE newer than a counter
// replaces it, and a counter newer than them replaces them.
import { decodeCounter, encodeCounter, mergeCounters, sameCounter } from "../core/counter-state.js";
import { compareVersions, type VersionedRecord } from "../store/index.js";

export type CounterMerge =
  /** Not two counters, or the incoming record is the merge and newer: the version gate decides. */
  | { readonly kind: "gate" }
  /** The held counter already contains the incoming one: nothing to store (an acknowledgement). */
  | { readonly kind: "held" }
  /** Store this merged record, stamped just above both. */
  | { readonly kind: "store"; readonly record: VersionedRecord };

const GATE: CounterMerge = Object.freeze({ kind: "gate" });
const HELD: CounterMerge = Object.freeze({ kind: "held" });

/**
 * The merge of `incoming` into `held`. A merged state that equals neither side is stamped with
 * `selfId` as origin and the version just above both sides, not with the clock: a merge orders
 * after the copies it joins and before any write stamped more than one unit above them (one
 * stamped within that unit, the same millisecond, can lose to it: docs/design.md, counters,
 * "Limit"). Stamped with the clock
 * ("now"), a merge of two copies older than a DELETE outranked the DELETE's tombstone, and the
 * deleted counter came back on every owner (a review, reproduced in sim/counters seed 4471).
 */
export function mergeCounterRecord(incoming: VersionedRecord, held: VersionedRecord | undefined, selfId: string): CounterMerge {
  if (incoming.tombstone || held === undefined || held.tombstone) return GATE;
  const mine = decodeCounter(held.value);
  const theirs = mine === undefined ? undefined : decodeCounter(incoming.value);
  if (mine === undefined || theirs === undefined) return GATE;
  const merged = mergeCounters(mine, theirs);
  const newer = compareVersions(incoming.version, incoming.origin, held.version, held.origin) > 0;
  if (sameCounter(merged, theirs) && newer) return GATE;
  if (sameCounter(merged, mine)) return HELD;
  const version = Math.max(incoming.version, held.version) + 1;
  const winner = theirs.generation > mine.generation || (theirs.generation === mine.generation && newer) ? incoming : held;
  return {
    kind: "store",
    record: { key: held.key, value: encodeCounter(merged), version, origin: selfId, lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: winner.expiresAtMs, tombstone: false },
  };
}
