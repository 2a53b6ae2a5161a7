import { expect } from "chai";
import { HashRing, virtualPoints } from "../../../src/ring/hash-ring.js";
import { HASH_SPACE, ringShares } from "../../../src/ring/index.js";

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe("ring/ring-shares", () => {
  it("an empty ring has no shares", () => {
    expect(ringShares(HashRing.build([], 3))).to.deep.equal([]);
  });

  it("a lone node is primary and owner of the whole hash space", () => {
    expect(ringShares(HashRing.build(["solo"], 3))).to.deep.equal([{ id: "solo", primaryShare: 1, ownerShare: 1 }]);
  });

  it("counts each arc exactly: two nodes with one virtual node each", () => {
    const [a] = virtualPoints("a", 1) as unknown as number[];
    const [b] = virtualPoints("b", 1) as unknown as number[];
    const [lo, hi] = (a as number) < (b as number) ? ["a", "b"] : ["b", "a"];
    const pLo = Math.min(a as number, b as number);
    const pHi = Math.max(a as number, b as number);
    const shares = ringShares(HashRing.build(["a", "b"], 1, 1));
    // Hashes in (pLo, pHi] map to the higher point; the rest, wrapping around, to the lower one.
    expect(shares.find((s) => s.id === hi)?.primaryShare).to.equal((pHi - pLo) / HASH_SPACE);
    expect(shares.find((s) => s.id === lo)?.primaryShare).to.equal((pLo + HASH_SPACE - pHi) / HASH_SPACE);
    // With replication 1 the owner share is the primary share.
    for (const s of shares) expect(s.ownerShare).to.equal(s.primaryShare);
  });

  it("primary shares add up to 1 and owner shares to min(replication, nodes), sorted by id", () => {
    for (const [ids, replication] of [[["n3", "n1", "n2"], 3], [["n1", "n2", "n3", "n4", "n5"], 2], [["x", "y"], 5]] as const) {
      const shares = ringShares(HashRing.build(ids, replication));
      expect(shares.map((s) => s.id)).to.deep.equal([...ids].sort());
      expect(sum(shares.map((s) => s.primaryShare))).to.be.closeTo(1, 1e-12);
      expect(sum(shares.map((s) => s.ownerShare))).to.be.closeTo(Math.min(replication, ids.length), 1e-12);
      for (const s of shares) {
        expect(s.ownerShare).to.be.at.least(s.primaryShare);
        expect(s.ownerShare).to.be.at.most(1);
      }
    }
  });

  it("agrees with the owners the ring gives to evenly spread hash values", () => {
    const ids = ["n1", "n2", "n3", "n4", "n5"];
    const ring = HashRing.build(ids, 2, 16);
    const samples = 200_000;
    const primary = new Map<string, number>(ids.map((id) => [id, 0]));
    const owner = new Map<string, number>(ids.map((id) => [id, 0]));
    for (let i = 0; i < samples; i++) {
      const owners = ring.ownersAtHash(Math.floor((i * HASH_SPACE) / samples));
      primary.set(owners.primary, (primary.get(owners.primary) as number) + 1);
      for (const id of owners.ids) owner.set(id, (owner.get(id) as number) + 1);
    }
    for (const s of ringShares(ring)) {
      expect(s.primaryShare, `${s.id} primary`).to.be.closeTo((primary.get(s.id) as number) / samples, 0.001);
      expect(s.ownerShare, `${s.id} owner`).to.be.closeTo((owner.get(s.id) as number) / samples, 0.001);
    }
  });

  it("gives every node an owner share of 1 when replication covers the whole ring", () => {
    for (const s of ringShares(HashRing.build(["a", "b", "c"], 3))) expect(s.ownerShare).to.be.closeTo(1, 1e-12);
  });
});
