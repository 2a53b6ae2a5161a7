// One page of a shard's live keys, for the key listings (ShardedStore.keysPage): cut short after a
// number of keys, a byte cap or a work budget, so one page never holds the event loop for long.
import type { Shard } from "./shard.js";
import type { KeysPage, KeysPageFilter } from "./store-types.js";

/** Key bytes one keys page carries at most (a page travels in one peer answer). */
const PAGE_BYTES_MAX = 8 * 1024 * 1024;

/** Where a page starts: shard `shard` (of `shards`) at slot `slot`. */
export interface PageStart {
  readonly shard: number;
  readonly slot: number;
  readonly shards: number;
}

/**
 * The live keys of shard `s` matching `filter` from `at.slot`, cut short after `limit` keys when
 * limit > 0, past PAGE_BYTES_MAX, or once matching has cost `workBudget` units (filter.cost).
 */
export function shardKeysPage(s: Shard, at: PageStart, nowMs: number, limit: number, filter: KeysPageFilter, workBudget: number): KeysPage {
  const keys: string[] = [];
  let bytes = 0;
  let work = 0;
  const resume = s.scanLiveKeys(at.slot, nowMs, (key) => {
    if (filter.matches(key)) {
      keys.push(key);
      bytes += key.length * 3;
    }
    work += filter.cost(key);
    return (limit <= 0 || keys.length < limit) && bytes < PAGE_BYTES_MAX && work < workBudget;
  });
  if (resume >= 0) {
    // Cut short: continue inside this shard, unless nothing live and matching remains in it
    // (looked for within what is left of the work budget; past it, the next page looks).
    const more =
      work >= workBudget ||
      s.scanLiveKeys(resume, nowMs, (key) => {
        work += filter.cost(key);
        return !filter.matches(key) && work < workBudget;
      }) >= 0;
    if (more) return { keys, next: { shard: at.shard, slot: resume }, truncated: true };
  }
  const nextShard = at.shard + 1;
  return { keys, next: nextShard < at.shards ? { shard: nextShard, slot: 0 } : undefined, truncated: false };
}
