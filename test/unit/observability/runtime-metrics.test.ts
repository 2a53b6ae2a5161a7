// The live heap gauge: V8 heap in use read just after a full collection (what a leak raises),
// 0 before the first one. A full collection is forced here through V8's test hook.
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
});
