// What a store holds, read through its shard scans (for assertions; the service itself pages).
import type { ShardedStore, VersionedRecord } from "../../src/store/index.js";

/** Every live, unexpired key matching `matches`, in no particular order. */
export function collectKeys(store: ShardedStore, matches: (key: string) => boolean): string[] {
  const out: string[] = [];
  for (let s = 0; s < store.shardCount; s++) {
    store.scanLiveKeys(s, 0, (key) => {
      if (matches(key)) out.push(key);
      return true;
    });
  }
  return out;
}

/** Visits every record (live, expired or tombstone) of every shard. */
export function forEachRecord(store: ShardedStore, visit: (rec: VersionedRecord) => void): void {
  for (let s = 0; s < store.shardCount; s++) {
    store.scanRecords(s, 0, (rec) => {
      visit(rec);
      return true;
    });
  }
}
