// Counter state (pure): a generation, a base and one slot per writer (node id plus boot id), each
// slot the sum of that writer's deltas and how many it applied (seq). Merging is a join: the
// higher generation wins whole, else each slot keeps the copy with the higher seq. Each writer
// only ever grows its own slot, so merging never loses an increment.
//
// In the store and on the wire a counter is an ordinary value: COUNTER_MAGIC followed by the
// state as JSON. Every receive path sees the magic and merges (cluster/counter-merge.ts); client
// values that start with the magic are refused, so no client value is ever mistaken for one.
import { CacheError } from "./errors.js";
import { NODE_ID_CHARS } from "./node-id.js";

/** Prefix of an encoded counter value (a NUL byte first: no text value starts with it). */
export const COUNTER_MAGIC = "\u0000hc-counter/1\u0000";
/** Slots a counter takes at most when a writer adds one (then 503 UNAVAILABLE). */
export const COUNTER_SLOTS_MAX = 64;
/**
 * Slots a decoded counter may hold at most: merges never drop slots, so a counter may pass
 * COUNTER_SLOTS_MAX, but a state with more than this many is refused as invalid.
 */
export const COUNTER_SLOTS_CEILING = 4 * COUNTER_SLOTS_MAX;
/** A writer (slot name): a node id, "@", a boot id (a UUID; the node id alphabet, 1 to 64 characters). */
const WRITER_PATTERN = new RegExp(`^${NODE_ID_CHARS}{1,128}@${NODE_ID_CHARS}{1,64}$`);
/** Largest magnitude of a counter value and of each part: 2^53 - 1. */
export const COUNTER_BOUND = Number.MAX_SAFE_INTEGER;

export interface CounterSlot {
  readonly sum: number;
  readonly seq: number;
}

export interface CounterState {
  /** The version of the write the counter started from; a higher generation replaces a lower one whole. */
  readonly generation: number;
  readonly base: number;
  readonly slots: Readonly<Record<string, CounterSlot>>;
}

export function isCounterValue(value: string): boolean {
  return value.startsWith(COUNTER_MAGIC);
}

/**
 * The encoded value of a counter: COUNTER_MAGIC, then `{"g":…,"b":…,"s":{"<writer>":[sum,seq],…}}`
 * with the writers in sorted order (what JSON.stringify of that object gives; built by hand,
 * since every increment encodes once).
 */
export function encodeCounter(s: CounterState): string {
  const writers = Object.keys(s.slots);
  if (writers.length > 1) writers.sort();
  let out = `${COUNTER_MAGIC}{"g":${s.generation},"b":${s.base},"s":{`;
  for (let i = 0; i < writers.length; i++) {
    const w = writers[i] as string;
    const slot = s.slots[w] as CounterSlot;
    out += `${i === 0 ? "" : ","}${JSON.stringify(w)}:[${slot.sum},${slot.seq}]`;
  }
  return `${out}}}`;
}

/**
 * The state of an encoded counter value, or undefined when the value is not a valid one (also
 * when a writer is not `<node id>@<boot id>` or it has more than COUNTER_SLOTS_CEILING slots).
 * The form encodeCounter writes is read by a scanner; anything else goes through JSON.parse.
 */
export function decodeCounter(value: string): CounterState | undefined {
  if (!isCounterValue(value)) return undefined;
  return scanCounter(value) ?? parseCounter(value);
}

/** Where scanCounter reads. */
interface Cursor {
  at: number;
}

/**
 * The JSON integer at the cursor (`-`, then `0` or digits not starting with 0) when it is a safe
 * integer, the cursor moved past it; else undefined. Digits are summed as they are read (exact
 * below 2^53, and at least 2^53 above it, so an unsafe value never passes for a safe one).
 */
