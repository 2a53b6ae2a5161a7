// planMove (pure): what one node does with one local record when the ring changes. A node losing
// ownership migrates the record to the new primary and releases its copy; the first surviving
// old owner sends copies to the newcomers; other survivors send nothing; nothing moves when the
// owners are unchanged. Checked row by row on concrete keys, then as an invariant over many keys.
// Which moves are bound by the hold limit (half the tombstone TTL): values a node gives up only.
import { expect } from "chai";
import { copyHoldMaxMs, isHeldCopy, planMove } from "../../../../src/cluster/rebalance/plan-move.js";
import { HashRing } from "../../../../src/ring/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";

const R = 3;
const ring = (...ids: string[]) => HashRing.build(ids, R);
const THREE = ring("n1", "n2", "n3");
const FOUR = ring("n1", "n2", "n3", "n4");

function rec(key: string): VersionedRecord {
  return { key, value: "v", version: 1_000, origin: "n1", lastUpdatedMs: 1, expiresAtMs: 0, tombstone: false };
}

/** The first key `k-i` for which `pred(old owners, new owners)` holds. */
function keyWhere(from: HashRing, to: HashRing, pred: (prev: readonly string[], next: readonly string[]) => boolean): string {
  for (let i = 0; i < 100_000; i++) {
    const key = `k-${i}`;
    if (pred(from.ownersOf(key).ids, to.ownersOf(key).ids)) return key;
  }
  throw new Error("no key satisfies the predicate");
}

/** Plans of every node of `nodes` for `key`, by node id (undefined: nothing to do). */
function plans(key: string, from: HashRing, to: HashRing, nodes: readonly string[]) {
  return Object.fromEntries(nodes.map((id) => [id, planMove(rec(key), from, to, id)]));
}

const simplify = (m: ReturnType<typeof planMove>) => (m ? { targets: m.targets, release: m.release } : undefined);

