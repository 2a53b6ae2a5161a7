// The shapes the store hands out (its memory, its counters and a page of a key listing), and the
// hook a shard calls before it stores a live record.
import type { KeyFilter } from "../core/key-filter.js";
import type { VersionedRecord } from "./record.js";
import type { Shard } from "./shard.js";

/** Bytes of the store's records by where they sit (ShardedStore.memory). */
export interface StoreMemory {
  /** Live records (keys, values and tombstone keys) packed in pages. */
  readonly records: number;
  /**
   * Replaced or removed records still in pages, reclaimed by the next compaction (which a write
   * that needs a new page starts, once garbage is a quarter of the paged bytes).
   */
  readonly garbage: number;
  /** Page space holding no record: the tails pages keep when a record does not fit, and spare pages. */
  readonly free: number;
  /** Records larger than a page slot's limit, each in a buffer of its own. */
  readonly large: number;
}

/** Client-visible counters of the store (for /stats). */
export interface StoreCounters {
  hits: number;
  misses: number;
  sets: number;
  deletes: number;
  evictions: number;
  expirations: number;
}

/** One page of a shard-by-shard key listing. */
export interface KeysPage {
  readonly keys: string[];
  /** Shard and slot to resume at; undefined when the listing is complete. */
  readonly next: { shard: number; slot: number } | undefined;
  /** True when the limit, the page byte cap or the work budget cut the shard short. */
  readonly truncated: boolean;
}

/** What one shard's sweep did, and where the next one goes on (undefined: the shard is done). */
export interface SweepResult {
  readonly expired: number;
  readonly compacted: number;
  /** Units of work spent (an expiration or compaction each, and one per 64 slots looked at). */
  readonly work: number;
  readonly next: number | undefined;
}

/**
 * Runs before a live record is stored in `shard`: makes room for it (the store evicts there when
 * it is full) and says whether it is admitted; false refuses it, with nothing changed.
 * `replacedBytes`: the size of the live value it overwrites (no eviction then: the slot written
 * could be the victim); undefined for a new item.
 */
export type MakeRoom = (shard: Shard, rec: VersionedRecord, replacedBytes?: number) => boolean;

/** A live value as reads return it: a record that is not a tombstone. */
export type LiveItem = Omit<VersionedRecord, "tombstone">;

/** What keysPage needs of a key filter. */
export type KeysPageFilter = Pick<KeyFilter, "matches" | "cost">;
