// HashRing.build sorts its points as numbers (point * members + member index) rather than with
// a comparator over objects: the same ring, point for point and owner list for owner list, as
// the straightforward construction below (the one it replaced), for rings of many sizes,
// replication factors and virtual-node counts, including points two members share.
import { expect } from "chai";
import { seededRandom } from "../../../src/core/random.js";
import { HashRing, virtualPoints } from "../../../src/ring/hash-ring.js";

/** The owners of every point, built the straightforward way. */
function reference(ids: readonly string[], replication: number, virtualNodes: number, pointsOf = virtualPoints): Array<{ point: number; owners: string[] }> {
  const nodes = [...new Set(ids)].sort();
  const placed: Array<{ point: number; node: string }> = [];
  for (const node of nodes) for (const point of pointsOf(node, virtualNodes)) placed.push({ point, node });
  placed.sort((a, b) => a.point - b.point || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  const want = Math.min(replication, nodes.length);
  return placed.map((p, i) => {
    const owners: string[] = [];
    for (let j = 0; owners.length < want && j < placed.length; j++) {
      const node = (placed[(i + j) % placed.length] as { node: string }).node;
      if (!owners.includes(node)) owners.push(node);
    }
    return { point: p.point, owners };
  });
}

/** The owners of every point of `ring`, read back through forEachArc. */
function ownersOfPoints(ring: HashRing): string[][] {
  const out: string[][] = [];
  ring.forEachArc((_hashes, owners) => out.push([...owners.ids]));
  return out;
}

describe("ring/hash-ring build", () => {
  it("places every point and its owners as the straightforward construction does", () => {
    const random = seededRandom(42);
    for (const [count, replication, virtualNodes] of [
      [0, 3, 128],
      [1, 3, 128],
      [2, 3, 16],
      [3, 3, 128],
      [7, 2, 64],
      [40, 3, 128],
      [300, 5, 8],
    ] as const) {
      const ids = Array.from({ length: count }, (_, i) => `node-${Math.floor(random.next() * 1e9).toString(36)}-${i}`);
      const ring = HashRing.build(ids, replication, virtualNodes);
      const want = reference(ids, replication, virtualNodes);
      expect(ownersOfPoints(ring), `${count} members, replication ${replication}, ${virtualNodes} points each`).to.deep.equal(want.map((w) => w.owners));
      for (const w of want.slice(0, 50)) expect(ring.ownersAtHash(w.point).ids).to.deep.equal(w.owners);
    }
  });

  it("points two members share are ordered by member id, as before", () => {
    // a point cache that gives "b" and "a" the same points
    const cache = new Map<string, Uint32Array>([
      ["a", Uint32Array.from([10, 20, 30])],
      ["b", Uint32Array.from([10, 25, 30])],
      ["c", Uint32Array.from([5, 15, 35])],
    ]);
    const ring = HashRing.build(["c", "b", "a"], 2, 3, cache);
    const pointsOf = (node: string) => cache.get(node) as Uint32Array;
    expect(ownersOfPoints(ring)).to.deep.equal(reference(["a", "b", "c"], 2, 3, pointsOf).map((w) => w.owners));
    expect(ring.ownersAtHash(10).ids).to.deep.equal(["a", "b"]);
  });
});
