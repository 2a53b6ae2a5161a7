import { expect } from "chai";
import { HashRing } from "../../../src/ring/hash-ring.js";
import { VIRTUAL_NODES } from "../../../src/core/limits.js";

const keys = (n: number, prefix = "key"): string[] => Array.from({ length: n }, (_, i) => `${prefix}:${i}`);

describe("ring/hash-ring", () => {
  describe("virtual nodes", () => {
    it("places 128 virtual nodes per node", () => {
      expect(VIRTUAL_NODES).to.equal(128);
    });

    it("builds with 128 virtual nodes by default (same placement as an explicit 128)", () => {
      const ids = ["n1", "n2", "n3", "n4"];
      const byDefault = HashRing.build(ids, 2);
      const explicit = HashRing.build(ids, 2, 128);
      const other = HashRing.build(ids, 2, 64);
      let differsFrom64 = 0;
      for (const k of keys(5_000)) {
        expect(byDefault.ownersOf(k).ids).to.deep.equal(explicit.ownersOf(k).ids);
        if (byDefault.ownersOf(k).header !== other.ownersOf(k).header) differsFrom64++;
      }
      expect(differsFrom64).to.be.greaterThan(0);
    });

    it("gives each of 3 nodes a fair share of primaries (128 points smooth the split)", () => {
      const ring = HashRing.build(["n1", "n2", "n3"], 3);
      const share = new Map<string, number>();
      const all = keys(30_000);
      for (const k of all) {
        const p = ring.ownersOf(k).primary;
        share.set(p, (share.get(p) ?? 0) + 1);
      }
      expect(share.size).to.equal(3);
      for (const [node, n] of share) expect(n / all.length, node).to.be.within(0.25, 0.42);
    });
  });

  describe("owners", () => {
    it("are distinct, primary first, and min(replication, nodes) long", () => {
      for (const [nodes, replication] of [[1, 3], [2, 3], [3, 3], [5, 3], [5, 1], [7, 5], [4, 4], [3, 10]] as const) {
        const ids = Array.from({ length: nodes }, (_, i) => `node-${i}`);
        const ring = HashRing.build(ids, replication);
        for (const k of keys(2_000)) {
          const o = ring.ownersOf(k);
          expect(o.ids).to.have.length(Math.min(replication, nodes));
          expect(new Set(o.ids).size).to.equal(o.ids.length);
          expect(o.primary).to.equal(o.ids[0]);
          for (const id of o.ids) expect(ids).to.include(id);
        }
      }
    });

    it("a one-node ring owns every key on that node", () => {
      const ring = HashRing.build(["solo"], 3);
      for (const k of keys(500)) expect(ring.ownersOf(k).ids).to.deep.equal(["solo"]);
    });

    it("spreads replicas: with 5 nodes and replication 3 every node appears in some owner lists", () => {
      const ring = HashRing.build(["a", "b", "c", "d", "e"], 3);
      const seen = new Set<string>();
      const asReplica = new Set<string>();
      for (const k of keys(5_000)) {
        const o = ring.ownersOf(k).ids;
        o.forEach((id) => seen.add(id));
        o.slice(1).forEach((id) => asReplica.add(id));
      }
      expect([...seen].sort()).to.deep.equal(["a", "b", "c", "d", "e"]);
      expect([...asReplica].sort()).to.deep.equal(["a", "b", "c", "d", "e"]);
    });

    it("are the same regardless of the order ids are given in, and ignore duplicates", () => {
      const a = HashRing.build(["n1", "n2", "n3", "n4"], 3);
      const b = HashRing.build(["n4", "n2", "n1", "n3"], 3);
      const c = HashRing.build(new Set(["n3", "n1", "n4", "n2", "n1"]), 3);
      const d = HashRing.build(["n3", "n3", "n1", "n4", "n2", "n4"], 3);
      for (const k of keys(5_000)) {
        const expected = a.ownersOf(k).ids;
        expect(b.ownersOf(k).ids).to.deep.equal(expected);
        expect(c.ownersOf(k).ids).to.deep.equal(expected);
        expect(d.ownersOf(k).ids).to.deep.equal(expected);
      }
      expect(d.nodes).to.deep.equal(["n1", "n2", "n3", "n4"]);
    });

    it("are deterministic across independently built rings (every node computes the same)", () => {
      const a = HashRing.build(["x", "y", "z"], 2);
      const b = HashRing.build(["x", "y", "z"], 2);
      for (const k of keys(1_000)) expect(a.ownersOf(k).header).to.equal(b.ownersOf(k).header);
    });

    it("isOwner is true exactly for the ids of ownersOf", () => {
      const ids = ["n1", "n2", "n3", "n4", "n5"];
      const ring = HashRing.build(ids, 2);
      for (const k of keys(1_000)) {
        const owners = ring.ownersOf(k).ids;
        for (const id of ids) expect(ring.isOwner(k, id)).to.equal(owners.includes(id));
      }
      expect(ring.isOwner("k", "unknown")).to.equal(false);
    });

    it("ownersAtHash covers the whole 32-bit space, wrapping past the last point", () => {
      const ring = HashRing.build(["n1", "n2", "n3"], 2);
      for (const h of [0, 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1]) {
        const o = ring.ownersAtHash(h);
        expect(o.ids).to.have.length(2);
      }
      // The very top of the space wraps to the first point, as does hash 0 (unless a point sits at 0).
      expect(ring.ownersAtHash(2 ** 32 - 1)).to.equal(ring.ownersAtHash(0));
    });
  });

  describe("movement when membership changes", () => {
    const all = keys(20_000);

    it("adding a 4th node to 3 moves roughly 1/4 of the primaries, all to the new node", () => {
      const before = HashRing.build(["n1", "n2", "n3"], 3);
      const after = HashRing.build(["n1", "n2", "n3", "n4"], 3);
      let moved = 0;
      for (const k of all) {
        const a = before.ownersOf(k).primary;
        const b = after.ownersOf(k).primary;
        if (a !== b) {
          moved++;
          expect(b, k).to.equal("n4");
        }
      }
      expect(moved / all.length).to.be.within(0.15, 0.35);
    });

    it("adding a node only inserts it into owner lists; the other owners keep their relative order", () => {
      const before = HashRing.build(["n1", "n2", "n3", "n4", "n5"], 3);
      const after = HashRing.build(["n1", "n2", "n3", "n4", "n5", "n6"], 3);
      for (const k of all.slice(0, 5_000)) {
        const a = before.ownersOf(k).ids;
        const b = after.ownersOf(k).ids;
        const withoutNew = b.filter((id) => id !== "n6");
        expect(withoutNew, k).to.deep.equal(a.slice(0, withoutNew.length));
      }
    });

    it("removing a node only moves keys that node owned", () => {
      const before = HashRing.build(["n1", "n2", "n3", "n4"], 2);
      const after = HashRing.build(["n1", "n2", "n4"], 2);
      let touched = 0;
      for (const k of all) {
        const a = before.ownersOf(k).ids;
        const b = after.ownersOf(k).ids;
        if (!a.includes("n3")) {
          expect(b, k).to.deep.equal(a);
        } else {
          touched++;
          // The surviving owners stay, in the same order; one replacement is appended.
          const kept = a.filter((id) => id !== "n3");
          expect(b.slice(0, kept.length), k).to.deep.equal(kept);
          expect(b).to.not.include("n3");
        }
      }
      expect(touched).to.be.greaterThan(0);
    });

    it("removing a node keeps the primary of every key the node was not primary for", () => {
      const before = HashRing.build(["n1", "n2", "n3", "n4"], 3);
      const after = HashRing.build(["n1", "n2", "n4"], 3);
      let moved = 0;
      for (const k of all) {
        const a = before.ownersOf(k).primary;
        const b = after.ownersOf(k).primary;
        if (a !== "n3") expect(b, k).to.equal(a);
        else moved++;
      }
      expect(moved / all.length).to.be.within(0.15, 0.35);
    });
  });

  describe("owner list objects", () => {
    it("are shared: keys with the same owners get the same (frozen) object", () => {
      const ring = HashRing.build(["n1", "n2", "n3"], 3);
      const byHeader = new Map<string, unknown>();
      for (const k of keys(3_000)) {
        const o = ring.ownersOf(k);
        const seen = byHeader.get(o.header);
        if (seen) expect(o).to.equal(seen);
        else byHeader.set(o.header, o);
        expect(Object.isFrozen(o)).to.equal(true);
        expect(Object.isFrozen(o.ids)).to.equal(true);
      }
      // 3 nodes, replication 3: at most 3! = 6 distinct orders.
      expect(byHeader.size).to.be.at.most(6);
      expect(ring.ownersOf("same")).to.equal(ring.ownersOf("same"));
    });

    it("carry header (comma-joined ids) and json (JSON array of ids)", () => {
      const ring = HashRing.build(["n1", "n2", "n3", "n4"], 3);
      for (const k of keys(500)) {
        const o = ring.ownersOf(k);
        expect(o.header).to.equal(o.ids.join(","));
        expect(o.json).to.equal(JSON.stringify(o.ids));
        expect(JSON.parse(o.json)).to.deep.equal(o.ids);
      }
    });

    it("json escapes unusual node ids correctly", () => {
      const ring = HashRing.build(['n"1', "n\\2"], 2);
      const o = ring.ownersOf("k");
      expect(JSON.parse(o.json)).to.deep.equal(o.ids);
    });
  });

  describe("empty ring", () => {
    it("gives no owners", () => {
      const ring = HashRing.build([], 3);
      const o = ring.ownersOf("anything");
      expect(o.ids).to.deep.equal([]);
      expect(o.primary).to.equal("");
      expect(o.header).to.equal("");
      expect(o.json).to.equal("[]");
      expect(ring.isOwner("anything", "n1")).to.equal(false);
      expect(ring.nodes).to.deep.equal([]);
    });
  });

  describe("nodes and sameAs", () => {
    it("lists the node ids sorted and frozen", () => {
      const ring = HashRing.build(["c", "a", "b"], 2);
      expect(ring.nodes).to.deep.equal(["a", "b", "c"]);
      expect(Object.isFrozen(ring.nodes)).to.equal(true);
      expect(ring.replication).to.equal(2);
    });

    it("is true for the same members in any order with the same replication", () => {
      expect(HashRing.build(["a", "b", "c"], 3).sameAs(HashRing.build(["c", "a", "b"], 3))).to.equal(true);
      expect(HashRing.build([], 3).sameAs(HashRing.build([], 3))).to.equal(true);
    });

    it("is false when the replication differs", () => {
      expect(HashRing.build(["a", "b", "c"], 3).sameAs(HashRing.build(["a", "b", "c"], 2))).to.equal(false);
    });

    it("is false when a member is added, removed or replaced", () => {
      const base = HashRing.build(["a", "b", "c"], 3);
      expect(base.sameAs(HashRing.build(["a", "b", "c", "d"], 3))).to.equal(false);
      expect(base.sameAs(HashRing.build(["a", "b"], 3))).to.equal(false);
      expect(base.sameAs(HashRing.build(["a", "b", "x"], 3))).to.equal(false);
      expect(HashRing.build(["a", "b"], 3).sameAs(base)).to.equal(false);
    });
  });
});
