// Counters as clients read them: the value of a counter record is its decimal text (the state
// stays inside the node and on the wire). ETag, version and expiry are the record's own.
import { badRequest, type CacheError } from "../core/errors.js";
import { counterTotal, decodeCounter, isCounterValue } from "../core/counter-state.js";
import type { ReadResult } from "./cache-service.js";

/** `r` with a counter item's value replaced by the counter's decimal value. */
export function counterAsText(r: ReadResult): ReadResult {
  const item = r.item;
  if (item === undefined || !isCounterValue(item.value)) return r;
  const state = decodeCounter(item.value);
  return state === undefined ? r : { owners: r.owners, item: { ...item, value: String(counterTotal(state)) } };
}

/** The 400 of a client value that would read as an encoded counter. */
export function counterLookalike(key: string): CacheError {
  return badRequest(`the value for key ${JSON.stringify(key)} starts with the bytes reserved for counter records (NUL "hc-counter/"); store it another way`);
}
