// LatencyWindow and OperationLatencies: the count of every recorded operation, p50 and p99 over
// the recent window (nearest rank), rounding to microseconds, a bounded window that forgets old
// samples, and independent windows per operation.
import { expect } from "chai";
import { LatencyWindow, OperationLatencies } from "../../../src/observability/index.js";

/** Records `values` in the order given. */
function windowOf(values: readonly number[]): LatencyWindow {
  const w = new LatencyWindow();
  for (const v of values) w.record(v);
  return w;
}

/** 1..n shuffled deterministically, so the percentiles cannot come from insertion order. */
function shuffled(n: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i + 1);
  let seed = 7;
  for (let i = n - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as number, out[i] as number];
  }
  return out;
}

describe("observability/latency", () => {
  it("an empty window reports count 0 and zero percentiles", () => {
    expect(new LatencyWindow().summary()).to.deep.equal({ count: 0, p50_ms: 0, p99_ms: 0 });
  });

  it("one sample is its own p50 and p99", () => {
    expect(windowOf([4.5]).summary()).to.deep.equal({ count: 1, p50_ms: 4.5, p99_ms: 4.5 });
  });

  it("p50 and p99 are the nearest-rank percentiles of the samples, whatever their order", () => {
    // 1..100 ms: the 50th smallest is 50, the 99th smallest is 99.
    expect(windowOf(shuffled(100)).summary()).to.deep.equal({ count: 100, p50_ms: 50, p99_ms: 99 });
    // 1..1000 ms: 500 and 990.
    expect(windowOf(shuffled(1000)).summary()).to.deep.equal({ count: 1000, p50_ms: 500, p99_ms: 990 });
  });

  it("p99 catches a slow tail that p50 ignores", () => {
    const samples = [...Array<number>(95).fill(1), ...Array<number>(5).fill(250)];
    const s = windowOf(samples).summary();
    expect(s.p50_ms).to.equal(1);
    expect(s.p99_ms).to.equal(250);
  });

  it("rounds the percentiles to microseconds (three decimals of a millisecond)", () => {
    expect(windowOf([1.23456]).summary().p50_ms).to.equal(1.235);
    expect(windowOf([0.0004]).summary().p99_ms).to.equal(0);
  });

  it("the window is bounded: after many fast samples the old slow ones no longer count, but count keeps every operation", () => {
    const w = new LatencyWindow();
    for (let i = 0; i < 10_000; i++) w.record(500);
    expect(w.summary()).to.deep.equal({ count: 10_000, p50_ms: 500, p99_ms: 500 });
    for (let i = 0; i < 10_000; i++) w.record(2);
    // If the window grew without bound, half the samples would still be 500 ms and p99 would be 500.
    expect(w.summary()).to.deep.equal({ count: 20_000, p50_ms: 2, p99_ms: 2 });
  });

  it("the window keeps the most recent samples: a recent slow tail shows in p99 after many older fast samples", () => {
    const w = new LatencyWindow();
    for (let i = 0; i < 10_000; i++) w.record(1);
    for (let i = 0; i < 100; i++) w.record(300);
    expect(w.summary().p99_ms).to.equal(300);
    expect(w.summary().p50_ms).to.equal(1);
  });

  it("OperationLatencies keeps get, set and delete apart", () => {
    const ops = new OperationLatencies();
    ops.get.record(1);
    ops.get.record(3);
    ops.set.record(10);
    expect(ops.get.summary()).to.deep.equal({ count: 2, p50_ms: 1, p99_ms: 3 });
    expect(ops.set.summary()).to.deep.equal({ count: 1, p50_ms: 10, p99_ms: 10 });
    expect(ops.delete.summary()).to.deep.equal({ count: 0, p50_ms: 0, p99_ms: 0 });
  });
});
