import { expect } from "chai";
import fc from "fast-check";
import {
  COUNTER_MAGIC, COUNTER_SLOTS_MAX, counterTotal, decodeCounter, encodeCounter, incrementCounter, incrementEncoded, startCounter, type CounterState,
} from "../../../src/core/counter-state.js";
import { CacheError } from "../../../src/core/errors.js";
import { counterStep, encodedCounterStep } from "../../../src/cluster/write/counter-step.js";
import type { VersionedRecord } from "../../../src/store/index.js";

const MAX = Number.MAX_SAFE_INTEGER;

/** The reference: decode, increment, encode and total; an error's code; "undecodable". */
function reference(value: string, writer: string, delta: number): { value: string; total: number } | string {
  const s = decodeCounter(value);
  if (s === undefined) return "undecodable";
  try {
    const next = incrementCounter(s, writer, delta);
    return { value: encodeCounter(next), total: counterTotal(next) };
  } catch (e) {
    return e instanceof CacheError ? e.code : "other";
  }
}

/** incrementEncoded is the reference whenever it answers. */
function agrees(value: string, writer: string, delta: number): void {
  const fast = incrementEncoded(value, writer, delta);
  if (fast === undefined) return;
  const ref = reference(value, writer, delta);
  expect(fast, JSON.stringify([value, writer, delta])).to.deep.equal(ref);
  expect(Object.is(fast.total, (ref as { total: number }).total)).to.equal(true);
}

/** Whether summing the state in stored order (base, then sorted writers), before or after adding `delta` to `writer`'s slot, passes 2^53 part-way. */
function unsafePartialSum(st: CounterState, writer: string, delta: number): boolean {
  let before = st.base;
  let after = st.base;
  for (const w of Object.keys(st.slots).sort()) {
    const sum = (st.slots[w] as { sum: number }).sum;
    before += sum;
    after += w === writer ? sum + delta : sum;
    if (!Number.isSafeInteger(before) || !Number.isSafeInteger(after)) return true;
  }
  return false;
}

const writerArb = fc.tuple(fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/), fc.stringMatching(/^[a-f0-9-]{1,12}$/)).map(([n, b]) => `${n}@${b}`);
const intArb = fc.oneof(fc.integer(), fc.constantFrom(0, 1, -1, MAX, -MAX, MAX - 1, -MAX + 1, 1_795_520_465_614_000));
const stateArb: fc.Arbitrary<CounterState> = fc.record({
  generation: intArb,
  base: intArb,
  slots: fc.dictionary(writerArb, fc.record({ sum: intArb, seq: fc.oneof(fc.nat(), fc.constantFrom(0, MAX)) }), { maxKeys: 6 }),
});
/** A state and a writer: one of its own (an increment of a slot) or another (a new slot). */
const caseArb = fc.tuple(stateArb, fc.nat(), writerArb, intArb).map(([st, pick, other, delta]) => {
  const writers = Object.keys(st.slots);
  const writer = writers.length > 0 && pick % 3 !== 0 ? (writers[pick % writers.length] as string) : other;
  return { st, writer, delta };
});

function slotsOf(n: number, sum = 1): Record<string, { sum: number; seq: number }> {
  const slots: Record<string, { sum: number; seq: number }> = {};
  for (let i = 0; i < n; i++) slots[`w${String(i).padStart(3, "0")}@b`] = { sum, seq: 1 };
  return slots;
}

