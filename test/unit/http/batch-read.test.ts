import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import type { ReadResult } from "../../../src/cluster/index.js";
import { BATCH_READ_PACING, READ_WEIGHT_BASE, readWithinBudget } from "../../../src/http/batch-read.js";
import { SLICE_WEIGHT_MAX } from "../../../src/http/batch-pacing.js";
import type { LiveItem } from "../../../src/store/index.js";
import type { Owners } from "../../../src/ring/index.js";

const OWNERS: Owners = { ids: ["n1"], primary: "n1", header: "n1", json: '["n1"]' };
const MIB = 1024 * 1024;

/** A fake store of value sizes: records every read, answers after `delay` microtask turns. */
function fakeReads(sizes: Record<string, number>) {
  const reads: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const read = async (key: string): Promise<ReadResult> => {
    reads.push(key);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    for (let i = 0; i < 3; i++) await Promise.resolve();
    inFlight--;
    if (key.startsWith("fail")) throw new CacheError("UNAVAILABLE", "owner unreachable");
    const size = sizes[key];
    const item = size === undefined ? undefined : ({ key, value: "x".repeat(size) } as unknown as LiveItem);
    return { item, owners: OWNERS };
  };
  return { read, reads, maxInFlight: () => maxInFlight };
}

describe("http/batch-read: readWithinBudget", () => {
  it("reads a key named 1,000 times once", async () => {
    const f = fakeReads({ big: 8 * MIB });
    const out = await readWithinBudget(Array.from({ length: 1000 }, () => "big"), f.read, { budgetBytes: 16 * MIB, ...BATCH_READ_PACING });
    expect(f.reads).to.deep.equal(["big"]);
    expect(out.size).to.equal(1);
  });

  it("stops reading once the values read pass the budget; the keys not read are absent from the map", async () => {
    const sizes: Record<string, number> = {};
    const keys = Array.from({ length: 100 }, (_, i) => `k${i}`);
    for (const k of keys) sizes[k] = 3 * MIB;
    const f = fakeReads(sizes);
    const out = await readWithinBudget(keys, f.read, { budgetBytes: 16 * MIB, ...BATCH_READ_PACING });
    // 4 first (12 MiB), then one at a time (16 MiB left / 3 MiB values is 1 once 4 MiB are left): 15, 18 MiB.
    expect(f.reads.length, `read ${f.reads.join(",")}`).to.be.within(6, 8);
    expect(f.reads).to.deep.equal(keys.slice(0, f.reads.length));
    expect([...out.keys()]).to.deep.equal(f.reads);
  });

  it("reads small values at full width: at most windowMax reads under way, every key read", async () => {
    const sizes: Record<string, number> = {};
    const keys = Array.from({ length: 1000 }, (_, i) => `s${i}`);
    for (const k of keys) sizes[k] = 100;
    const f = fakeReads(sizes);
    const out = await readWithinBudget(keys, f.read, { budgetBytes: 16 * MIB, ...BATCH_READ_PACING });
    expect(out.size).to.equal(1000);
    expect(f.maxInFlight()).to.equal(BATCH_READ_PACING.windowMax);
  });

  it("keeps missing keys and failed reads as results (they cost no budget)", async () => {
    const f = fakeReads({ a: 10 });
    const out = await readWithinBudget(["a", "missing", "fail-1"], f.read, { budgetBytes: 16 * MIB, ...BATCH_READ_PACING });
    expect((out.get("a") as ReadResult).item).to.not.equal(undefined);
    expect((out.get("missing") as ReadResult).item).to.equal(undefined);
    expect(out.get("fail-1")).to.be.instanceOf(CacheError).and.include({ code: "UNAVAILABLE" });
  });

  it("turns a read that throws synchronously into that key's error", async () => {
    const out = await readWithinBudget(["x"], () => {
      throw new CacheError("BAD_REQUEST", "no");
    }, { budgetBytes: MIB, ...BATCH_READ_PACING });
    expect(out.get("x")).to.be.instanceOf(CacheError).and.include({ code: "BAD_REQUEST" });
  });

  it("answers an empty batch at once", async () => {
    expect((await readWithinBudget([], fakeReads({}).read, { budgetBytes: MIB, ...BATCH_READ_PACING })).size).to.equal(0);
  });

  it("starts reads a slice a turn apart: 1,000 missing keys of 4,096 characters that answer in microtasks never all start in one turn (the hostile batch-echo stall)", async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `${'"'.repeat(4090)}${String(i).padStart(6, "0")}`);
    const f = fakeReads({});
    const startedAtYield: number[] = [];
    const yieldToLoop = () => {
      startedAtYield.push(f.reads.length);
      return new Promise<void>((r) => setImmediate(r));
    };
    const out = await readWithinBudget(keys, f.read, { budgetBytes: 16 * MIB, ...BATCH_READ_PACING, yieldToLoop });
    expect(out.size).to.equal(1000);
    const perSlice = Math.ceil(SLICE_WEIGHT_MAX / (4096 + READ_WEIGHT_BASE));
    expect(startedAtYield.length, "turns yielded").to.be.at.least(Math.floor(1000 / perSlice));
    startedAtYield.forEach((n, i) => expect(n - (startedAtYield[i - 1] ?? 0), `slice ${i}`).to.be.at.most(perSlice));
  });

  it("a batch of 1,000 short keys is one slice, as before", async () => {
    let yields = 0;
    const f = fakeReads({});
    await readWithinBudget(Array.from({ length: 1000 }, (_, i) => `k${i}`), f.read, { budgetBytes: 16 * MIB, ...BATCH_READ_PACING, yieldToLoop: () => (yields++, Promise.resolve()) });
    expect(yields).to.equal(0);
  });
});