function scanInteger(v: string, cur: Cursor): number | undefined {
  let i = cur.at;
  const negative = v.charCodeAt(i) === 45;
  if (negative) i++;
  let c = v.charCodeAt(i);
  if (!(c >= 48 && c <= 57)) return undefined;
  let n = c - 48;
  i++;
  if (n !== 0) {
    for (c = v.charCodeAt(i); c >= 48 && c <= 57; c = v.charCodeAt(++i)) n = n * 10 + (c - 48);
  }
  cur.at = i;
  const value = negative ? -n : n;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** True when `literal` is at the cursor, which then moves past it. */
function scanLiteral(v: string, cur: Cursor, literal: string): boolean {
  if (!v.startsWith(literal, cur.at)) return false;
  cur.at += literal.length;
  return true;
}

/**
 * Reads the exact form encodeCounter writes (no spaces, writers without escapes, each writer
 * once); undefined for anything else, which parseCounter then judges. What it accepts it reads
 * as parseCounter would, checks included.
 */
function scanCounter(v: string): CounterState | undefined {
  const cur: Cursor = { at: COUNTER_MAGIC.length };
  if (!scanLiteral(v, cur, '{"g":')) return undefined;
  const g = scanInteger(v, cur);
  if (g === undefined || !scanLiteral(v, cur, ',"b":')) return undefined;
  const b = scanInteger(v, cur);
  if (b === undefined || !scanLiteral(v, cur, ',"s":{')) return undefined;
  const slots: Record<string, CounterSlot> = {};
  for (let count = 0; !scanLiteral(v, cur, "}}"); count++) {
    if ((count > 0 && !scanLiteral(v, cur, ",")) || count >= COUNTER_SLOTS_CEILING || !scanLiteral(v, cur, '"')) return undefined;
    const close = v.indexOf('"', cur.at);
    if (close < 0) return undefined;
    const w = v.slice(cur.at, close);
    cur.at = close + 1;
    if (!WRITER_PATTERN.test(w) || slots[w] !== undefined || !scanLiteral(v, cur, ":[")) return undefined;
    const sum = scanInteger(v, cur);
    if (sum === undefined || !scanLiteral(v, cur, ",")) return undefined;
    const seq = scanInteger(v, cur);
    if (seq === undefined || seq < 0 || !scanLiteral(v, cur, "]")) return undefined;
    slots[w] = { sum, seq };
  }
  return cur.at === v.length ? { generation: g, base: b, slots } : undefined;
}

/** An increment made on the encoded form: the new encoded value and the counter's new value. */
export interface EncodedIncrement {
  readonly value: string;
  readonly total: number;
}

/**
 * What `encodeCounter(incrementCounter(s, writer, delta))` and its counterTotal give for the
 * state `s` that `value` decodes to, read and written in place: no state is built and only the
 * writer's slot is printed anew. Only for the form encodeCounter writes (writers sorted, no `-0`)
 * and an increment that passes incrementCounter's checks; undefined for anything else, which the
 * caller then takes through decodeCounter and incrementCounter (the reference, errors included).
 * The totals are summed in the reference's order (base, then the slots as stored, a new slot
 * last), so they agree to the bit.
 */
export function incrementEncoded(value: string, writer: string, delta: number): EncodedIncrement | undefined {
  if (!isCounterValue(value)) return undefined;
  const cur: Cursor = { at: COUNTER_MAGIC.length };
  if (!scanLiteral(value, cur, '{"g":') || scanPrinted(value, cur) === undefined || !scanLiteral(value, cur, ',"b":')) return undefined;
  const base = scanPrinted(value, cur);
  if (base === undefined || !scanLiteral(value, cur, ',"s":{')) return undefined;
  let before = base; // counterTotal of the state read
  let after = base; // counterTotal of the state written (the writer's slot as it ends up)
  let previous = "";
  let count = 0;
  let insertAt = -1; // a new slot goes before the first writer above it
  let pairAt = -1; // the writer's `sum,seq`, when it has a slot
  let pairEnd = -1;
  let sum = 0;
  let seq = 0;
  // A partial sum past 2^53 rounds: the reference then sums exactly.
  let exact = true;
  for (; !scanLiteral(value, cur, "}}"); count++) {
    if ((count > 0 && !scanLiteral(value, cur, ",")) || count >= COUNTER_SLOTS_CEILING) return undefined;
    const slotAt = cur.at;
    if (!scanLiteral(value, cur, '"')) return undefined;
    const close = value.indexOf('"', cur.at);
    if (close < 0) return undefined;
    const w = value.slice(cur.at, close);
    if ((count > 0 && w <= previous) || !WRITER_PATTERN.test(w)) return undefined;
    cur.at = close + 1;
    if (!scanLiteral(value, cur, ":[")) return undefined;
    const numsAt = cur.at;
    const slotSum = scanPrinted(value, cur);
    if (slotSum === undefined || !scanLiteral(value, cur, ",")) return undefined;
    const slotSeq = scanPrinted(value, cur);
    if (slotSeq === undefined || slotSeq < 0 || !scanLiteral(value, cur, "]")) return undefined;
    before += slotSum;
    exact &&= Number.isSafeInteger(before);
    if (w === writer) {
      pairAt = numsAt;
      pairEnd = cur.at - 1;
      sum = slotSum;
      seq = slotSeq;
      after += slotSum + delta;
    } else {
      after += slotSum;
      if (insertAt < 0 && w > writer) insertAt = slotAt;
    }
    exact &&= Number.isSafeInteger(after);
    previous = w;
  }
  if (cur.at !== value.length || !exact) return undefined;
  if (pairAt < 0 && count >= COUNTER_SLOTS_MAX) return undefined;
  if (!withinBound(sum + delta) || !withinBound(before + delta)) return undefined;
  if (pairAt >= 0) return { value: `${value.slice(0, pairAt)}${sum + delta},${seq + 1}${value.slice(pairEnd)}`, total: after };
  const slot = `${JSON.stringify(writer)}:[${delta},1]`;
  const total = after + delta;
  if (count === 0) return { value: `${value.slice(0, value.length - 2)}${slot}}}`, total };
  if (insertAt < 0) return { value: `${value.slice(0, value.length - 2)},${slot}}}`, total };
  return { value: `${value.slice(0, insertAt)}${slot},${value.slice(insertAt)}`, total };
}

/** scanInteger for an integer as encodeCounter prints it (not `-0`, which it prints as 0). */
function scanPrinted(v: string, cur: Cursor): number | undefined {
  const n = scanInteger(v, cur);
  return Object.is(n, -0) ? undefined : n;
}

/** decodeCounter for any JSON text after the magic (the reference reading). */
function parseCounter(value: string): CounterState | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(value.slice(COUNTER_MAGIC.length));
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null) return undefined;
  const { g, b, s } = raw as { g?: unknown; b?: unknown; s?: unknown };
  if (!isSafe(g) || !isSafe(b) || typeof s !== "object" || s === null || Array.isArray(s)) return undefined;
  const entries = Object.entries(s as Record<string, unknown>);
  if (entries.length > COUNTER_SLOTS_CEILING) return undefined;
  const slots: Record<string, CounterSlot> = {};
  for (const [w, pair] of entries) {
    if (!WRITER_PATTERN.test(w)) return undefined;
    if (!Array.isArray(pair) || pair.length !== 2 || !isSafe(pair[0]) || !isSafe(pair[1]) || pair[1] < 0) return undefined;
    slots[w] = { sum: pair[0], seq: pair[1] };
  }
  return { generation: g, base: b, slots };
}

