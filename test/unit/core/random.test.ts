import { expect } from "chai";
import { randomInt, sample, sampleWhere, seededRandom, shuffle, systemRandom, type Random } from "../../../src/core/random.js";

const draw = (r: Random, n: number): number[] => Array.from({ length: n }, () => r.next());

describe("core/random", () => {
  describe("seededRandom", () => {
    it("is reproducible: the same seed gives the same sequence", () => {
      expect(draw(seededRandom(42), 1_000)).to.deep.equal(draw(seededRandom(42), 1_000));
      expect(draw(seededRandom(0), 100)).to.deep.equal(draw(seededRandom(0), 100));
    });

    it("different seeds give different sequences", () => {
      expect(draw(seededRandom(1), 20)).to.not.deep.equal(draw(seededRandom(2), 20));
    });

    it("two generators with the same seed do not share state", () => {
      const a = seededRandom(9);
      const b = seededRandom(9);
      const first = a.next();
      a.next();
      expect(b.next()).to.equal(first);
    });

    it("returns floats in [0, 1)", () => {
      const r = seededRandom(123);
      for (let i = 0; i < 100_000; i++) {
        const x = r.next();
        expect(x >= 0 && x < 1, String(x)).to.equal(true);
      }
    });

    it("is roughly uniform (10 deciles of 100k draws within 5%)", () => {
      const r = seededRandom(7);
      const counts = new Array<number>(10).fill(0);
      for (let i = 0; i < 100_000; i++) counts[Math.floor(r.next() * 10)]! += 1;
      for (const c of counts) expect(c).to.be.within(9_500, 10_500);
    });

    it("does not get stuck: 10k draws are (almost) all distinct", () => {
      expect(new Set(draw(seededRandom(5), 10_000)).size).to.be.at.least(9_990);
    });
  });

  describe("randomInt", () => {
    it("returns integers in [0, n) and hits every value", () => {
      const r = seededRandom(3);
      const seen = new Set<number>();
      for (let i = 0; i < 5_000; i++) {
        const v = randomInt(r, 7);
        expect(Number.isInteger(v)).to.equal(true);
        expect(v).to.be.within(0, 6);
        seen.add(v);
      }
      expect(seen.size).to.equal(7);
    });

    it("uses the injected source (a constant source gives a constant result)", () => {
      const fixed: Random = { next: () => 0.999 };
      expect(randomInt(fixed, 10)).to.equal(9);
      expect(randomInt({ next: () => 0 }, 10)).to.equal(0);
    });
  });

  describe("shuffle", () => {
    it("returns a permutation of the input (same elements, same count)", () => {
      const r = seededRandom(11);
      for (let n = 0; n < 50; n++) {
        const items = Array.from({ length: n }, (_, i) => i % 5 === 0 ? 0 : i);
        const out = shuffle(r, items.slice());
        expect(out).to.have.length(n);
        expect(out.slice().sort((a, b) => a - b)).to.deep.equal(items.slice().sort((a, b) => a - b));
      }
    });

    it("shuffles in place and returns the same array", () => {
      const items = [1, 2, 3, 4, 5, 6, 7, 8];
      expect(shuffle(seededRandom(1), items)).to.equal(items);
    });

    it("actually reorders: a 20-element array does not stay in order", () => {
      const items = Array.from({ length: 20 }, (_, i) => i);
      expect(shuffle(seededRandom(1), items.slice())).to.not.deep.equal(items);
    });

    it("is reproducible from the seed", () => {
      const items = Array.from({ length: 30 }, (_, i) => `n${i}`);
      expect(shuffle(seededRandom(99), items.slice())).to.deep.equal(shuffle(seededRandom(99), items.slice()));
    });

    it("reaches all 6 orders of 3 elements with roughly equal frequency", () => {
      const r = seededRandom(2024);
      const counts = new Map<string, number>();
      for (let i = 0; i < 60_000; i++) {
        const key = shuffle(r, ["a", "b", "c"]).join("");
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      expect(counts.size).to.equal(6);
      for (const c of counts.values()) expect(c).to.be.within(9_400, 10_600);
    });

    it("handles empty and one-element arrays", () => {
      expect(shuffle(seededRandom(1), [])).to.deep.equal([]);
      expect(shuffle(seededRandom(1), ["x"])).to.deep.equal(["x"]);
    });
  });

  describe("sample", () => {
    it("picks `count` distinct items from the input without changing it", () => {
      const items = ["a", "b", "c", "d", "e"];
      const copy = items.slice();
      const picked = sample(seededRandom(4), items, 3);
      expect(picked).to.have.length(3);
      expect(new Set(picked).size).to.equal(3);
      for (const p of picked) expect(items).to.include(p);
      expect(items).to.deep.equal(copy);
    });

    it("returns every item when count is larger than the input, and none for 0 or negative", () => {
      expect(sample(seededRandom(4), [1, 2, 3], 10).sort()).to.deep.equal([1, 2, 3]);
      expect(sample(seededRandom(4), [1, 2, 3], 0)).to.deep.equal([]);
      expect(sample(seededRandom(4), [1, 2, 3], -2)).to.deep.equal([]);
    });
  });

  describe("systemRandom", () => {
    it("returns floats in [0, 1) and cannot be replaced", () => {
      for (let i = 0; i < 1_000; i++) {
        const x = systemRandom.next();
        expect(x >= 0 && x < 1).to.equal(true);
      }
      expect(Object.isFrozen(systemRandom)).to.equal(true);
    });
  });
  describe("sampleWhere", () => {
    /** A Random that counts its draws. */
    const counted = (seed: number) => {
      const r = seededRandom(seed);
      const c = { draws: 0, next: () => (c.draws++, r.next()) };
      return c;
    };

    it("from a short list: what sample of the kept items gives, draw for draw", () => {
      const items = ["a", "b", "c", "d", "e", "f"];
      const keep = (x: string) => x !== "c";
      expect(sampleWhere(seededRandom(7), items, 2, keep)).to.deep.equal(sample(seededRandom(7), items.filter(keep), 2));
      expect(sampleWhere(seededRandom(7), items, 0, keep)).to.deep.equal([]);
    });

    it("from a long list: distinct kept items, in a number of draws that does not grow with the list", () => {
      const items = Array.from({ length: 100_000 }, (_, i) => i);
      for (const seed of [1, 2, 3, 4, 5]) {
        const r = counted(seed);
        const got = sampleWhere(r, items, 3, (x) => x % 10 !== 0);
        expect(got).to.have.length(3);
        expect(new Set(got).size).to.equal(3);
        expect(got.every((x) => x % 10 !== 0)).to.equal(true);
        expect(r.draws, "draws").to.be.at.most(24);
      }
    });

    it("from a long list where almost nothing passes: gives up after 8 draws per wanted item", () => {
      const items = Array.from({ length: 10_000 }, (_, i) => i);
      const r = counted(9);
      expect(sampleWhere(r, items, 2, (x) => x === -1)).to.deep.equal([]);
      expect(r.draws).to.equal(16);
    });
  });
});
