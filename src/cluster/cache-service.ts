// What the client API asks of the node: key operations with their consistency, owners and the
// cluster-wide key listing. Implemented by DistCache.
import type { ByteString } from "../core/byte-string.js";
import type { CacheError } from "../core/errors.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { Owners } from "../ring/index.js";
import type { LiveItem } from "../store/index.js";
import type { WriteCondition } from "../transport/index.js";

/** The outcome of one client write. */
export interface WriteResult {
  readonly key: string;
  /** Set: the value was stored. Remove: a live value was removed. */
  readonly applied: boolean;
  /** Size of the stored (set) or removed (remove) value. */
  readonly bytes: number;
  readonly owners: Owners;
  readonly version: number;
  readonly origin: string;
  /** Expiry stamped by the coordinator, Unix ms; 0 = never. */
  readonly expiresAtMs: number;
  /** Incr: the counter's value after the increment. */
  readonly counterValue?: number;
  /** Incr: the node that added to its slot (the primary, or an owner that promoted itself). */
  readonly appliedBy?: string;
  /**
   * A forwarded write: the coordinator counted its sender among the acknowledgements without
   * pushing the write to it (write-coordinator.ts, `senderApplies`).
   */
  readonly senderCounted?: boolean;
}

/** One item of a batch set. */
export interface SetItem {
  readonly key: string;
  readonly value: ByteString;
  /** 0 = no expiry. */
  readonly ttlMs: number;
  /** If-Match / If-None-Match of the item: it is then a conditional write. */
  readonly condition?: WriteCondition;
}

/** One item of a batch delete that carries a condition. */
export interface RemoveItem {
  readonly key: string;
  readonly condition?: WriteCondition;
}

/** The new expiry of a touch: a TTL from the new version's time, or none. */
export type TouchExpiry = { readonly ttlMs: number } | { readonly persist: true };

/** An increment: add `delta` (starting at `initial` when there is no live item); `ttlMs` applies when it creates the counter. */
export interface IncrRequest {
  readonly delta: number;
  readonly initial: number;
  /** 0 = no expiry. */
  readonly ttlMs: number;
  readonly idempotencyKey?: string;
  /** If-Match: the increment is then a conditional write (the primary alone, QUORUM or ALL). */
  readonly condition?: WriteCondition;
}

/** A read: the item (undefined when absent) and the owners consulted. */
export interface ReadResult {
  readonly item: LiveItem | undefined;
  readonly owners: Owners;
}

/** The lease a lease read asks for (GET ?lease=...&wait=...), within LEASE_LIMITS. */
export interface LeaseAsk {
  /** How long the lease lasts if this read gets it, ms. */
  readonly leaseMs: number;
  /** How long to wait for the value while another caller holds the lease, ms (0: not at all). */
  readonly waitMs: number;
}

/**
 * What a lease read that missed got from the key's primary: the value that arrived meanwhile
 * (`item`), the key's lease (`token`: load the value and PUT it with X-Cache-Lease), another
 * caller's lease and no value within the wait (`heldMs`: ms until that lease ends at the latest),
 * or none of these (a plain miss).
 */
export interface LeaseResult {
  readonly item: LiveItem | undefined;
  readonly owners: Owners;
  readonly token?: string;
  readonly heldMs?: number;
}

/** The cluster-wide key listing before paging. */
export interface KeyListing {
  /** Sorted, deduplicated, at most `max` keys (the first `max` in sort order). */
  readonly keys: readonly string[];
  /** True when `max` cut the set. */
  readonly truncated: boolean;
  /** Ids of nodes whose listing failed. */
  readonly partialNodes: readonly string[];
}

/** Writes admitted while the node was serving (CacheService.admitWrite). */
/**
 * Writes admitted while the node was serving (CacheService.admitWrite). A write with a
 * `condition`, and every touch, is a conditional write: evaluated by the key's primary alone,
 * QUORUM or ALL only (ONE is 400; without a consistency the default, QUORUM when the default is
 * ONE), 412 PRECONDITION_FAILED when the condition fails, never promoted.
 */
export interface AdmittedWrites {
  /**
   * `leaseToken` (X-Cache-Lease) makes the set the fill of a stampede lease: the key's primary
   * alone takes it, and stores it only while that lease is held (else 409 CONFLICT, nothing stored).
   */
  set(key: string, value: ByteString, ttlMs: number, consistency?: ConsistencyLevel, condition?: WriteCondition, leaseToken?: string): Promise<WriteResult>;
  remove(key: string, consistency?: ConsistencyLevel, condition?: WriteCondition): Promise<WriteResult>;
  /** A new version of the live item with a new expiry; 404 NOT_FOUND when there is no live item. */
  touch(key: string, expiry: TouchExpiry, consistency?: ConsistencyLevel, condition?: WriteCondition): Promise<WriteResult>;
  /**
   * Adds to the key's counter on its primary (or a replica owner that promotes itself); the
   * result carries the new value. 409 CONFLICT for a non-integer value or a result past ±(2^53 − 1).
   * With `incr.condition` it is a conditional write (412 when it does not hold, never promoted).
   */
  incr(key: string, incr: IncrRequest, consistency?: ConsistencyLevel): Promise<WriteResult>;
  /** One result per item, in order; a failing item is a CacheError in its place. */
  setMany(items: readonly SetItem[], consistency?: ConsistencyLevel): Promise<Array<WriteResult | CacheError>>;
  removeMany(keys: ReadonlyArray<string | RemoveItem>, consistency?: ConsistencyLevel): Promise<Array<WriteResult | CacheError>>;
  /**
   * Counts `work` as a write in flight until it settles (a drain waits for it): a batch whose
   * writes start a slice at a time, a turn apart, is in flight between its slices too.
   */
  track<T>(work: Promise<T>): Promise<T>;
}

export interface CacheService {
  readonly nodeId: string;
  owners(key: string): Owners;
  get(key: string, consistency?: ConsistencyLevel): Promise<ReadResult>;
  /** As get, but a read this node answers from its own settled copy returns without a promise. */
  read(key: string, consistency?: ConsistencyLevel): ReadResult | Promise<ReadResult>;
  /**
   * Bytes of this node's own copy of `key`'s value (0 when it holds none), without copying it: a
   * read's likely answer size, known before the read copies the value out of the store.
   */
  localValueBytes(key: string): number;
  getMany(keys: readonly string[], consistency?: ConsistencyLevel): Promise<Array<ReadResult | CacheError>>;
  /** A lease read of `key` that missed: the key's primary answers (lease/leases.ts). */
  lease(key: string, ask: LeaseAsk): Promise<LeaseResult>;
  /**
   * The holder of `key`'s lease `token` releases it unfilled (its load failed): the key's primary
   * ends it and its first waiter takes a new one. False when no lease of that token is held
   * (filled, expired, ended by a write or delete); UNAVAILABLE when the primary cannot be asked.
   */
  releaseLease(key: string, token: string): Promise<boolean>;
  /**
   * The one admission step of client writes: throws 503 DRAINING once the node drains. Call it
   * when the request arrives; the writes it returns complete even if draining starts meanwhile.
   */
  admitWrite(): AdmittedWrites;
  /** Cluster-wide listing of live keys matching `q` (a prefix or a glob; already validated). */
  /** `abandoned`: aborted when nobody waits for the listing any more (it stops at its next pause and frees its slot). */
  listKeys(q: string, max: number, abandoned?: AbortSignal): Promise<KeyListing>;
}
