// What the data path knows about the cluster: the ring, how to reach a node, and the counts that
// size quorums. Membership provides it through node.ts; the ring never reads configuration.
import type { HashRing } from "../ring/index.js";
import type { PeerRef } from "../transport/index.js";

export interface ClusterView {
  readonly selfId: string;
  /** The current ring (alive and suspect members). */
  ring(): HashRing;
  /** How to reach a member; undefined when it is not a member. */
  peer(id: string): PeerRef | undefined;
  /** Alive peers, the local node excluded. */
  alivePeers(): PeerRef[];
  /** Peers that hold ring positions (alive and suspect), the local node excluded. */
  ringPeers(): PeerRef[];
  /** Nodes seen in the cluster, pruned ones included (only a manual removal lowers it). */
  knownCount(): number;
  /** Members not dead, the local node included. */
  notDeadCount(): number;
  /**
   * True while this node's copy of the data may be incomplete: just after start-up, after a ring
   * change, or while a rebalance is moving keys. Reads then look past a local miss.
   */
  unsettled(): boolean;
}
