// The bench's arithmetic: median, nearest-rank percentile, and ratios of medians with their spread.
import { expect } from "chai";
import { median, percentile, ratioOfMedians } from "../../../bench/stats.js";

describe("bench: statistics", () => {
  it("takes the middle value of an odd count and the mean of the two middle values of an even count", () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([7])).to.equal(7);
    expect(() => median([])).to.throw(/no values/);
  });

  it("gives nearest-rank percentiles: p99 of 1..100 is 99, p50 of 1..10 is 5, p100 the maximum", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 0.99)).to.equal(99);
    expect(percentile(hundred.slice(0, 10), 0.5)).to.equal(5);
    expect(percentile(hundred, 1)).to.equal(100);
    expect(percentile([42], 0.99)).to.equal(42);
  });

  it("divides the medians, not the rounds, and reports the per-round ratios as the spread", () => {
    // Per-round ratios 0.5, 0.8, 0.6; medians 24 / 40 = 0.6.
    const r = ratioOfMedians([20, 24, 30], [40, 30, 50]);
    expect(r.value).to.be.closeTo(24 / 40, 1e-12);
    expect(r.perRound).to.deep.equal([0.5, 0.8, 0.6]);
    expect(r.min).to.equal(0.5);
    expect(r.max).to.equal(0.8);
  });

  it("refuses unpaired rounds", () => {
    expect(() => ratioOfMedians([1, 2], [1])).to.throw(/paired/);
  });
});