/** The counter's value exactly: base plus every slot's sum. */
function exactTotal(s: CounterState): bigint {
  let total = BigInt(s.base);
  for (const slot of Object.values(s.slots)) total += BigInt(slot.sum);
  return total;
}

/**
 * The counter's value: base plus every slot's sum, exact whatever order the slots sum in (a
 * partial sum past 2^53 is redone exactly: summed as numbers it rounded, so an increment's answer
 * and later reads disagreed). Beyond ±(2^53 − 1), which a merge may reach, the nearest number;
 * counterText is exact there.
 */
export function counterTotal(s: CounterState): number {
  let total = s.base;
  let exact = true;
  for (const slot of Object.values(s.slots)) {
    total += slot.sum;
    exact &&= Number.isSafeInteger(total);
  }
  return exact ? total : Number(exactTotal(s));
}

/** The counter's value as decimal text (what GET answers), exact also beyond ±(2^53 − 1). */
export function counterText(s: CounterState): string {
  const total = counterTotal(s);
  return withinBound(total) ? String(total) : exactTotal(s).toString();
}

/** A new counter of `generation` starting at `base`, no slot yet. */
export function startCounter(generation: number, base: number): CounterState {
  return { generation, base, slots: {} };
}

/**
 * The join of two states: the higher generation whole; on the same generation every slot of
 * either, the higher seq winning (on equal seq the larger sum, so the result is deterministic).
 * Commutative, associative and idempotent. Merges never drop slots (the 64-slot cap applies when
 * a writer adds a slot).
 */
