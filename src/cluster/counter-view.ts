// Counters as clients read them: the value of a counter record is its decimal text (the state
// stays inside the node and on the wire). ETag, version and expiry are the record's own.
import { badRequest, type CacheError } from "../core/errors.js";
import type { ByteString } from "../core/byte-string.js";
import { COUNTER_MAGIC, counterText, decodeCounter, isCounterValue } from "../core/counter-state.js";
import type { ShardedStore } from "../store/index.js";
import type { ReadResult } from "./cache-service.js";
import { quotedKey } from "../core/key-check.js";

/** `r` with a counter item's value replaced by the counter's decimal value. */
export function counterAsText(r: ReadResult): ReadResult {
  const item = r.item;
  if (item === undefined || !isCounterValue(item.value)) return r;
  const state = decodeCounter(item.value);
  return state === undefined ? r : { owners: r.owners, item: { ...item, value: counterText(state) } };
}

/**
 * The size of a value as clients read it (the `bytes` of write answers): a counter's decimal
 * text, any other value's bytes.
 */
export function clientBytes(value: ByteString): number {
  if (!isCounterValue(value)) return value.length;
  const state = decodeCounter(value);
  return state === undefined ? value.length : counterText(state).length;
}

/** The 400 of a client value that would read as an encoded counter. */
export function counterLookalike(key: string): CacheError {
  return badRequest(`the value for key ${quotedKey(key)} starts with the bytes reserved for counter records (NUL "hc-counter/1" NUL); store it another way`);
}

/**
 * The client size of the value a delete of `key` is about to remove, when it is a counter (the
 * store's own count is its encoded size); undefined for any other value, whose size the store's
 * apply reports. Looks at the value's first bytes only, so a large value is not copied.
 */
export function counterBytesOf(store: ShardedStore, key: string): number | undefined {
  if (!holdsCounter(store, key)) return undefined;
  const rec = store.peek(key);
  return rec === undefined ? undefined : clientBytes(rec.value);
}

/** True when `store` holds a live counter for `key` (its value's first bytes only: nothing is copied). */
export function holdsCounter(store: Pick<ShardedStore, "valueHead">, key: string): boolean {
  return store.valueHead(key, COUNTER_MAGIC.length) === COUNTER_MAGIC;
}
