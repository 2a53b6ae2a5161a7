// The live heap and live ArrayBuffer gauges: V8 heap in use and Buffer memory outside it, read
// just after a full collection (what a leak raises), 0 before the first one. A full collection is forced here through V8's test hook.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect } from "chai";
import { RuntimeMetrics } from "../../../src/observability/index.js";
import { delayOf, EVENT_LOOP_RESOLUTION_MS } from "../../../src/observability/runtime-metrics.js";

const noTimers = { every: () => ({ cancel: () => undefined }), after: () => ({ cancel: () => undefined }) };

describe("runtime metrics: live heap", () => {
  it("is the heap in use just after the last full collection", async () => {
    const r = new RuntimeMetrics();
    expect(r.memory().heapLive).to.equal(0);
    r.start(noTimers as never);
    try {
      setFlagsFromString("--expose-gc");
      const gc = runInNewContext("gc") as () => void;
      let held: number[][] | undefined = Array.from({ length: 200 }, () => new Array<number>(10_000).fill(1));
      gc();
      // PerformanceObserver entries arrive after the collection, in a later turn of the loop
      for (let i = 0; i < 50 && r.memory().heapLive === 0; i++) await new Promise((resolve) => setImmediate(resolve));
      const withHeld = r.memory().heapLive;
      expect(withHeld).to.be.above(8 * 2 ** 20);
      expect(held.length).to.equal(200);
      held = undefined;
      gc();
      for (let i = 0; i < 50 && r.memory().heapLive === withHeld; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(withHeld - r.memory().heapLive).to.be.above(8 * 2 ** 20);
    } finally {
      r.stop();
    }
  });

  it("live ArrayBuffer memory is what Buffers hold once the sweeper has run after the last full collection", async () => {
    // The reading is deferred by a timer: V8 frees dead buffers on a concurrent sweeper after
    // the collection. The test fires that timer itself, once the sweeper is done.
    const pending: Array<() => void> = [];
    const timers = { every: () => ({ cancel: () => undefined }), after: (_ms: number, f: () => void) => (pending.push(f), { cancel: () => pending.splice(pending.indexOf(f), 1) }) };
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const r = new RuntimeMetrics();
    expect(r.memory().arrayBuffersLive).to.equal(0);
    r.start(timers as never);
    const collect = async (gc: () => void) => {
      gc();
      for (let i = 0; i < 50 && pending.length === 0; i++) await turn();
      expect(pending, "a full collection schedules one reading").to.have.length(1);
    };
    try {
      setFlagsFromString("--expose-gc");
      const gc = runInNewContext("gc") as () => void;
      let held: Buffer[] | undefined = Array.from({ length: 16 }, () => Buffer.alloc(2 ** 20, 1));
      await collect(gc);
      expect(r.memory().arrayBuffersLive, "nothing read before the timer fires").to.equal(0);
      pending.shift()?.();
      const withHeld = r.memory().arrayBuffersLive;
      expect(withHeld, "ArrayBuffers, not all external memory").to.be.at.most(process.memoryUsage().arrayBuffers);
      expect(withHeld).to.be.above(16 * 2 ** 20);
      expect(held.length).to.equal(16);
      // garbage raises the current figure, not the live one, until a full collection frees it
      // (less what other small ArrayBuffers of the process a scavenge freed meanwhile: a clean CI
      // run measured 280 bytes under 8 MiB, so 64 KiB of slack against the 8 MiB of garbage)
      held = undefined;
      let garbage: Buffer | undefined = Buffer.alloc(8 * 2 ** 20, 1);
      expect(r.memory().arrayBuffers - r.memory().arrayBuffersLive).to.be.above(8 * 2 ** 20 - 2 ** 16);
      garbage = undefined;
      await collect(gc);
      for (let i = 0; i < 500 && process.memoryUsage().arrayBuffers > withHeld - 16 * 2 ** 20; i++) await turn();
      pending.shift()?.();
      expect(withHeld - r.memory().arrayBuffersLive).to.be.above(15 * 2 ** 20);
      expect(garbage).to.equal(undefined);
      // Collections while a reading is pending do not put it off; stop() cancels it.
      await collect(gc);
      const first = pending[0];
      gc();
      for (let i = 0; i < 20; i++) await turn();
      expect(pending, "still the first reading").to.deep.equal([first]);
      r.stop();
      expect(pending, "stop() cancels it").to.have.length(0);
    } finally {
      r.stop();
    }
  });
});

describe("runtime metrics: event-loop delay", () => {
  const ms = 1e6;
  const histogram = (values: Record<"min" | "max" | "mean" | "p50" | "p90" | "p99", number>, count = 200) => ({ count, min: values.min, max: values.max, mean: values.mean, percentile: (p: number) => values[`p${p}` as "p50" | "p90" | "p99"] });

  it("is what passes the sampling interval: an idle loop reads 0, not the interval", () => {
    const idle = delayOf(histogram({ min: 49.6 * ms, max: 50.9 * ms, mean: 50.1 * ms, p50: 50 * ms, p90: 50.4 * ms, p99: 50.9 * ms }), EVENT_LOOP_RESOLUTION_MS * ms);
    expect(idle.min).to.equal(0);
    expect(idle.p50).to.equal(0);
    expect(idle.p99).to.be.closeTo(0.0009, 1e-9);
    const stalled = delayOf(histogram({ min: 50 * ms, max: 1_050 * ms, mean: 60 * ms, p50: 50.5 * ms, p90: 55 * ms, p99: 90 * ms }), 50 * ms);
    expect(stalled.max, "a 1 s stall").to.be.closeTo(1, 1e-9);
    expect(stalled.p99).to.be.closeTo(0.04, 1e-9);
  });

  it("reads 0 without samples (the monitor then gives a huge min and NaN mean)", () => {
    const empty = delayOf(histogram({ min: 9223372036854776000, max: 0, mean: NaN, p50: 0, p90: 0, p99: 0 }, 0), 50 * ms);
    expect(empty).to.deep.equal({ min: 0, max: 0, mean: 0, p50: 0, p90: 0, p99: 0 });
  });
});
