import { expect } from "chai";
import { startInSlices } from "../../../src/http/batch-pacing.js";

describe("http/batch-pacing startInSlices", () => {
  /** Runs the items (weights) with a slice limit of 10 and records each slice and each turn. */
  async function run(weights: number[], max = 10) {
    const events: string[] = [];
    const results = await startInSlices(
      weights,
      (w) => w,
      async (slice) => {
        events.push(`start ${slice.join(",")}`);
        return slice.map((w) => w * 2);
      },
      async () => {
        events.push("turn");
      },
      max,
    );
    return { results, events };
  }

  it("starts items until a slice reaches its weight, a turn apart, and keeps the results in order", async () => {
    const { results, events } = await run([4, 4, 4, 1, 9, 3]);
    expect(events).to.deep.equal(["start 4,4,4", "turn", "start 1,9", "turn", "start 3"]);
    expect(results).to.deep.equal([8, 8, 8, 2, 18, 6]);
  });

  it("a slice holds at least one item, however heavy", async () => {
    const { events } = await run([50, 50]);
    expect(events).to.deep.equal(["start 50", "turn", "start 50"]);
  });

  it("light items all start in one slice, without a turn; none: nothing started", async () => {
    expect((await run([1, 1, 1])).events).to.deep.equal(["start 1,1,1"]);
    expect(await run([])).to.deep.equal({ results: [], events: [] });
  });
});
