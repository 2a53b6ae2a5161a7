// What this node answers to peers on the data path, in internal types: forwarded writes, pushed
// records (through the one apply path), reads, key pages, Merkle anti-entropy, drain and health.
// peer/ adapts it to the Connect service; the in-memory transport calls it directly. Membership
// answers gossip and probe relays itself (membership/gossip-endpoint.ts).
import type { ShardedStore, VersionedRecord } from "../store/index.js";
import type { ApplyOutcome, PeerEndpoint } from "../transport/index.js";
import type { MerkleAnswers } from "./anti-entropy/merkle-answers.js";
import type { KeyLister } from "./key-listing.js";
import type { Lifecycle } from "./lifecycle.js";
import { recordsForPeer } from "./read/record-answers.js";
import type { ApplyVerdict, ReplicaApplier } from "./replica-applier.js";
import type { ForwardReceiver } from "./write/forward-receiver.js";

export type DataEndpoint = Omit<PeerEndpoint, "gossip" | "probe">;

export interface DataEndpointDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly lifecycle: Lifecycle;
  readonly applier: ReplicaApplier;
  readonly forwards: ForwardReceiver;
  readonly keys: KeyLister;
  readonly merkle: MerkleAnswers;
  /** This node's incarnation (membership), reported by health answers. */
  readonly incarnation: () => number;
}

/** The wire outcome of a pushed record: a duplicate delivery is reported "stale" (nothing changed). */
function outcomeOf(v: ApplyVerdict): ApplyOutcome {
  if (v.kind === "applied") return v.changed ? "applied" : "stale";
  return v.kind === "stale" ? "stale" : "refused";
}

export function createDataEndpoint(deps: DataEndpointDeps): DataEndpoint {
  const { applier, merkle } = deps;
  return {
    forward: (req) => deps.forwards.handle(req),
    applySet: (_from, records: readonly VersionedRecord[]) => applier.applyPushed(records.map((r) => (r.tombstone ? { ...r, tombstone: false } : r))).map(outcomeOf),
    applyRemove: (_from, tombstones: readonly VersionedRecord[]) =>
      applier.applyPushed(tombstones.map((r) => ({ ...r, value: "", expiresAtMs: 0, tombstone: true }))).map(outcomeOf),
    getRecords: (keys) => recordsForPeer(deps.store, keys),
    keysPage: (cursor, limit, q) => deps.keys.page(cursor, limit, q),
    health: () => ({ node: deps.selfId, draining: deps.lifecycle.draining, incarnation: deps.incarnation() }),
    merkleRoot: (requester, leafCount) => merkle.root(requester, leafCount),
    merkleLeaves: (requester, leafCount) => merkle.leaves(requester, leafCount),
    merkleRange: (requester, leafCount, leaves, cursor) => merkle.range(requester, leafCount, leaves, cursor),
    drain: () => void deps.lifecycle.drain("peer request"),
  };
}