describe("dist/rebalancer: planMove", () => {
  describe("a node joins (n4 into n1..n3, replication 3)", () => {
    const key = keyWhere(THREE, FOUR, (prev, next) => next[0] === "n4" && prev[0] !== "n4");
    const prev = THREE.ownersOf(key).ids;
    const next = FOUR.ownersOf(key).ids;
    const leaver = prev.find((id) => !next.includes(id)) as string;

    it("the old owner that loses the key migrates it to the new primary and releases its copy", () => {
      expect(leaver, `prev ${prev} next ${next}`).to.be.a("string");
      expect(simplify(planMove(rec(key), THREE, FOUR, leaver))).to.deep.equal({ targets: [next[0]], release: true });
    });

    it("the first surviving old owner sends a copy to the newcomer and keeps its own", () => {
      const first = prev[0] as string;
      expect(next).to.include(first);
      expect(simplify(planMove(rec(key), THREE, FOUR, first))).to.deep.equal({ targets: ["n4"], release: false });
    });

    it("the other surviving owners send nothing", () => {
      const others = prev.filter((id, i) => i > 0 && next.includes(id));
      expect(others).to.have.length.greaterThan(0);
      for (const id of others) expect(planMove(rec(key), THREE, FOUR, id), id).to.equal(undefined);
    });

    it("a newcomer holding a copy sends nothing", () => {
      expect(planMove(rec(key), THREE, FOUR, "n4")).to.equal(undefined);
    });

    it("the newcomer as a replica (not primary): the leaver still migrates to the new primary, the first old owner serves the newcomer", () => {
      const k = keyWhere(THREE, FOUR, (p, n) => n.includes("n4") && n[0] !== "n4");
      const p = THREE.ownersOf(k).ids;
      const n = FOUR.ownersOf(k).ids;
      const leaving = p.find((id) => !n.includes(id)) as string;
      const all = plans(k, THREE, FOUR, p);
      expect(simplify(all[leaving]), "leaver").to.deep.equal({ targets: [n[0]], release: true });
      expect(simplify(all[p[0] as string]), "first old owner").to.deep.equal({ targets: ["n4"], release: false });
    });
  });

  describe("a node leaves (n4 pruned from n1..n4)", () => {
    const key = keyWhere(FOUR, THREE, (prev) => prev[0] === "n4");
    const prev = FOUR.ownersOf(key).ids;
    const next = THREE.ownersOf(key).ids;

    it("the first old owner still on the ring sends a copy to the new owner; the others send nothing", () => {
      const survivors = prev.filter((id) => id !== "n4");
      const newcomer = next.find((id) => !prev.includes(id)) as string;
      expect(newcomer, `prev ${prev} next ${next}`).to.be.a("string");
      expect(simplify(planMove(rec(key), FOUR, THREE, survivors[0] as string))).to.deep.equal({ targets: [newcomer], release: false });
      for (const id of survivors.slice(1)) expect(planMove(rec(key), FOUR, THREE, id), id).to.equal(undefined);
    });
  });

  describe("nothing moves when owners are unchanged", () => {
    it("for a key whose owners are the same in both rings, no owner plans anything", () => {
      const key = keyWhere(THREE, FOUR, (prev, next) => prev.join() === next.join());
      for (const id of THREE.ownersOf(key).ids) expect(planMove(rec(key), THREE, FOUR, id), id).to.equal(undefined);
    });

    it("with identical rings nothing moves for any key", () => {
      const same = ring("n1", "n2", "n3");
      for (let i = 0; i < 500; i++) for (const id of ["n1", "n2", "n3"]) expect(planMove(rec(`x-${i}`), THREE, same, id)).to.equal(undefined);
    });

    it("an empty new ring plans nothing", () => {
      expect(planMove(rec("k"), THREE, ring(), "n1")).to.equal(undefined);
    });
  });

  describe("invariants over 2000 keys", () => {
    const changes: Array<[string, HashRing, HashRing]> = [
      ["join n4", THREE, FOUR],
      ["leave n4", FOUR, THREE],
      ["join n5 to four", FOUR, ring("n1", "n2", "n3", "n4", "n5")],
      ["replace n2 by n5", FOUR, ring("n1", "n3", "n4", "n5")],
    ];
    for (const [what, from, to] of changes) {
      it(`${what}: every new owner gets a copy, exactly one node keeps-and-sends, and only non-owners release`, () => {
        for (let i = 0; i < 2_000; i++) {
          const key = `inv-${i}`;
          const prev = from.ownersOf(key).ids;
          const next = to.ownersOf(key).ids;
          const got = new Set<string>();
          let senders = 0;
          for (const id of prev) {
            const m = planMove(rec(key), from, to, id);
            if (!m) continue;
            for (const t of m.targets) got.add(t);
            expect(m.release, `${key} on ${id}`).to.equal(!next.includes(id));
            if (!m.release) senders++;
          }
          for (const id of next) if (!prev.includes(id)) expect(got.has(id), `${key}: ${prev} -> ${next}, newcomer ${id}`).to.equal(true);
          expect(senders, `${key}: ${prev} -> ${next}`).to.be.at.most(1);
        }
      });
    }

    it("when every old owner loses the key (three nodes join at once), every new owner still receives a copy", () => {
      const seven = ring("n1", "n2", "n3", "n4", "n5", "n6", "n7");
      const key = keyWhere(THREE, seven, (prev, next) => prev.every((id) => !next.includes(id)));
      const prev = THREE.ownersOf(key).ids;
      const next = seven.ownersOf(key).ids;
      const got = new Set<string>();
      for (const id of prev) for (const t of planMove(rec(key), THREE, seven, id)?.targets ?? []) got.add(t);
      expect([...got].sort(), `${key}: ${prev} -> ${next}; the old owners all release their copies`).to.deep.equal([...next].sort());
    });
  });

  describe("the hold limit: which copies may not wait longer than half the tombstone TTL", () => {
    it("copyHoldMaxMs is half SERVICE_TOMBSTONE_TTL (5 min of the default 10 min)", () => {
      expect([copyHoldMaxMs(600_000), copyHoldMaxMs(20_000), copyHoldMaxMs(1_001)]).to.deep.equal([300_000, 10_000, 500]);
    });

    const key = keyWhere(THREE, FOUR, (prev, next) => next[0] === "n4" && prev[0] !== "n4");
    const leaver = THREE.ownersOf(key).ids.find((id) => !FOUR.ownersOf(key).ids.includes(id)) as string;
    const keeper = THREE.ownersOf(key).ids.find((id) => FOUR.ownersOf(key).ids.includes(id)) as string;
    const held = (r: VersionedRecord, id: string) => {
      const m = planMove(r, THREE, FOUR, id);
      return m === undefined ? undefined : isHeldCopy(m);
    };
    for (const [what, r, id, want] of [
      ["a value the node gives up", rec(key), leaver, true],
      ["a tombstone the node gives up (it only deletes older versions, whenever it lands)", { ...rec(key), value: "", tombstone: true }, leaver, false],
      ["a copy the first surviving owner sends to the newcomer (it stays an owner, and current)", rec(key), keeper, false],
    ] as const) {
      it(`${what}: ${want ? "bound" : "not bound"}`, () => {
        expect(held(r, id), `${key} at ${id}`).to.equal(want);
      });
    }
  });
});
