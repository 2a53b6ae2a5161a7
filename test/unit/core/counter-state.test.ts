import { expect } from "chai";
import fc from "fast-check";
import {
  COUNTER_MAGIC, COUNTER_SLOTS_MAX, counterText, counterTotal, decodeCounter, incrementEncoded, encodeCounter, incrementCounter, mergeCounters, parseCounterBase, sameCounter, startCounter, type CounterState,
} from "../../../src/core/counter-state.js";
import { CacheError } from "../../../src/core/errors.js";
import { mergeCounterRecord } from "../../../src/cluster/counter-merge.js";
import { counterStep } from "../../../src/cluster/write/counter-step.js";

const MAX = Number.MAX_SAFE_INTEGER;

function incs(s: CounterState, writer: string, ...deltas: number[]): CounterState {
  return deltas.reduce((acc, d) => incrementCounter(acc, writer, d), s);
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof CacheError ? e.code : "other";
  }
  return undefined;
}

/** The JSON forms encodeCounter and decodeCounter replaced: the reference for their answers. */
function encodeByJson(s: CounterState): string {
  const slots: Record<string, [number, number]> = {};
  for (const w of Object.keys(s.slots).sort()) slots[w] = [s.slots[w]!.sum, s.slots[w]!.seq];
  return COUNTER_MAGIC + JSON.stringify({ g: s.generation, b: s.base, s: slots });
}

function decodeByJson(value: string): CounterState | undefined {
  if (!value.startsWith(COUNTER_MAGIC)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(value.slice(COUNTER_MAGIC.length));
  } catch {
    return undefined;
  }
  const safe = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n);
  if (typeof raw !== "object" || raw === null) return undefined;
  const { g, b, s } = raw as { g?: unknown; b?: unknown; s?: unknown };
  if (!safe(g) || !safe(b) || typeof s !== "object" || s === null || Array.isArray(s)) return undefined;
  const entries = Object.entries(s as Record<string, unknown>);
  if (entries.length > 256) return undefined;
  const slots: Record<string, { sum: number; seq: number }> = {};
  for (const [w, pair] of entries) {
    if (!/^[A-Za-z0-9._-]{1,128}@[A-Za-z0-9._-]{1,64}$/.test(w)) return undefined;
    if (!Array.isArray(pair) || pair.length !== 2 || !safe(pair[0]) || !safe(pair[1]) || pair[1] < 0) return undefined;
    slots[w] = { sum: pair[0], seq: pair[1] };
  }
  return { generation: g, base: b, slots };
}

const writerArb = fc.tuple(fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/), fc.stringMatching(/^[a-f0-9-]{1,12}$/)).map(([n, b]) => `${n}@${b}`);
const intArb = fc.oneof(fc.integer(), fc.constantFrom(0, -1, MAX, -MAX, 1_795_520_465_614_000));
const stateArb: fc.Arbitrary<CounterState> = fc.record({
  generation: intArb,
  base: intArb,
  slots: fc.dictionary(writerArb, fc.record({ sum: intArb, seq: fc.nat() }), { maxKeys: 5 }),
});

