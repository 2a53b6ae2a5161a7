// nextBackoffFactor (pure), the adaptive backoff of Merkle auto-sync: each fully clean tick
// doubles the factor up to SERVICE_AUTO_SYNC_MAX_FACTOR, any divergent tick resets it to 1, and a
// maximum of 1 disables the backoff.
import { expect } from "chai";
import { nextBackoffFactor } from "../../../../src/cluster/anti-entropy/sync-loop.js";

/** Factors after each tick, starting from 1. */
function sequence(ticks: readonly boolean[], maxFactor: number): number[] {
  const out: number[] = [];
  let f = 1;
  for (const clean of ticks) out.push((f = nextBackoffFactor(f, clean, maxFactor)));
  return out;
}

describe("dist/anti-entropy: nextBackoffFactor", () => {
  it("clean ticks double the factor up to the maximum: 1, 2, 4, 8, 8 with max 8", () => {
    expect([1, ...sequence([true, true, true, true], 8)]).to.deep.equal([1, 2, 4, 8, 8]);
  });

  it("stays at the maximum however many clean ticks follow", () => {
    expect(sequence(Array.from({ length: 10 }, () => true), 8).slice(-3)).to.deep.equal([8, 8, 8]);
  });

  it("a divergent tick resets to 1 from any factor, and clean ticks double again from there", () => {
    expect(sequence([true, true, true, false, true, true], 8)).to.deep.equal([2, 4, 8, 1, 2, 4]);
    expect(nextBackoffFactor(4, false, 8)).to.equal(1);
    expect(nextBackoffFactor(1, false, 8)).to.equal(1);
  });

  it("max 1 disables the backoff: the factor stays 1", () => {
    expect(sequence([true, true, false, true], 1)).to.deep.equal([1, 1, 1, 1]);
  });

  it("a maximum that is not a power of two caps the doubling: 1, 2, 4, 6, 6 with max 6", () => {
    expect([1, ...sequence([true, true, true, true], 6)]).to.deep.equal([1, 2, 4, 6, 6]);
  });

  it("a maximum below 1 is treated as 1", () => {
    expect(nextBackoffFactor(1, true, 0)).to.equal(1);
  });

  const table: Array<[current: number, clean: boolean, max: number, next: number]> = [
    [1, true, 4, 2],
    [2, true, 4, 4],
    [4, true, 4, 4],
    [4, false, 4, 1],
    [8, true, 8, 8],
  ];
  for (const [current, clean, max, next] of table) {
    it(`factor ${current}, ${clean ? "clean" : "divergent"} tick, max ${max} -> ${next}`, () => {
      expect(nextBackoffFactor(current, clean, max)).to.equal(next);
    });
  }
});
