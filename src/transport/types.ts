// Internal types of the peer protocol, shared by every transport. They mirror the messages of
// proto/ without depending on the generated code, so internals and wire can evolve separately.
import type { ConsistencyLevel } from "../config/index.js";
import type { IdempotentStamp, VersionedRecord } from "../store/index.js";

/** A remote node: its id and dist address (host:port). */
export interface PeerRef {
  readonly id: string;
  readonly address: string;
}

export type PeerMemberState = "alive" | "suspect" | "dead";

/** A membership entry as gossip carries it. */
export interface PeerMember {
  readonly id: string;
  readonly address: string;
  readonly state: PeerMemberState;
  readonly incarnation: number;
  readonly lastSeenMs: number;
  /** Advertised client and management base URLs; empty or absent while not known. */
  readonly apiUrl?: string;
  readonly mgmtUrl?: string;
  /** The member is draining: it holds no ring position (absent means false). */
  readonly draining?: boolean;
  /** The member left for good (only in its own claim); receivers remove it. */
  readonly left?: boolean;
}

/**
 * What a receiver did with one pushed record, and what it holds for the key afterwards.
 * - "applied": it holds the record now (stored, or it already held exactly this version and
 *   origin); the only outcome that acknowledges a write.
 * - "stale": it holds a newer version (`version`, `origin`); the record was not stored.
 * - "refused": it does not own the key in its ring view (ownership guard); nothing was stored.
 */
export interface ApplyOutcome {
  readonly kind: "applied" | "stale" | "refused";
  /** Version the receiver holds for the key; 0 when it holds none or did not say. */
  readonly version: number;
  readonly origin: string;
  /**
   * The receiver lost contact and has not caught up since (quorum-vote.ts, acknowledges):
   * "applied" stored the record but is no acknowledgement.
   */
  readonly abstains?: boolean;
}

/**
 * A touch pushed without its value (SetRequest.touches): the new version, origin and expiry of
 * the item whose version and origin were `baseVersion` and `baseOrigin`. The receiver applies it
 * on top of that item only (cluster/replica-applier.ts applyTouches).
 */
export interface TouchPush {
  readonly key: string;
  readonly baseVersion: number;
  readonly baseOrigin: string;
  readonly version: number;
  readonly origin: string;
  /** The new expiry, Unix ms; 0 = never. */
  readonly expiresAtMs: number;
  readonly lastUpdatedMs: number;
  /** The sender's owner list of the key, primary first; always checked (a touch is conditional). */
  readonly owners: readonly string[];
}

/**
 * What a receiver did with one pushed touch: an ApplyOutcome, or "base-missing" when it does not
 * hold the item touched and stored nothing (the sender pushes the full item instead).
 */
export type TouchOutcome = ApplyOutcome | { readonly kind: "base-missing"; readonly version: number; readonly origin: string };

/** The "base-missing" answer to a pushed touch (it holds nothing of the touch to report). */
export const BASE_MISSING: TouchOutcome = Object.freeze({ kind: "base-missing", version: 0, origin: "" });

/**
 * Per pushed record, in order: the owner list (primary first) the receiver checks the record's key
 * against before storing it, or undefined for no check. A conditional write's primary sends its own
 * list, so an owner that sees another ring refuses the record instead of acknowledging it.
 */
export type OwnerChecks = ReadonlyArray<readonly string[] | undefined>;

/**
 * A client's If-Match / If-None-Match on a write: "*" or entity tags as sent (core/etag.ts).
 * Only the key's primary evaluates it (cluster/write/conditional-writer.ts).
 */
export interface WriteCondition {
  readonly ifMatch?: "*" | readonly string[];
  /** Only "*": the write applies only when no live item exists. */
  readonly ifNoneMatch?: "*";
}

/** One client write forwarded to its primary. */
export interface ClientWrite {
  /**
   * "touch": a new version of the live item with the same value and a new expiry. "incr": add
   * `delta` to the key's counter (cluster/write/counter-writer.ts).
   */
  readonly kind: "set" | "remove" | "touch" | "incr";
  readonly key: string;
  /** Value bytes of a set (a byte string); empty for remove and touch. */
  readonly value: string;
  /** Time to live of a set (or the new one of a touch), ms; 0 = none. */
  readonly ttlMs: number;
  /**
   * Set only, on the node that stamps it (never forwarded): the absolute expiry the record keeps
   * (Unix ms, 0 = none) instead of `ttlMs` counted from the write's time. A counter keeps its
   * expiry across increments; as a TTL from now it moved later on each increment whenever the
   * version clock ran ahead of the wall clock.
   */
  readonly expiresAtMs?: number;
  /** Local only, as expiresAtMs: the result an increment's record carries to the other owners (VersionedRecord.idempotent). */
  readonly idempotent?: IdempotentStamp;
  /** The client's condition, when the write is conditional. */
  readonly condition?: WriteCondition;
  /** Touch only: remove the expiry. */
  readonly persist?: boolean;
  /** Incr only: the amount to add, and the start of a counter created by it. */
  readonly delta?: number;
  readonly initial?: number;
  /** Incr only: the client's Idempotency-Key. */
  readonly idempotencyKey?: string;
  /**
   * Set only: the token of the stampede lease this set fills (X-Cache-Lease). Only the key's
   * primary takes it, and stores it only while that lease is held (cluster/lease/lease-table.ts).
   */
  readonly leaseToken?: string;
  /**
   * A conditional write or touch forwarded by an owner that applies the primary's result itself
   * (ForwardRequest.senderApplies): what the primary needs to decide whether to count it.
   */
  readonly sender?: SenderView;
}

