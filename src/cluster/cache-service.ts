// What the client API asks of the node: key operations with their consistency, owners and the
// cluster-wide key listing. Implemented by DistCache.
import type { ByteString } from "../core/byte-string.js";
import type { CacheError } from "../core/errors.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { Owners } from "../ring/index.js";
import type { LiveItem } from "../store/index.js";

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
}

/** One item of a batch set. */
export interface SetItem {
  readonly key: string;
  readonly value: ByteString;
  /** 0 = no expiry. */
  readonly ttlMs: number;
}

/** A read: the item (undefined when absent) and the owners consulted. */
export interface ReadResult {
  readonly item: LiveItem | undefined;
  readonly owners: Owners;
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
export interface AdmittedWrites {
  set(key: string, value: ByteString, ttlMs: number, consistency?: ConsistencyLevel): Promise<WriteResult>;
  remove(key: string, consistency?: ConsistencyLevel): Promise<WriteResult>;
  /** One result per item, in order; a failing item is a CacheError in its place. */
  setMany(items: readonly SetItem[], consistency?: ConsistencyLevel): Promise<Array<WriteResult | CacheError>>;
  removeMany(keys: readonly string[], consistency?: ConsistencyLevel): Promise<Array<WriteResult | CacheError>>;
}

export interface CacheService {
  readonly nodeId: string;
  owners(key: string): Owners;
  get(key: string, consistency?: ConsistencyLevel): Promise<ReadResult>;
  /** As get, but a read this node answers from its own settled copy returns without a promise. */
  read(key: string, consistency?: ConsistencyLevel): ReadResult | Promise<ReadResult>;
  getMany(keys: readonly string[], consistency?: ConsistencyLevel): Promise<Array<ReadResult | CacheError>>;
  /**
   * The one admission step of client writes: throws 503 DRAINING once the node drains. Call it
   * when the request arrives; the writes it returns complete even if draining starts meanwhile.
   */
  admitWrite(): AdmittedWrites;
  /** Cluster-wide listing of live keys matching `q` (a prefix or a glob; already validated). */
  listKeys(q: string, max: number): Promise<KeyListing>;
}
