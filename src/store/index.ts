export { ShardedStore, type LiveItem, type StoreOptions, type StoreCounters, type KeysPage } from "./sharded-store.js";
export { Applied, headerOf, isLiveAt, versionTimeMs, type ApplyResult, type IdempotentStamp, type RecordHeader, type VersionedRecord } from "./record.js";
export { compareVersions } from "./lww.js";
export { EvictionLoop, ExpirationLoop, type StoreLoopDeps } from "./store-loops.js";
export { EXPIRE_SLICE_MAX } from "./expiry-sweep.js";
export { createPolicy, LruPolicy, LfuPolicy, CawolfuPolicy, type EvictionPolicy } from "./policies/index.js";
