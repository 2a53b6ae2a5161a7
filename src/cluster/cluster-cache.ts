// The node's data path as the client API sees it (CacheService): reads through the Reader,
// writes through the WritePath once admitted, owners from the ring, and the cluster-wide key
// listing.
import type { ByteString } from "../core/byte-string.js";
import { toCacheError, type CacheError } from "../core/errors.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { Owners } from "../ring/index.js";
import type { AdmittedWrites, CacheService, KeyListing, ReadResult, SetItem, WriteResult } from "./cache-service.js";
import type { ClusterView } from "./cluster-view.js";
import type { KeyLister } from "./key-listing.js";
import type { Lifecycle } from "./lifecycle.js";
import type { Reader } from "./read/reader.js";
import type { WritePath } from "./write/write-path.js";

export interface ClusterCacheDeps {
  readonly nodeId: string;
  readonly lifecycle: Lifecycle;
  readonly view: ClusterView;
  readonly reader: Reader;
  readonly writes: WritePath;
  readonly keys: KeyLister;
  readonly writeConsistency: ConsistencyLevel;
  readonly readConsistency: ConsistencyLevel;
}

export class ClusterCache implements CacheService {
  readonly nodeId: string;
  private readonly admitted: AdmittedWrites;

  constructor(private readonly deps: ClusterCacheDeps) {
    this.nodeId = deps.nodeId;
    const write = (key: string, kind: "set" | "remove", value: ByteString, ttlMs: number, consistency?: ConsistencyLevel): Promise<WriteResult> =>
      deps.lifecycle.track(deps.writes.write({ kind, key, value, ttlMs }, consistency ?? deps.writeConsistency));
    const each = <T>(items: readonly T[], one: (item: T) => Promise<WriteResult>) => Promise.all(items.map((it) => one(it).catch(toCacheError)));
    this.admitted = Object.freeze({
      set: (key: string, value: ByteString, ttlMs: number, consistency?: ConsistencyLevel) => write(key, "set", value, ttlMs, consistency),
      remove: (key: string, consistency?: ConsistencyLevel) => write(key, "remove", "", 0, consistency),
      setMany: (items: readonly SetItem[], consistency?: ConsistencyLevel) => each(items, (it) => write(it.key, "set", it.value, it.ttlMs, consistency)),
      removeMany: (keys: readonly string[], consistency?: ConsistencyLevel) => each(keys, (k) => write(k, "remove", "", 0, consistency)),
    });
  }

  owners(key: string): Owners {
    return this.deps.view.ring().ownersOf(key);
  }

  get(key: string, consistency?: ConsistencyLevel): Promise<ReadResult> {
    return this.deps.reader.read(key, consistency ?? this.deps.readConsistency);
  }

  read(key: string, consistency?: ConsistencyLevel): ReadResult | Promise<ReadResult> {
    return this.deps.reader.readNow(key, consistency ?? this.deps.readConsistency);
  }

  getMany(keys: readonly string[], consistency?: ConsistencyLevel): Promise<Array<ReadResult | CacheError>> {
    return Promise.all(keys.map((k) => this.get(k, consistency).catch(toCacheError)));
  }

  admitWrite(): AdmittedWrites {
    this.deps.lifecycle.admitWrite();
    return this.admitted;
  }

  listKeys(q: string, max: number): Promise<KeyListing> {
    return this.deps.keys.list(q, max);
  }
}
