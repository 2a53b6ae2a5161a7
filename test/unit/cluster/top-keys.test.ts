import { expect } from "chai";
import { seededRandom } from "../../../src/core/random.js";
import { WorkSlicer } from "../../../src/core/clock.js";
import { SCAN_SLICE_RECORDS } from "../../../src/core/limits.js";
import { compareKeys, KEY_RESULT_CHARS_MAX, TopKeys } from "../../../src/cluster/top-keys.js";

/** The size of TopKeys' internal buffer, to check it stays bounded. */
const bufferSize = (t: TopKeys): number => (t as unknown as { buffer: string[] }).buffer.length;

describe("dist/top-keys", () => {
  it("returns all keys sorted when there are fewer than max", () => {
    const t = new TopKeys(10);
    t.addAll(["c", "a", "b"]);
    expect(t.result()).to.deep.equal({ keys: ["a", "b", "c"], truncated: false });
  });

  it("keeps the first max keys in sort order and says it truncated", () => {
    const t = new TopKeys(3);
    t.addAll(["e", "b", "d", "a", "c"]);
    expect(t.result()).to.deep.equal({ keys: ["a", "b", "c"], truncated: true });
  });

  it("deduplicates keys reported by several sources (replicas)", () => {
    const t = new TopKeys(10);
    t.addAll(["k1", "k2"]);
    t.addAll(["k2", "k3"]);
    t.add("k1");
    expect(t.result()).to.deep.equal({ keys: ["k1", "k2", "k3"], truncated: false });
  });

  it("is not truncated when duplicates push the raw count above max but distinct keys fit", () => {
    const t = new TopKeys(3);
    t.addAll(["a", "b", "c", "a", "b", "c", "c"]);
    expect(t.result()).to.deep.equal({ keys: ["a", "b", "c"], truncated: false });
  });

  it("is not truncated with exactly max distinct keys", () => {
    const t = new TopKeys(4);
    t.addAll(["d", "c", "b", "a"]);
    expect(t.result().truncated).to.equal(false);
  });

  it("is truncated with max + 1 distinct keys", () => {
    const t = new TopKeys(4);
    t.addAll(["e", "d", "c", "b", "a"]);
    expect(t.result()).to.deep.equal({ keys: ["a", "b", "c", "d"], truncated: true });
  });

  it("gives an empty untruncated result with no keys", () => {
    expect(new TopKeys(5).result()).to.deep.equal({ keys: [], truncated: false });
  });

  it("sorts by UTF-16 code units (as JavaScript compares strings)", () => {
    const t = new TopKeys(10);
    t.addAll(["b", "B", "a", "é", "😀", "\uffff", "A", "10", "9"]);
    expect(t.result().keys).to.deep.equal(["10", "9", "A", "B", "a", "b", "é", "😀", "\uffff"]);
  });

  it("keeps its buffer bounded (about 2 x max + 1024) while taking in many keys", () => {
    const max = 100;
    const t = new TopKeys(max);
    let peak = 0;
    for (let i = 100_000; i > 0; i--) {
      t.add(`key:${String(i).padStart(6, "0")}`);
      peak = Math.max(peak, bufferSize(t));
    }
    expect(peak).to.be.at.most(2 * max + 1024);
    const r = t.result();
    expect(r.truncated).to.equal(true);
    expect(r.keys).to.have.length(max);
    expect(r.keys[0]).to.equal("key:000001");
    expect(r.keys[max - 1]).to.equal(`key:${String(max).padStart(6, "0")}`);
  });

  it("finds the smallest keys even when they arrive after a compaction has cut", () => {
    const t = new TopKeys(5);
    // Large keys first, enough to force several compactions, then the winners last.
    for (let i = 0; i < 5_000; i++) t.add(`z${i}`);
    t.addAll(["a4", "a0", "a3", "a1", "a2"]);
    expect(t.result()).to.deep.equal({ keys: ["a0", "a1", "a2", "a3", "a4"], truncated: true });
  });

  it("deduplicates across compactions", () => {
    const t = new TopKeys(3);
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 2_000; i++) t.add(`k${i % 3}`);
    }
    expect(t.result()).to.deep.equal({ keys: ["k0", "k1", "k2"], truncated: false });
  });

  it("matches a sort-dedupe-slice reference on a pseudo-random workload", () => {
    const max = 50;
    const t = new TopKeys(max);
    const all: string[] = [];
    let x = 12345;
    for (let i = 0; i < 20_000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const k = `k${x % 3_000}`;
      all.push(k);
      t.add(k);
    }
    const expected = [...new Set(all)].sort(compareKeys);
    expect(t.result()).to.deep.equal({ keys: expected.slice(0, max), truncated: expected.length > max });
  });

  describe("compareKeys", () => {
    it("orders by UTF-16 code units and returns 0 for equal keys", () => {
      expect(compareKeys("a", "b")).to.equal(-1);
      expect(compareKeys("b", "a")).to.equal(1);
      expect(compareKeys("a", "a")).to.equal(0);
      expect(compareKeys("Z", "a")).to.equal(-1);
      expect(compareKeys("a", "ab")).to.equal(-1);
      expect(compareKeys("\uffff", "😀")).to.equal(1);
    });
  });
  it("matches a full sort of every key (deduplicated, first max) over many compactions, keys arriving in random order with repeats", () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const all: string[] = [];
      for (let i = 0; i < 20_000; i++) all.push(`k${Math.floor(random.next() * 8000)}`);
      for (const max of [1, 10, 700]) {
        const t = new TopKeys(max);
        t.addAll(all);
        const distinct = [...new Set(all)].sort(compareKeys);
        expect(t.result(), `seed ${seed}, max ${max}`).to.deep.equal({ keys: distinct.slice(0, max), truncated: distinct.length > max });
      }
    }
  });

  it("once cut, drops keys at or above the last kept one without buffering them", () => {
    const t = new TopKeys(2);
    t.addAll(Array.from({ length: 2 * 2 + 1024 }, (_, i) => `k${String(i).padStart(5, "0")}`));
    const before = bufferSize(t);
    t.addAll(["z1", "z2", "k00001", "k99999"]);
    expect(bufferSize(t)).to.equal(before);
    t.add("a");
    expect(t.result()).to.deep.equal({ keys: ["a", "k00000"], truncated: true });
  });

  describe("bounded work and memory", () => {
    /** Keys of 4,009 characters sharing a 4,001-character prefix, in a seeded order. */
    function longKeys(count: number, seed: number): string[] {
      const prefix = `k${"x".repeat(4000)}`;
      const keys = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(8, "0")}`);
      const random = seededRandom(seed);
      for (let i = keys.length - 1; i > 0; i--) {
        const j = Math.floor(random.next() * (i + 1));
        [keys[i], keys[j]] = [keys[j] as string, keys[i] as string];
      }
      return keys;
    }

    it("holds at most KEY_RESULT_CHARS_MAX (4 Mi) characters of keys by default", () => {
      expect(KEY_RESULT_CHARS_MAX).to.equal(4 * 1024 * 1024);
      const t = new TopKeys(50_000);
      const keys = longKeys(1500, 1);
      t.addAll(keys);
      const r = t.result();
      const fit = Math.floor(KEY_RESULT_CHARS_MAX / (keys[0] as string).length);
      expect(r.truncated).to.equal(true);
      expect(r.keys).to.deep.equal([...keys].sort(compareKeys).slice(0, fit));
    });

    it("a character budget keeps the longest prefix of the sorted distinct keys that fits, whatever the arrival order", () => {
      const all = ["dddd", "a", "cc", "bbb", "a", "eeeee", "cc", "ab"];
      const sorted = [...new Set(all)].sort(compareKeys);
      for (const seed of [1, 2, 3, 4, 5]) {
        const random = seededRandom(seed);
        const order = [...all].sort(() => random.next() - 0.5);
        const t = new TopKeys(100, 8);
        t.addAll(order);
        // a (1) + ab (2) + bbb (3) = 6; adding cc would make 8: fits; dddd would make 12.
        expect(t.result(), order.join(",")).to.deep.equal({ keys: sorted.slice(0, 4), truncated: true });
      }
      const fits = new TopKeys(100, 100);
      fits.addAll(all);
      expect(fits.result()).to.deep.equal({ keys: sorted, truncated: false });
    });

    it("add reports work in proportion to the length of the keys it compares", () => {
      const short = new TopKeys(10_000);
      const long = new TopKeys(10_000, Infinity);
      let shortWork = 0;
      let longWork = 0;
      const keys = longKeys(2000, 2);
      for (const k of keys) longWork += long.add(k);
      for (const k of keys) shortWork += short.add(k.slice(4000));
      expect(longWork).to.be.above(10 * shortWork);
      expect(longWork, "at least a unit per 256 characters hashed").to.be.at.least((2000 * 4009) / 256);
    });

    it("slicedResult sorts long keys in many slices of at most a slice's work each and answers like result()", async () => {
      const keys = longKeys(3000, 3);
      const t = new TopKeys(50_000, Infinity);
      t.addAll(keys);
      let pauses = 0;
      const slicer = new WorkSlicer(async () => {
        pauses++;
      }, SCAN_SLICE_RECORDS);
      const sliced = await t.slicedResult(slicer);
      expect(sliced).to.deep.equal({ keys: [...keys].sort(compareKeys), truncated: false });
      expect(sliced).to.deep.equal(t.result());
      // About 3,000 x log2(3,000) comparisons of 4 KB keys, 15.7 units each: some 70 slices.
      expect(pauses).to.be.above(40);
    });

    it("slicedResult of a few short keys does not pause", async () => {
      const t = new TopKeys(100);
      t.addAll(["b", "a", "c"]);
      const slicer = new WorkSlicer(() => Promise.reject(new Error("paused")), SCAN_SLICE_RECORDS);
      expect(await t.slicedResult(slicer)).to.deep.equal({ keys: ["a", "b", "c"], truncated: false });
    });
  });
});
