// How much of the hash space each node of a ring holds: as primary, and as one of the owners.
// Pure and exact: arcs are counted in whole 32-bit hash values, divided once at the end.
import { HASH_SPACE, type HashRing } from "./hash-ring.js";

/** One node's part of the hash space, each a fraction in [0, 1]. */
export interface NodeShare {
  readonly id: string;
  /**
   * Fraction of the hash space whose primary (first owner) is this node: the fraction of keys
   * it coordinates. The primary shares of a non-empty ring add up to 1.
   */
  readonly primaryShare: number;
  /**
   * Fraction of the hash space for which this node is one of the `replication` owners (primary
   * or replica): the fraction of keys it holds a copy of. The owner shares add up to
   * min(replication, nodes on the ring).
   */
  readonly ownerShare: number;
}

/**
 * The shares of every node on `ring`, sorted by id. Work is one pass over the ring's points
 * (nodes × virtual nodes × replication).
 */
export function ringShares(ring: HashRing): NodeShare[] {
  const primary = new Map<string, number>();
  const owner = new Map<string, number>();
  for (const id of ring.nodes) {
    primary.set(id, 0);
    owner.set(id, 0);
  }
  ring.forEachArc((hashes, owners) => {
    if (hashes === 0) return;
    primary.set(owners.primary, (primary.get(owners.primary) ?? 0) + hashes);
    for (const id of owners.ids) owner.set(id, (owner.get(id) ?? 0) + hashes);
  });
  return ring.nodes.map((id) => ({ id, primaryShare: (primary.get(id) ?? 0) / HASH_SPACE, ownerShare: (owner.get(id) ?? 0) / HASH_SPACE }));
}
