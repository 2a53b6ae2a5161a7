// systemTimers: a delay longer than Node's timers take (2^31-1 ms) waits that long at most, instead
// of the 1 ms Node turns it into (with a TimeoutOverflowWarning): a loop set to run "never" spun.
import { expect } from "chai";
import { systemTimers } from "../../../src/core/clock.js";
import { TIMER_MAX_MS } from "../../../src/core/duration.js";

describe("core/system timers", () => {
  it("clamps every() and after() to TIMER_MAX_MS: Node warns of no overflow", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const a = systemTimers.after(2 ** 40, () => undefined);
      const e = systemTimers.every(TIMER_MAX_MS + 1, () => undefined);
      a.cancel();
      e.cancel();
      // Node emits the warning on the next tick of the loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).to.not.include("TimeoutOverflowWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });
});
