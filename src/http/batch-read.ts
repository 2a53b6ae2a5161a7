// The reads of a batch get: each distinct key once, in request order, a window of reads at a
// time, and no new read once the values read pass the answer budget. A batch naming one large
// value a thousand times through a non-owner therefore fetches it once, and a batch of many large
// values stops fetching (and holding) values it could not answer anyway. Starting a read runs its
// synchronous part at once (the key hashed for its owners and shard, the local lookup), and a
// local read answers in a microtask, so without pacing every read of a batch ran in one turn:
// 1,000 missing keys of 4,096 characters held the loop 65–100 ms beside the body's parse (the
// hostile batch-echo test, over its 100 ms budget in CI). Reads are weighed like the writes of
// batch-pacing.ts, and past a slice's weight the next read starts a turn later.
import type { YieldToLoop } from "../core/clock.js";
import { CacheError, toCacheError } from "../core/errors.js";
import { SLICE_WEIGHT_MAX } from "./batch-pacing.js";
import type { ReadResult } from "../cluster/index.js";

/** How the reads of one batch are paced. */
export interface BatchReadLimits {
  /** Value bytes after which no further key is read (the answer budget). */
  readonly budgetBytes: number;
  /** Reads under way before the first answer tells how large the values are. */
  readonly firstWindow: number;
  /** Reads under way at most. */
  readonly windowMax: number;
  /** Smallest value size assumed when sizing the window (small values do not widen it past windowMax anyway). */
  readonly assumedValueBytesMin: number;
  /** Gives the event loop a turn; without it every read may start in one turn. */
  readonly yieldToLoop?: YieldToLoop;
  /** Weight of the reads started in one turn (their keys' characters, READ_WEIGHT_BASE each besides). */
  readonly sliceWeightMax?: number;
}

/** What starting one read weighs besides its key's characters (its lookup and promise). */
export const READ_WEIGHT_BASE = 256;

/** Default pacing: 4 reads first, then as many as the budget left holds of the largest value seen (at most 512, the per-peer read batch). */
export const BATCH_READ_PACING: Omit<BatchReadLimits, "budgetBytes"> = Object.freeze({ firstWindow: 4, windowMax: 512, assumedValueBytesMin: 1024 });

/**
 * Reads the distinct `keys` (in first-appearance order) through `read`. The map holds a result or
 * error per key read; a key missing from it was not read because the values read before it had
 * passed the budget. Reads under way at once: `firstWindow` until one answers, then the budget
 * left divided by the largest value seen, between 1 and `windowMax`; so the values read past the
 * budget are at most the window then under way, and a batch of small values is read at full width.
 */
export function readWithinBudget(keys: readonly string[], read: (key: string) => Promise<ReadResult>, limits: BatchReadLimits): Promise<Map<string, ReadResult | CacheError>> {
  const distinct = [...new Set(keys)];
  const out = new Map<string, ReadResult | CacheError>();
  let next = 0;
  let inFlight = 0;
  let answered = 0;
  let valueBytes = 0;
  let largest = 0;
  /** Weight of the reads started since the last yield; true while waiting for the next turn. */
  let turnWeight = 0;
  let yielding = false;
  const sliceMax = limits.sliceWeightMax ?? SLICE_WEIGHT_MAX;
  const window = (): number => {
    if (answered === 0) return limits.firstWindow;
    const left = limits.budgetBytes - valueBytes;
    return Math.min(limits.windowMax, Math.max(1, Math.floor(left / Math.max(largest, limits.assumedValueBytesMin))));
  };
  return new Promise((resolve) => {
    const pump = (): void => {
      if (yielding) return;
      while (next < distinct.length && valueBytes <= limits.budgetBytes && inFlight < window()) {
        if (limits.yieldToLoop !== undefined && turnWeight >= sliceMax) {
          yielding = true;
          void limits.yieldToLoop().then(() => {
            yielding = false;
            turnWeight = 0;
            pump();
          });
          return;
        }
        const key = distinct[next++] as string;
        turnWeight += key.length + READ_WEIGHT_BASE;
        inFlight++;
        let reading: Promise<ReadResult>;
        try {
          reading = read(key);
        } catch (err) {
          reading = Promise.reject(err);
        }
        reading.then(
          (r) => done(key, r),
          (err: unknown) => done(key, toCacheError(err)),
        );
      }
      if (inFlight === 0) resolve(out);
    };
    const done = (key: string, r: ReadResult | CacheError): void => {
      inFlight--;
      answered++;
      if (!(r instanceof CacheError) && r.item !== undefined) {
        valueBytes += r.item.value.length;
        largest = Math.max(largest, r.item.value.length);
      }
      out.set(key, r);
      pump();
    };
    pump();
  });
}