export function mergeCounters(a: CounterState, b: CounterState): CounterState {
  if (a.generation !== b.generation) return a.generation > b.generation ? a : b;
  const slots: Record<string, CounterSlot> = { ...a.slots };
  for (const [w, theirs] of Object.entries(b.slots)) {
    const mine = slots[w];
    if (mine === undefined || theirs.seq > mine.seq || (theirs.seq === mine.seq && theirs.sum > mine.sum)) slots[w] = theirs;
  }
  return { generation: a.generation, base: Math.max(a.base, b.base), slots };
}

/** True when both states are the same (generation, base and every slot). */
export function sameCounter(a: CounterState, b: CounterState): boolean {
  if (a.generation !== b.generation || a.base !== b.base) return false;
  const ka = Object.keys(a.slots);
  if (ka.length !== Object.keys(b.slots).length) return false;
  return ka.every((w) => b.slots[w] !== undefined && b.slots[w]!.sum === a.slots[w]!.sum && b.slots[w]!.seq === a.slots[w]!.seq);
}

/**
 * `s` with `delta` added to `writer`'s slot (seq + 1). 409 CONFLICT when the slot's sum would pass
 * ±(2^53 − 1), or the value would end beyond it other than nearer to it (a merge of both sides of
 * a partition may pass it: increments toward the range are taken, so such a counter is not stuck);
 * 503 UNAVAILABLE when the writer needs a new slot and the counter has COUNTER_SLOTS_MAX already.
 */
export function incrementCounter(s: CounterState, writer: string, delta: number): CounterState {
  const slot = s.slots[writer];
  if (slot === undefined && Object.keys(s.slots).length >= COUNTER_SLOTS_MAX) {
    throw new CacheError("UNAVAILABLE", `the counter has ${COUNTER_SLOTS_MAX} writer slots already; a PUT of its value starts a new generation with none`, { slots_max: COUNTER_SLOTS_MAX });
  }
  const sum = (slot?.sum ?? 0) + delta;
  const before = exactTotal(s);
  const after = before + BigInt(delta);
  const magnitude = (n: bigint) => (n < 0n ? -n : n);
  const inRange = magnitude(after) <= BigInt(COUNTER_BOUND) || magnitude(after) < magnitude(before);
  if (!withinBound(sum) || !inRange) throw overflow(counterText(s), delta);
  return { generation: s.generation, base: s.base, slots: { ...s.slots, [writer]: { sum, seq: (slot?.seq ?? 0) + 1 } } };
}

/** A plain value as a counter base: a decimal integer within ±(2^53 − 1), else undefined. */
export function parseCounterBase(value: string): number | undefined {
  if (!/^-?\d{1,16}$/.test(value)) return undefined;
  const n = Number(value);
  return withinBound(n) ? n : undefined;
}

export function withinBound(n: number): boolean {
  return Number.isSafeInteger(n) && Math.abs(n) <= COUNTER_BOUND;
}

function overflow(current: string, delta: number): CacheError {
  const value = Number(current);
  return new CacheError("CONFLICT", `incrementing ${current} by ${delta} leaves the range ±(2^53 - 1); nothing was changed`, { value, delta });
}

function isSafe(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n);
}
