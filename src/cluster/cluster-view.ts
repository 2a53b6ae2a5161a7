// What the data path knows about the cluster: the ring, how to reach a node, and the counts that
// size quorums. createClusterView builds it from membership, the ring follower and the settle
// window; the ring never reads configuration.
import type { HashRing } from "../ring/index.js";
import type { PeerRef } from "../transport/index.js";
import type { RingFollower } from "./ring-follower.js";
import type { SettleWindow } from "./settle-window.js";

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
  /** True when this node suspects member `id` (its probes fail): such owners are tried last. */
  suspect(id: string): boolean;
  /** Nodes seen in the cluster, pruned ones included (only a manual removal lowers it). */
  knownCount(): number;
  /** Members not dead, the local node included. */
  notDeadCount(): number;
  /** Alive members, the local node included (suspect ones are not). */
  aliveCount(): number;
  /**
   * True while this node's copy of the data may be incomplete: just after start-up, after a ring
   * change, or while a rebalance is moving keys. Reads then look past a local miss.
   */
  unsettled(): boolean;
}

/** What the view needs of the member table (membership/MemberTable provides it). */
export interface MemberDirectory {
  get(id: string): { readonly address: string; readonly state: "alive" | "suspect" | "dead" } | undefined;
  peers(...states: Array<"alive" | "suspect" | "dead">): ReadonlyArray<{ readonly id: string; readonly address: string }>;
  knownCount(): number;
  notDeadCount(): number;
  aliveCount(): number;
}

export function createClusterView(deps: { selfId: string; members: MemberDirectory; ring: RingFollower; settle: SettleWindow }): ClusterView {
  const { selfId, members } = deps;
  const refs = (list: ReadonlyArray<{ readonly id: string; readonly address: string }>): PeerRef[] => list.map((m) => ({ id: m.id, address: m.address }));
  return {
    selfId,
    ring: () => deps.ring.current(),
    peer: (id) => {
      const m = members.get(id);
      return m && id !== selfId ? { id, address: m.address } : undefined;
    },
    alivePeers: () => refs(members.peers("alive")),
    ringPeers: () => refs(members.peers("alive", "suspect")),
    suspect: (id) => members.get(id)?.state === "suspect",
    knownCount: () => members.knownCount(),
    notDeadCount: () => members.notDeadCount(),
    aliveCount: () => members.aliveCount(),
    unsettled: () => deps.settle.unsettled(),
  };
}