/** What a forwarding owner saw of a conditional write's key when it forwarded it. */
export interface SenderView {
  /** Its owner list of the key, primary first. */
  readonly owners: readonly string[];
  /** Touch only: version and origin of the live item it holds (0 and "": none). */
  readonly baseVersion: number;
  readonly baseOrigin: string;
}

/**
 * True for writes only the key's primary may apply, serialised per key: conditional writes
 * (increments with If-Match included) and touches (read-modify-write). They are never promoted
 * to another owner.
 */
export function isConditional(w: ClientWrite): boolean {
  return w.condition !== undefined || w.kind === "touch";
}

/**
 * True for writes only the key's primary takes: conditional writes and touches, and lease fills
 * (the lease lives in the primary's memory). They are never promoted to another owner.
 */
export function primaryOnly(w: ClientWrite): boolean {
  return w.leaseToken !== undefined || isConditional(w);
}

/** The coordinator's outcome for one forwarded write. */
export interface WriteOutcome {
  readonly key: string;
  readonly applied: boolean;
  readonly bytes: number;
  readonly owners: readonly string[];
  readonly version: number;
  readonly origin: string;
  /** Empty on success, else a service error code. */
  readonly errorCode: string;
  readonly errorMessage: string;
  /** With errorCode: the error's details, relayed to the client as they are. */
  readonly errorDetails?: Readonly<Record<string, unknown>>;
  /** Expiry the coordinator stamped, Unix ms; 0 = never. */
  readonly expiresAtMs: number;
  /** With errorCode PRECONDITION_FAILED: the current item's ETag; absent when there is no live item. */
  readonly currentEtag?: string;
  /** Incr: the counter's value after the increment. */
  readonly counterValue?: number;
  /**
   * The coordinator counted the sender (ForwardRequest.senderApplies) among the acknowledgements
   * without pushing the write to it: the sender must hold the result before it answers.
   */
  readonly senderCounted?: boolean;
}

export interface ForwardRequest {
  readonly from: string;
  readonly consistency: ConsistencyLevel | undefined;
  readonly writes: readonly ClientWrite[];
  /** The sender owns the keys and applies each successful result itself (no push back to it). */
  readonly senderApplies?: boolean;
  /** When the sender sent it, Unix ms (its clock); 0 or absent: no deadline. */
  readonly sentAtMs?: number;
}

/** What a node holds for a key, without the value (the Inspect call). */
export interface RecordMeta {
  readonly key: string;
  /** "absent" also for a value past its expiry (reads treat it as absent). */
  readonly state: "absent" | "live" | "tombstone";
  /** Version and origin of a live value or tombstone; 0 and "" when absent. */
  readonly version: number;
  readonly origin: string;
  /** Expiry of a live value, Unix ms; 0 = never (and for other states). */
  readonly expiresAtMs: number;
  /** When the origin applied the write or delete, Unix ms; 0 when absent. */
  readonly lastUpdatedMs: number;
  /** Size of a live value in bytes; 0 otherwise. */
  readonly valueBytes: number;
}

/** A client's lease read that missed, sent to the key's primary (Lease). */
export interface LeaseRequest {
  /** The node the client called. */
  readonly from: string;
  readonly key: string;
  /** How long a lease granted now lasts, ms. */
  readonly leaseMs: number;
  /** How long to wait for the value while another caller holds the lease, ms (0: not at all). */
  readonly waitMs: number;
}

/** A lease holder's release of a lease it will not fill, sent to the key's primary (ReleaseLease). */
export interface LeaseRelease {
  /** The node the client called. */
  readonly from: string;
  readonly key: string;
  /** The lease's token (X-Cache-Lease). */
  readonly token: string;
}

/**
 * What the key's primary answered a lease read: the live record ("hit"), a new lease for the
 * caller ("granted", its token), another caller's lease with no value within the wait ("held",
 * ms until that lease ends at the latest), or no lease at all ("none": not the primary, or at
 * the lease cap; the client gets a plain miss).
 */
export type LeaseOutcome =
  | { readonly kind: "hit"; readonly record: VersionedRecord }
  | { readonly kind: "granted"; readonly token: string }
  | { readonly kind: "held"; readonly retryAfterMs: number }
  | { readonly kind: "none" };

/**
 * A peer's answer for one key of a Get: its record (a value, an expired value or a tombstone;
 * undefined when it holds none) and whether the answer counts towards a quorum read. It does not
 * when the peer does not own the key in its own ring view (its record is left from a former
 * ownership) or may have missed writes and has not caught up since (cluster/quorum-vote.ts): a
 * quorum read takes such a record into account when it is newer, but does not count the answer.
 */
export interface HeldRecord {
  readonly record: VersionedRecord | undefined;
  readonly counts: boolean;
}

export interface KeysPage {
  readonly keys: string[];
  readonly nextCursor: string;
  readonly truncated: boolean;
}

export interface HealthInfo {
  readonly node: string;
  readonly draining: boolean;
  readonly incarnation: number;
  /** The node's wall clock when it answered, ms since the epoch (0 when not sent). */
  readonly unixMs?: number;
}

export interface ProbeResult {
  readonly target: string;
  readonly ok: boolean;
  readonly error: string;
}

export interface MerkleRoot {
  /** Root hash, hex. */
  readonly root: string;
  readonly leafCount: number;
  readonly recordCount: number;
  /**
   * Whether the requester is on the answering node's ring (the keys both own are computed with
   * it); undefined from a node that does not say (one before the field), taken as true.
   */
  readonly requesterOnRing?: boolean;
  /** The answering node's wall clock (Unix ms) when it began the answer; 0 from a node before the field. */
  readonly asOfMs: number;
}

export interface MerkleRangePage {
  readonly records: VersionedRecord[];
  readonly nextCursor: string;
}
