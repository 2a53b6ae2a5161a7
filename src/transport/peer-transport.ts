// The network as the data path and membership see it. Implemented by InMemoryTransport (a
// cluster in one process), ConnectPeerTransport (peer/client.ts) and ChaosTransport (faults).
//
// Every method rejects with a CacheError: UNAVAILABLE for transport failures (unreachable,
// timeout, dropped), or the receiver's own error code.
import type { ConsistencyLevel } from "../config/index.js";
import type { VersionedRecord } from "../store/index.js";
import type {
  ApplyOutcome, ForwardRequest, TouchOutcome, TouchPush, HealthInfo, HeldRecord, KeysPage, MerkleRangePage, MerkleRoot, OwnerChecks, PeerMember, PeerRef, ProbeResult, RecordMeta, WriteOutcome, LeaseOutcome, LeaseRelease, LeaseRequest,
} from "./types.js";

/** The calling side. */
export interface PeerTransport {
  forward(to: PeerRef, req: ForwardRequest): Promise<WriteOutcome[]>;
  /**
   * Pushes versioned values. `checks` (conditional writes), record by record: the sender's owner
   * list of the key; the receiver refuses a record whose owner list differs in its own ring.
   */
  set(to: PeerRef, from: string, records: readonly VersionedRecord[], checks?: OwnerChecks): Promise<ApplyOutcome[]>;
  /** Pushes versioned tombstones (`checks` as for set). */
  remove(to: PeerRef, from: string, tombstones: readonly VersionedRecord[], checks?: OwnerChecks): Promise<ApplyOutcome[]>;
  /**
   * Pushes touches without their values (SetRequest.touches); one outcome per touch, in order. A
   * receiver that does not know touches (an older node) answers "base-missing" for each.
   */
  touch(to: PeerRef, from: string, touches: readonly TouchPush[]): Promise<TouchOutcome[]>;
  /** The receiver's records of `keys`, in order (a prefix when they pass its size budget: ask again). */
  get(to: PeerRef, keys: readonly string[]): Promise<HeldRecord[]>;
  keys(to: PeerRef, cursor: string, limit: number, q: string): Promise<KeysPage>;
  /**
   * What `to` holds for each key (at most INSPECT_KEYS_MAX), without the values; one entry per
   * key in order. `timeoutMs` overrides the transport's call timeout.
   */
  inspect(to: PeerRef, keys: readonly string[], timeoutMs?: number): Promise<RecordMeta[]>;
  health(to: PeerRef): Promise<HealthInfo>;
  /** Asks `relay` to probe `targetId` on our behalf. */
  probe(relay: PeerRef, targetId: string): Promise<ProbeResult>;
  gossip(to: PeerRef, from: string, members: readonly PeerMember[]): Promise<PeerMember[]>;
  /** `pulledThroughMs`: the `asOfMs` that began the requester's last completed sync with `to` (0: none; sync-receipts.ts). */
  merkleRoot(to: PeerRef, requester: string, leafCount: number, pulledThroughMs: number): Promise<MerkleRoot>;
  merkleLeaves(to: PeerRef, requester: string, leafCount: number): Promise<string[]>;
  merkleRange(to: PeerRef, requester: string, leafCount: number, leaves: readonly number[], cursor: string): Promise<MerkleRangePage>;
  drain(to: PeerRef): Promise<void>;
  /**
   * Hands hints for `target` to `to`, which queues them as its own hints for the target.
   * Returns, per record, whether the receiver queued it (false: a cap of its queue dropped it).
   */
  handOffHints(to: PeerRef, from: string, target: PeerRef, records: readonly VersionedRecord[]): Promise<boolean[]>;
  /**
   * Asks the key's primary for its stampede lease after a lease read missed; the answer may take
   * up to `req.waitMs` (the call's timeout is that plus the peer timeout).
   */
  lease(to: PeerRef, req: LeaseRequest): Promise<LeaseOutcome>;
  /** Asks the key's primary to end the lease `req.token` names; true when that call ended it. */
  releaseLease(to: PeerRef, req: LeaseRelease): Promise<boolean>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** The receiving side: what a node answers. Composed by node.ts from dist and membership. */
export interface PeerEndpoint {
  forward(req: ForwardRequest): Promise<WriteOutcome[]>;
  applySet(from: string, records: readonly VersionedRecord[], checks?: OwnerChecks): ApplyOutcome[];
  applyRemove(from: string, tombstones: readonly VersionedRecord[], checks?: OwnerChecks): ApplyOutcome[];
  applyTouches(from: string, touches: readonly TouchPush[]): TouchOutcome[];
  getRecords(keys: readonly string[]): HeldRecord[];
  keysPage(cursor: string, limit: number, q: string): KeysPage;
  /** What this node holds for each key, without values (at most INSPECT_KEYS_MAX keys, else 400). */
  inspectRecords(keys: readonly string[]): RecordMeta[];
  health(): HealthInfo;
  probe(targetId: string): Promise<ProbeResult>;
  gossip(from: string, members: readonly PeerMember[]): PeerMember[];
  /** `pulledThroughMs` undefined: a requester from before the field (it does not hold compaction back). */
  merkleRoot(requester: string, leafCount: number, pulledThroughMs: number | undefined): Promise<MerkleRoot>;
  merkleLeaves(requester: string, leafCount: number): Promise<string[]>;
  merkleRange(requester: string, leafCount: number, leaves: readonly number[], cursor: string): Promise<MerkleRangePage>;
  drain(): void;
  /** Queues hints handed off by a draining peer (HandOffHints). */
  acceptHandOff(from: string, target: PeerRef, records: readonly VersionedRecord[]): boolean[];
  /** Answers a lease request as the key's primary, or "none" when this node is not its primary. */
  lease(req: LeaseRequest): LeaseOutcome | Promise<LeaseOutcome>;
  /** Ends the lease `req.token` names as the key's primary; false when it is not held here (or this node is not the primary). */
  releaseLease(req: LeaseRelease): boolean;
}

export type { ConsistencyLevel };
