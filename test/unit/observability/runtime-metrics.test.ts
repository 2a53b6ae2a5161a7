// The live heap and live ArrayBuffer gauges: V8 heap in use and Buffer memory outside it, read
// just after a full collection (what a leak raises), 0 before the first one. A full collection is forced here through V8's test hook.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect } from "chai";
import { RuntimeMetrics } from "../../../src/observability/index.js";

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