describe("core/counter-state encoding", () => {
  it("encodes as JSON.stringify of {g, b, s} with sorted writers did, and decodes back to the same state", () => {
    fc.assert(
      fc.property(stateArb, (st) => {
        const enc = encodeCounter(st);
        expect(enc).to.equal(encodeByJson(st));
        expect(decodeCounter(enc)).to.deep.equal(decodeByJson(enc));
        expect(sameCounter(decodeCounter(enc) as CounterState, st)).to.equal(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it("decodes any text after the magic as JSON.parse and the checks did: spaces, other key orders, numbers in other forms, duplicates, bad writers, cut or mangled values", () => {
    const mangle = fc.tuple(stateArb, fc.nat(), fc.constantFrom("", " ", "0", "-", "1e3", ".0", '"', ",", "}", "]", "[", "@", "\\u0041", "9007199254740993"), fc.nat({ max: 3 }));
    fc.assert(
      fc.property(mangle, ([st, at, insert, cut]) => {
        const enc = encodeCounter(st);
        const i = COUNTER_MAGIC.length + (at % (enc.length - COUNTER_MAGIC.length + 1));
        const text = enc.slice(0, i) + insert + enc.slice(i + cut);
        expect(decodeCounter(text), JSON.stringify(text)).to.deep.equal(decodeByJson(text));
      }),
      { numRuns: 20_000 },
    );
    for (const body of ['{ "g":1,"b":2,"s":{}}', '{"b":2,"g":1,"s":{}}', '{"g":1e2,"b":2,"s":{}}', '{"g":1,"b":2,"s":{"a@b":[1,1],"a@b":[2,2]}}', '{"g":01,"b":2,"s":{}}', '{"g":-0,"b":2,"s":{}}']) {
      expect(decodeCounter(COUNTER_MAGIC + body), body).to.deep.equal(decodeByJson(COUNTER_MAGIC + body));
    }
  });
});

describe("core/counter-state", () => {
  const g0 = startCounter(100, 5);
  const a = incs(g0, "n1@a", 1, 2, 3);
  const b = incs(g0, "n2@b", 10);
  const a2 = incs(a, "n1@a", 4);

  it("merge is commutative, idempotent and associative, and keeps every writer's increments", () => {
    expect(sameCounter(mergeCounters(a, b), mergeCounters(b, a))).to.equal(true);
    expect(sameCounter(mergeCounters(a, a), a)).to.equal(true);
    const c = incs(g0, "n3@c", -7);
    expect(sameCounter(mergeCounters(mergeCounters(a, b), c), mergeCounters(a, mergeCounters(b, c)))).to.equal(true);
    expect(counterTotal(mergeCounters(mergeCounters(a, b), c))).to.equal(5 + 6 + 10 - 7);
  });

  it("per slot the higher seq wins: an older copy of a slot never lowers it", () => {
    const m = mergeCounters(a2, mergeCounters(a, b));
    expect(m.slots["n1@a"]).to.deep.equal({ sum: 10, seq: 4 });
    expect(counterTotal(m)).to.equal(5 + 10 + 10);
  });

  it("a higher generation wins whole, whatever the slots of the lower one", () => {
    const newer = incs(startCounter(200, 0), "n2@b", 1);
    expect(sameCounter(mergeCounters(a2, newer), newer)).to.equal(true);
    expect(sameCounter(mergeCounters(newer, a2), newer)).to.equal(true);
  });

  it("a writer's 65th slot is refused with 503 UNAVAILABLE; existing slots still take increments", () => {
    let s = startCounter(1, 0);
    for (let i = 0; i < COUNTER_SLOTS_MAX; i++) s = incrementCounter(s, `n${i}@x`, 1);
    expect(codeOf(() => incrementCounter(s, "n99@x", 1))).to.equal("UNAVAILABLE");
    expect(counterTotal(incrementCounter(s, "n0@x", 1))).to.equal(COUNTER_SLOTS_MAX + 1);
  });

  it("results beyond ±(2^53 − 1) are 409 CONFLICT; the bounds themselves are allowed", () => {
    expect(counterTotal(incrementCounter(startCounter(1, MAX - 1), "w", 1))).to.equal(MAX);
    expect(codeOf(() => incrementCounter(startCounter(1, MAX), "w", 1))).to.equal("CONFLICT");
    expect(counterTotal(incrementCounter(startCounter(1, -MAX + 1), "w", -1))).to.equal(-MAX);
    expect(codeOf(() => incrementCounter(startCounter(1, -MAX), "w", -1))).to.equal("CONFLICT");
    expect(codeOf(() => incrementCounter(startCounter(1, 0), "w", MAX + 1))).to.equal("CONFLICT");
  });

  it("the total is exact whatever order the slots sum in (a partial sum past 2^53 rounded it: an increment answered 9007199254740990 and GETs showed ...989)", () => {
    const s: CounterState = { generation: 1, base: MAX, slots: { "n1@a": { sum: 2 ** 53 - 2, seq: 1 }, "n2@b": { sum: -MAX, seq: 1 } } };
    expect(counterTotal(s)).to.equal(9007199254740990);
    expect(counterText(s)).to.equal("9007199254740990");
    const encoded = encodeCounter(s);
    const viaEncoded = incrementEncoded(encoded, "n1@a", 0);
    const viaReference = incrementCounter(s, "n1@a", 0);
    expect(viaEncoded === undefined || viaEncoded.total === 9007199254740990, "the in-place path agrees or leaves it").to.equal(true);
    expect(counterTotal(viaReference)).to.equal(9007199254740990);
    expect(counterTotal(incrementCounter(s, "n2@b", 1))).to.equal(9007199254740991);
  });

  it("a merged counter beyond ±(2^53 − 1) (both sides of a partition added) reads exactly and takes increments toward the range; away from it is 409", () => {
    const left = incrementCounter(startCounter(1, 0), "n1@a", 6e15);
    const right = incrementCounter(startCounter(1, 0), "n2@b", 6e15);
    const merged = mergeCounters(left, right);
    expect(counterText(merged)).to.equal("12000000000000000");
    const down = incrementCounter(merged, "n1@a", -1);
    expect(counterText(down)).to.equal("11999999999999999");
    expect(counterText(incrementCounter(merged, "n3@c", -3e15 - 1))).to.equal("8999999999999999");
    expect(codeOf(() => incrementCounter(merged, "n1@a", 1))).to.equal("CONFLICT");
    expect(codeOf(() => incrementCounter(merged, "n1@a", 0)), "no move: still beyond").to.equal("CONFLICT");
    const negative = mergeCounters(incrementCounter(startCounter(1, 0), "n1@a", -6e15), incrementCounter(startCounter(1, 0), "n2@b", -6e15));
    expect(counterText(incrementCounter(negative, "n2@b", 5))).to.equal("-11999999999999995");
    expect(codeOf(() => incrementCounter(negative, "n2@b", -1))).to.equal("CONFLICT");
  });

  it("encodes and decodes losslessly; plain values are no counters; bases parse strictly", () => {
    expect(sameCounter(decodeCounter(encodeCounter(a2))!, a2)).to.equal(true);
    expect(decodeCounter("12")).to.equal(undefined);
    expect(parseCounterBase("-42")).to.equal(-42);
    for (const bad of ["", "1.5", " 1", "+1", "1e3", "99999999999999999", "abc"]) expect(parseCounterBase(bad), bad).to.equal(undefined);
  });
});

describe("core/counter-state decodeCounter", () => {
  const enc = (raw: unknown) => COUNTER_MAGIC + JSON.stringify(raw);
  const slotsOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`n${i}@boot`, [1, 1]]));

  it(`accepts writers <node id>@<boot id> (a UUID boot id too) and up to ${4 * COUNTER_SLOTS_MAX} slots (merges may pass the 64 a writer may add)`, () => {
    const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    expect(decodeCounter(enc({ g: 1, b: 0, s: { [`n1@${uuid}`]: [3, 2], "a.b_c-d@x": [-1, 1] } }))?.slots).to.deep.equal({ [`n1@${uuid}`]: { sum: 3, seq: 2 }, "a.b_c-d@x": { sum: -1, seq: 1 } });
    expect(decodeCounter(enc({ g: 1, b: 0, s: {} }))?.slots).to.deep.equal({});
    expect(Object.keys(decodeCounter(enc({ g: 1, b: 0, s: slotsOf(4 * COUNTER_SLOTS_MAX) }))?.slots ?? {})).to.have.length(4 * COUNTER_SLOTS_MAX);
    expect(decodeCounter(enc({ g: 1, b: 0, s: { [`${"n".repeat(128)}@${"b".repeat(64)}`]: [1, 1] } }))).to.not.equal(undefined);
  });

  const invalid: Array<[string, string]> = [
    ["no magic", JSON.stringify({ g: 1, b: 0, s: {} })],
    ["JSON that does not parse", `${COUNTER_MAGIC}{`],
    ["a JSON array", enc([1, 2])],
    ["null", enc(null)],
    ["a fractional generation", enc({ g: 1.5, b: 0, s: {} })],
    ["a base beyond 2^53", enc({ g: 1, b: 2 ** 53, s: {} })],
    ["slots as an array", enc({ g: 1, b: 0, s: [] })],
    ["a slot that is not a pair", enc({ g: 1, b: 0, s: { "n1@a": [1] } })],
    ["a negative seq", enc({ g: 1, b: 0, s: { "n1@a": [1, -1] } })],
    ["a string sum", enc({ g: 1, b: 0, s: { "n1@a": ["1", 1] } })],
    ["a writer without a boot id", enc({ g: 1, b: 0, s: { n1: [1, 1] } })],
    ["an empty writer", enc({ g: 1, b: 0, s: { "": [1, 1] } })],
    ["a writer with an empty node id", enc({ g: 1, b: 0, s: { "@boot": [1, 1] } })],
    ["a writer with a character outside the node id alphabet", enc({ g: 1, b: 0, s: { "n 1@boot": [1, 1] } })],
    ["a writer with two @", enc({ g: 1, b: 0, s: { "n1@a@b": [1, 1] } })],
    ["a writer whose node id is 129 characters", enc({ g: 1, b: 0, s: { [`${"n".repeat(129)}@b`]: [1, 1] } })],
    ["a writer whose boot id is 65 characters", enc({ g: 1, b: 0, s: { [`n1@${"b".repeat(65)}`]: [1, 1] } })],
    [`${4 * COUNTER_SLOTS_MAX + 1} slots`, enc({ g: 1, b: 0, s: slotsOf(4 * COUNTER_SLOTS_MAX + 1) })],
  ];
  for (const [what, value] of invalid) {
    it(`refuses ${what} (undefined: not a valid counter)`, () => {
      expect(decodeCounter(value)).to.equal(undefined);
    });
  }
});

describe("cluster/counter-merge and counter-step", () => {
  const rec = (value: string, version: number, origin: string) => ({ key: "k", value, version, origin, lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false });
  const g = startCounter(10, 0);
  const mine = incs(g, "n1@a", 1);
  const theirs = incs(g, "n2@b", 2);

  it("two different counters of one generation merge into a record stamped just above both, whatever the clock", () => {
    const m = mergeCounterRecord(rec(encodeCounter(theirs), 50, "n2"), rec(encodeCounter(mine), 40, "n1"), "n3");
    expect(m.kind).to.equal("store");
    if (m.kind !== "store") return;
    expect(m.record.version).to.equal(51);
    expect(m.record.origin).to.equal("n3");
    expect(counterTotal(decodeCounter(m.record.value)!)).to.equal(3);
  });

  it("an incoming counter the held one contains is an acknowledgement; plain values stay with the version gate", () => {
    const both = mergeCounters(mine, theirs);
    expect(mergeCounterRecord(rec(encodeCounter(theirs), 50, "n2"), rec(encodeCounter(both), 40, "n1"), "n3").kind).to.equal("held");
    expect(mergeCounterRecord(rec(encodeCounter(theirs), 50, "n2"), rec("plain", 40, "n1"), "n3").kind).to.equal("gate");
    expect(mergeCounterRecord(rec(encodeCounter(both), 50, "n2"), rec(encodeCounter(mine), 40, "n1"), "n3").kind).to.equal("gate");
  });

  it("an incr on a plain integer starts a generation at that value's version; a non-integer is 409", () => {
    const step = counterStep(rec("41", 77, "n1"), 0, "n2@b", 1, 0);
    expect(step.created).to.equal(true);
    expect(step.state.generation).to.equal(77);
    expect(counterTotal(step.state)).to.equal(42);
    expect(codeOf(() => counterStep(rec("x", 77, "n1"), 0, "n2@b", 1, 0))).to.equal("CONFLICT");
    expect(counterTotal(counterStep(undefined, 0, "w", 5, 100).state)).to.equal(105);
  });
});
