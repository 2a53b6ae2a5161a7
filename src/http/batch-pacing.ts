// The writes of a batch, started a slice at a time. Starting a write runs its synchronous part at
// once (the key hashed for its shard and owners, its lock, a condition checked against the local
// copy), and a batch started all its writes in one turn: 1,000 conditional writes of 4,096-
// character keys held the event loop for about 90 ms beside the body's parse (a review's stall
// hunt). Items are weighed by their key's characters and a quarter of their value's; a slice
// weighs at most SLICE_WEIGHT_MAX (always at least one item), and the next slice starts a turn
// later. A batch of 1,000 ordinary items is one slice, as before.
import type { YieldToLoop } from "../core/clock.js";

/** Weight of the items whose writes start in one turn (about 5 ms of work for the heaviest items). */
export const SLICE_WEIGHT_MAX = 256 * 1024;

/** An item's weight: its key's characters, and a quarter of its value's bytes. */
export type ItemWeight<T> = (item: T) => number;

/**
 * Runs `start` on consecutive slices of `items`, a turn apart (`yieldToLoop`), and resolves with
 * their results in order. `start` must not reject (each item carries its own error).
 */
export async function startInSlices<T, R>(items: readonly T[], weight: ItemWeight<T>, start: (slice: readonly T[]) => Promise<R[]>, yieldToLoop: YieldToLoop, sliceWeightMax = SLICE_WEIGHT_MAX): Promise<R[]> {
  const started: Array<Promise<R[]>> = [];
  let from = 0;
  while (from < items.length) {
    let to = from;
    let w = 0;
    while (to < items.length && (to === from || w < sliceWeightMax)) w += weight(items[to++] as T);
    started.push(start(items.slice(from, to)));
    from = to;
    if (from < items.length) await yieldToLoop();
  }
  return (await Promise.all(started)).flat();
}
