// Merkle summaries (pure): leaf counts (powers of two, capped), the leaf of a key (stable, in
// range), roots independent of insertion order, a changed version touching exactly one leaf,
// and differingLeaves naming the leaves to pull.
import { expect } from "chai";
import { hash32 } from "../../../../src/core/hash.js";
import { differingLeaves, leafCountFor, leafOf, MERKLE_LEAVES_MAX, MerkleBuilder, validLeafCount } from "../../../../src/cluster/anti-entropy/merkle.js";
import type { VersionedRecord } from "../../../../src/store/index.js";

function rec(key: string, version: number, extra: Partial<VersionedRecord> = {}): VersionedRecord {
  return { key, value: `v-${key}`, version, origin: "n1", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false, ...extra };
}

function build(records: readonly VersionedRecord[], leafCount: number): MerkleBuilder {
  const b = new MerkleBuilder(leafCount);
  for (const r of records) b.add(r, hash32(r.key));
  return b;
}

const records = (n: number): VersionedRecord[] => Array.from({ length: n }, (_, i) => rec(`key-${i}`, 1_000 + i));

describe("dist/merkle", () => {
  describe("leafCountFor: about chunkSize records per leaf, a power of two, capped at 65536", () => {
    const rows: Array<[records: number, chunk: number, leaves: number]> = [
      [0, 128, 1],
      [1, 128, 1],
      [128, 128, 1],
      [129, 128, 2],
      [256, 128, 2],
      [257, 128, 4],
      [1_000, 128, 8],
      [1_025, 128, 16],
      [5, 1, 8],
      [5, 0, 8],
      [100_000_000, 1, MERKLE_LEAVES_MAX],
      [65_537, 1, MERKLE_LEAVES_MAX],
    ];
    for (const [n, chunk, leaves] of rows) {
      it(`${n} records at chunk ${chunk} -> ${leaves} leaves`, () => {
        const got = leafCountFor(n, chunk);
        expect(got).to.equal(leaves);
        expect(validLeafCount(got)).to.equal(true);
      });
    }

    it("validLeafCount accepts powers of two in 1..65536 only", () => {
      for (const n of [1, 2, 4, 1024, 65_536]) expect(validLeafCount(n), String(n)).to.equal(true);
      for (const n of [0, 3, 6, 1000, 131_072, -2, 2.5, Number.NaN]) expect(validLeafCount(n), String(n)).to.equal(false);
    });
  });

  describe("leafOf", () => {
    it("is stable (same key, same leaf) and within 0..leafCount-1", () => {
      for (const leafCount of [1, 2, 16, 1024, MERKLE_LEAVES_MAX]) {
        for (let i = 0; i < 500; i++) {
          const h = hash32(`key-${i}`);
          const leaf = leafOf(h, leafCount);
          expect(leaf).to.equal(leafOf(h, leafCount));
          expect(leaf).to.be.within(0, leafCount - 1);
        }
      }
    });

    it("puts every key in leaf 0 of a one-leaf tree and spreads keys over many leaves", () => {
      const used = new Set<number>();
      for (let i = 0; i < 2_000; i++) {
        expect(leafOf(hash32(`key-${i}`), 1)).to.equal(0);
        used.add(leafOf(hash32(`key-${i}`), 16));
      }
      expect(used.size).to.equal(16);
    });
  });

  describe("roots and leaves", () => {
    it("identical record sets give identical roots and leaves, whatever the insertion order", () => {
      const set = records(300);
      const shuffled = [...set].reverse();
      shuffled.push(shuffled.shift() as VersionedRecord);
      const a = build(set, 4);
      const b = build(shuffled, 4);
      expect(a.root()).to.equal(b.root());
      expect(a.leaves()).to.deep.equal(b.leaves());
      expect(a.records).to.equal(300);
      expect(differingLeaves(a.leaves(), b.leaves())).to.deep.equal([]);
    });

    it("one changed version changes exactly one leaf (the key's) and the root", () => {
      const set = records(300);
      const changed = set.map((r) => (r.key === "key-42" ? { ...r, version: r.version + 1 } : r));
      const a = build(set, 8);
      const b = build(changed, 8);
      expect(a.root()).to.not.equal(b.root());
      expect(differingLeaves(a.leaves(), b.leaves())).to.deep.equal([leafOf(hash32("key-42"), 8)]);
    });

    it("the origin and the tombstone flag are part of a record's digest; the value is not", () => {
      const base = records(50);
      const root = build(base, 4).root();
      const withOrigin = base.map((r) => (r.key === "key-7" ? { ...r, origin: "n2" } : r));
      const asTombstone = base.map((r) => (r.key === "key-7" ? { ...r, value: "", tombstone: true } : r));
      const otherValue = base.map((r) => (r.key === "key-7" ? { ...r, value: "different bytes" } : r));
      expect(build(withOrigin, 4).root()).to.not.equal(root);
      expect(build(asTombstone, 4).root()).to.not.equal(root);
      expect(build(otherValue, 4).root(), "same (key, version, origin): same record").to.equal(root);
    });

    it("a missing record changes its leaf only", () => {
      const set = records(200);
      const missing = set.filter((r) => r.key !== "key-99");
      expect(differingLeaves(build(set, 16).leaves(), build(missing, 16).leaves())).to.deep.equal([leafOf(hash32("key-99"), 16)]);
    });

    it("empty trees of the same size agree; leaves are 16 hex digits each", () => {
      const a = new MerkleBuilder(4);
      const b = new MerkleBuilder(4);
      expect(a.root()).to.equal(b.root());
      expect(a.leaves()).to.deep.equal(["0000000000000000", "0000000000000000", "0000000000000000", "0000000000000000"]);
      expect(build(records(3), 4).leaves().every((l) => /^[0-9a-f]{16}$/.test(l))).to.equal(true);
    });
  });

  describe("differingLeaves", () => {
    it("names the indices that differ, in order", () => {
      expect(differingLeaves(["a", "b", "c", "d"], ["a", "x", "c", "y"])).to.deep.equal([1, 3]);
      expect(differingLeaves(["a", "b"], ["a", "b"])).to.deep.equal([]);
    });

    it("treats leaves missing on one side as differing", () => {
      expect(differingLeaves(["a", "b"], ["a", "b", "c", "d"])).to.deep.equal([2, 3]);
      expect(differingLeaves([], ["z"])).to.deep.equal([0]);
    });
  });
});