describe("core/counter-state incrementEncoded", () => {
  it("answers what decode, increment, encode and total give, for every value encodeCounter writes that the increment accepts", () => {
    fc.assert(
      fc.property(caseArb, ({ st, writer, delta }) => {
        const value = encodeCounter(st);
        const ref = reference(value, writer, delta);
        const fast = incrementEncoded(value, writer, delta);
        if (typeof ref === "string") expect(fast).to.equal(undefined);
        // A partial sum past 2^53 (in stored order, before or after the add) is left to the
        // reference, which sums exactly; every other accepted increment is answered in place.
        else if (fast === undefined) expect(unsafePartialSum(st, writer, delta), JSON.stringify([value, writer, delta])).to.equal(true);
        else expect(fast).to.deep.equal(ref);
      }),
      { numRuns: 20_000 },
    );
  });

  it("on cut, mangled or hand-written values answers undefined or exactly the reference", () => {
    const mangle = fc.tuple(caseArb, fc.nat(), fc.constantFrom("", " ", "0", "-", "-0", "1e3", ".0", '"', ",", "}", "]", "[", "@", "\\u0041", "9007199254740993", '"a@b":[1,1],', ',"zz@b":[1,1]'), fc.nat({ max: 3 }));
    fc.assert(
      fc.property(mangle, ([{ st, writer, delta }, at, insert, cut]) => {
        const enc = encodeCounter(st);
        const i = COUNTER_MAGIC.length + (at % (enc.length - COUNTER_MAGIC.length + 1));
        agrees(enc.slice(0, i) + insert + enc.slice(i + cut), writer, delta);
      }),
      { numRuns: 20_000 },
    );
  });

  it("places a new writer's slot in sorted order: first, between, last, or alone", () => {
    const st: CounterState = { generation: 7, base: 3, slots: { "b@x": { sum: 2, seq: 1 }, "d@x": { sum: -4, seq: 2 } } };
    for (const writer of ["a@x", "c@x", "e@x", "b@x", "d@x"]) {
      expect(incrementEncoded(encodeCounter(st), writer, 5), writer).to.deep.equal(reference(encodeCounter(st), writer, 5));
    }
    expect(incrementEncoded(encodeCounter(startCounter(9, -2)), "n1@a", 1)).to.deep.equal({ value: `${COUNTER_MAGIC}{"g":9,"b":-2,"s":{"n1@a":[1,1]}}`, total: -1 });
  });

  it("leaves to the reference: -0, unsorted or repeated writers, bad writers, a 65th slot, overflow, no counter", () => {
    const enc = (body: string) => COUNTER_MAGIC + body;
    const cases: Array<[string, string, number]> = [
      [enc('{"g":-0,"b":0,"s":{}}'), "n1@a", 1],
      [enc('{"g":1,"b":-0,"s":{}}'), "n1@a", 1],
      [enc('{"g":1,"b":0,"s":{"n1@a":[-0,1]}}'), "n1@a", 1],
      [enc('{"g":1,"b":0,"s":{"n2@a":[1,1],"n1@a":[1,1]}}'), "n1@a", 1],
      [enc('{"g":1,"b":0,"s":{"n1@a":[1,1],"n1@a":[2,2]}}'), "n1@a", 1],
      [enc('{"g":1,"b":0,"s":{"n1":[1,1]}}'), "n1@a", 1],
      [enc('{"g":1,"b":0,"s":{"n1@a":[1,-1]}}'), "n1@a", 1],
      [enc('{"g":1,"b":0,"s":{}} '), "n1@a", 1],
      [enc('{ "g":1,"b":0,"s":{}}'), "n1@a", 1],
      [encodeCounter({ generation: 1, base: 0, slots: slotsOf(COUNTER_SLOTS_MAX) }), "zz@b", 1],
      [encodeCounter({ generation: 1, base: MAX, slots: {} }), "n1@a", 1],
      [encodeCounter({ generation: 1, base: 0, slots: { "n1@a": { sum: -MAX, seq: 3 } } }), "n1@a", -1],
      ["41", "n1@a", 1],
      ["", "n1@a", 1],
    ];
    for (const [value, writer, delta] of cases) expect(incrementEncoded(value, writer, delta), value).to.equal(undefined);
    // Existing slots of a counter at the cap still take increments in place.
    const full = encodeCounter({ generation: 1, base: 0, slots: slotsOf(COUNTER_SLOTS_MAX) });
    expect(incrementEncoded(full, "w000@b", 1)).to.deep.equal(reference(full, "w000@b", 1));
    // Totals past 2^53 on the way are summed in the reference's order.
    const wide = encodeCounter({ generation: 1, base: MAX, slots: { "a@x": { sum: MAX, seq: 1 }, "b@x": { sum: -MAX, seq: 1 }, "c@x": { sum: -MAX + 3, seq: 1 } } });
    for (const writer of ["a@x", "b@x", "bb@x", "d@x"]) agrees(wide, writer, -1);
  });
});

describe("cluster/counter-step encodedCounterStep", () => {
  const rec = (value: string, over: Partial<VersionedRecord> = {}): VersionedRecord => ({ key: "k", value, version: 77, origin: "n1", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false, ...over });
  const outcome = (fn: () => { value: string; total: number; created: boolean }) => {
    try {
      return fn();
    } catch (e) {
      return e instanceof CacheError ? e.code : "other";
    }
  };
  const viaState = (r: VersionedRecord | undefined, now: number, writer: string, delta: number, initial: number) =>
    outcome(() => {
      const step = counterStep(r, now, writer, delta, initial);
      return { value: encodeCounter(step.state), total: counterTotal(step.state), created: step.created };
    });

  it("is counterStep encoded, for every kind of record the key may hold", () => {
    const counter = encodeCounter({ generation: 5, base: 1, slots: { "n1@a": { sum: 2, seq: 2 }, "n2@b": { sum: 3, seq: 1 } } });
    const records: Array<VersionedRecord | undefined> = [
      undefined,
      rec(counter),
      rec(counter, { expiresAtMs: 2_000 }),
      rec(counter, { expiresAtMs: 500 }),
      rec("", { tombstone: true }),
      rec("41"),
      rec("-9007199254740991"),
      rec("x"),
      rec(`${COUNTER_MAGIC}{"g":1,"b":0,"s":{"n1":[1,1]}}`),
      rec(`${COUNTER_MAGIC}{"g":1,"b":0,"s":{"n2@b":[1,1],"n1@a":[1,1]}}`),
      rec(encodeCounter({ generation: 1, base: MAX, slots: {} })),
    ];
    for (const r of records) {
      for (const [writer, delta, initial] of [["n1@a", 1, 0], ["n3@c", -4, 100], ["n0@z", MAX, 0]] as const) {
        expect(outcome(() => encodedCounterStep(r, 1_000, writer, delta, initial)), JSON.stringify([r, writer, delta])).to.deep.equal(viaState(r, 1_000, writer, delta, initial));
      }
    }
  });
});
