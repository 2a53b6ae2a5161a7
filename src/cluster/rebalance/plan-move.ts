// Where one local record goes when ring ownership changes (pure).
import { hash32 } from "../../core/hash.js";
import type { HashRing } from "../../ring/index.js";
import type { VersionedRecord } from "../../store/index.js";

/** A record to send, its targets, and whether the local copy is released once delivered. */
export interface Move {
  readonly record: VersionedRecord;
  readonly targets: string[];
  readonly release: boolean;
}

/**
 * What to do with one local record when ownership goes from ring `from` to ring `to` (pure).
 * Returns undefined when nothing has to move.
 */
export function planMove(rec: VersionedRecord, from: HashRing, to: HashRing, selfId: string): Move | undefined {
  // The key's ring position: hash32, as on every node.
  const hash = hash32(rec.key);
  const next = to.ownersAtHash(hash);
  if (next.ids.length === 0) return undefined;
  const prev = from.ownersAtHash(hash);
  const survivors = prev.ids.filter((id) => to.nodes.includes(id));
  if (!next.ids.includes(selfId)) {
    // Every old owner that loses the key hands it to the new primary; when no old owner stays an
    // owner, the first surviving one also fills the new replicas, or they would start empty.
    const keeper = survivors.find((id) => next.ids.includes(id));
    const targets = keeper === undefined && survivors[0] === selfId ? [...next.ids] : [next.primary];
    return { record: rec, targets, release: true };
  }
  // One sender per key: the first old owner still on the ring (this node when the old owners left).
  if (survivors.length > 0 && survivors[0] !== selfId) return undefined;
  const newcomers = next.ids.filter((id) => id !== selfId && !prev.ids.includes(id));
  return newcomers.length > 0 ? { record: rec, targets: newcomers, release: false } : undefined;
}

/**
 * How long a value this node no longer owns may wait to move, in ms: half of
 * SERVICE_TOMBSTONE_TTL. Deletes of the key go to its new owners meanwhile, and their tombstones
 * live for the TTL from when they arrived there: a copy delivered after that would bring the key
 * back. The other half covers the time between the first node seeing the ring change and this
 * one, and a batch still in flight (docs/design.md, "Rebalance and anti-entropy").
 */
export function copyHoldMaxMs(tombstoneTtlMs: number): number {
  return Math.floor(tombstoneTtlMs / 2);
}

/**
 * Whether a move is bound by copyHoldMaxMs: a value this node no longer owns. A tombstone may
 * land at any time (it only deletes older versions), and a copy this node still owns stays
 * current through the writes and deletes it keeps receiving as an owner.
 */
export function isHeldCopy(move: Move): boolean {
  return move.release && !move.record.tombstone;
}
