// The next state of a counter after one increment by one writer (pure): what an incr does to the
// record its key holds. The generation is the version of the record the counter starts from (0
// when the key has no record), so owners that convert the same PUT, or start from the same
// tombstone, start the same generation and their slots merge.
import {
  COUNTER_MAGIC, counterTotal, decodeCounter, encodeCounter, incrementCounter, incrementEncoded, parseCounterBase, startCounter, type CounterState,
} from "../../core/counter-state.js";
import { CacheError } from "../../core/errors.js";
import { isLiveAt, type VersionedRecord } from "../../store/index.js";
import { quotedKey } from "../../core/key-check.js";

export interface CounterStep {
  readonly state: CounterState;
  /** The increment started a counter (absent key, or a plain integer value): its TTL applies. */
  readonly created: boolean;
}

/**
 * `delta` added to `writer`'s slot of the counter in `rec` (the key's record, tombstones and
 * expired items included, undefined when none) at `nowMs`. A live plain value must be a decimal
 * integer (it becomes the base of a new generation), else 409 CONFLICT; no live item starts a
 * counter at `initial`. Bounds and the slot cap as in incrementCounter.
 */
export function counterStep(rec: VersionedRecord | undefined, nowMs: number, writer: string, delta: number, initial: number): CounterStep {
  const live = isLiveAt(rec, nowMs) ? rec : undefined;
  if (live === undefined) return { state: incrementCounter(startCounter(rec?.version ?? 0, initial), writer, delta), created: true };
  const held = decodeCounter(live.value);
  if (held !== undefined) return { state: incrementCounter(held, writer, delta), created: false };
  const base = live.value.startsWith(COUNTER_MAGIC) ? undefined : parseCounterBase(live.value);
  if (base === undefined) {
    throw new CacheError("CONFLICT", `the value of key ${quotedKey(live.key)} is not a decimal integer within ±(2^53 - 1); nothing was changed`);
  }
  return { state: incrementCounter(startCounter(live.version, base), writer, delta), created: true };
}

/** A counter step as it is written: the encoded value and the counter's new value. */
export interface EncodedCounterStep {
  readonly value: string;
  readonly total: number;
  readonly created: boolean;
}

/**
 * counterStep, encoded (encodeCounter and counterTotal of its state): a live counter in the form
 * encodeCounter writes is incremented in place (incrementEncoded); anything else, and every
 * error, takes counterStep.
 */
export function encodedCounterStep(rec: VersionedRecord | undefined, nowMs: number, writer: string, delta: number, initial: number): EncodedCounterStep {
  const inPlace = isLiveAt(rec, nowMs) ? incrementEncoded(rec.value, writer, delta) : undefined;
  if (inPlace !== undefined) return { value: inPlace.value, total: inPlace.total, created: false };
  const step = counterStep(rec, nowMs, writer, delta, initial);
  return { value: encodeCounter(step.state), total: counterTotal(step.state), created: step.created };
}
