import { expect } from "chai";
import { hash32 } from "../../../src/core/hash.js";

describe("core/hash", () => {
  it("is deterministic: the same text gives the same hash on every call", () => {
    for (const k of ["", "a", "user:1", "日本", "😀", "x".repeat(10_000)]) {
      expect(hash32(k)).to.equal(hash32(k));
    }
  });

  it("is stable across releases: pinned values (nodes of a mixed-version cluster must place keys alike)", () => {
    const pinned: Array<[string, number]> = [
      ["", 0],
      ["a", 530_429_928],
      ["hello", 2_790_685_453],
      ["user:42", 1_439_867_347],
      ["日本", 1_944_469_657],
      ["😀", 82_864_181],
    ];
    for (const [k, h] of pinned) expect(hash32(k), JSON.stringify(k)).to.equal(h);
    expect(hash32("hello", 42)).to.equal(2_449_488_052);
  });

  it("returns an unsigned 32-bit integer", () => {
    for (let i = 0; i < 10_000; i++) {
      const h = hash32(`k${i}`);
      expect(Number.isInteger(h)).to.equal(true);
      expect(h).to.be.at.least(0);
      expect(h).to.be.below(2 ** 32);
    }
  });

  it("gives different hashes to similar keys", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) seen.add(hash32(`key-${i}`));
    // A 32-bit hash over 10k keys should have (almost surely) no collisions.
    expect(seen.size).to.be.at.least(9_998);
    expect(hash32("ab")).to.not.equal(hash32("ba"));
    expect(hash32("a")).to.not.equal(hash32("a\u0000"));
  });

  it("depends on the seed", () => {
    expect(hash32("key", 0)).to.not.equal(hash32("key", 1));
    expect(hash32("key", 7)).to.equal(hash32("key", 7));
    expect(hash32("key")).to.equal(hash32("key", 0));
  });

  it("distinguishes every code unit, including non-ASCII and astral halves", () => {
    expect(hash32("é")).to.not.equal(hash32("e"));
    expect(hash32("😀")).to.not.equal(hash32("😁"));
  });

  it("spreads 100k keys evenly over 64 buckets (chi-square and per-bucket band)", () => {
    const buckets = 64;
    const n = 100_000;
    const counts = new Array<number>(buckets).fill(0);
    for (let i = 0; i < n; i++) counts[hash32(`key:${i}`) % buckets]! += 1;
    const expected = n / buckets;
    let chi = 0;
    for (const c of counts) {
      chi += (c - expected) ** 2 / expected;
      expect(c).to.be.within(expected * 0.85, expected * 1.15);
    }
    // 63 degrees of freedom: the 99.99th percentile is about 115.
    expect(chi).to.be.below(130);
  });

  it("spreads 100k keys evenly over the high bits as well (256 buckets by the top 8 bits)", () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 100_000; i++) counts[hash32(`user/${i}`) >>> 24]! += 1;
    const expected = 100_000 / 256;
    let chi = 0;
    for (const c of counts) chi += (c - expected) ** 2 / expected;
    // 255 degrees of freedom: the 99.99th percentile is about 340.
    expect(chi).to.be.below(360);
  });

  it("flips about half of the output bits when one input bit changes (avalanche)", () => {
    let flipped = 0;
    let trials = 0;
    for (let i = 0; i < 2_000; i++) {
      const a = hash32(`k${i}a`);
      const b = hash32(`k${i}c`); // "a" and "c" differ in one bit
      let x = (a ^ b) >>> 0;
      while (x) {
        flipped += x & 1;
        x >>>= 1;
      }
      trials += 32;
    }
    expect(flipped / trials).to.be.within(0.45, 0.55);
  });
});
