// Quorum arithmetic (pure). R is the replica count a request needs answers from:
// min(replication, nodes this node has seen in the cluster, pruned ones included; only a
// manual removal lowers it).
import type { ConsistencyLevel } from "../../config/index.js";

export function replicaCount(replication: number, knownNodes: number): number {
  return Math.max(1, Math.min(replication, knownNodes));
}

/** Acknowledgements (or answers) a level needs out of `r`: ONE 1, QUORUM floor(r/2)+1, ALL r. */
export function requiredAcks(level: ConsistencyLevel, r: number): number {
  switch (level) {
    case "one":
      return 1;
    case "quorum":
      return Math.floor(r / 2) + 1;
    case "all":
      return r;
  }
}

/**
 * A QUORUM or ALL write is accepted only while this node sees a strict majority of the known
 * nodes (itself included) not dead, so the minority side of a partition refuses them even
 * after it has pruned the others.
 */
export function hasMajority(notDeadNodes: number, knownNodes: number): boolean {
  return notDeadNodes * 2 > knownNodes;
}
