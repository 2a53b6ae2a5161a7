// One contract for every eviction policy (lru, lfu, cawolfu): the same behaviour checks, and one
// model check that runs seeded random operations against a naive reference model of the policy
// and compares size, victim and eviction order after every step. The policy-specific rules
// (weights, aging windows, tie breaks) are table-tested in test/unit/store/.
import { expect } from "chai";
import { randomInt, seededRandom } from "../../src/core/random.js";
import { CawolfuPolicy, LfuPolicy, LruPolicy, type EvictionPolicy } from "../../src/store/index.js";
import { READ_WEIGHT, WRITE_WEIGHT } from "../../src/store/policies/cawolfu-policy.js";
import { drain, filled } from "../unit/store/policy-fixtures.js";

/** A naive reference of a policy: slots with a score; the lowest score, least recently touched first, is the victim. */
interface Model {
  insert(slot: number): void;
  read(slot: number): void;
  write(slot: number): void;
  remove(slot: number): void;
  victim(): number;
  readonly size: number;
}

/** A model keyed by (score, last touch); `onAccess` runs after every counted access (aging). */
function scoredModel(initial: number, readDelta: (score: number) => number, writeDelta: (score: number) => number, onAccess: (all: Map<number, { score: number }>) => void = () => undefined): Model {
  const slots = new Map<number, { score: number; touched: number }>();
  let tick = 0;
  const touch = (slot: number, next: (s: number) => number) => {
    const m = slots.get(slot) as { score: number; touched: number };
    m.score = next(m.score);
    m.touched = ++tick;
    onAccess(slots);
  };
  return {
    insert(slot) {
      slots.set(slot, { score: initial, touched: ++tick });
      onAccess(slots);
    },
    read: (slot) => touch(slot, readDelta),
    write: (slot) => touch(slot, writeDelta),
    remove: (slot) => void slots.delete(slot),
    victim() {
      let best = -1;
      let bm: { score: number; touched: number } | undefined;
      for (const [slot, m] of slots) {
        if (!bm || m.score < bm.score || (m.score === bm.score && m.touched < bm.touched)) {
          best = slot;
          bm = m;
        }
      }
      return best;
    },
    get size() {
      return slots.size;
    },
  };
}

/** cawolfu with a capacity share of 4 ages every 256 counted accesses. */
const CAWOLFU_WINDOW = 256;

interface Case {
  readonly name: string;
  create(): EvictionPolicy;
  model(): Model;
}

const CASES: readonly Case[] = [
  // Recency: every access makes the slot the newest; the oldest is the victim.
  { name: "lru", create: () => new LruPolicy(), model: () => scoredModel(0, (s) => s, (s) => s) },
  // Frequency: each access counts one; ties go to the least recently touched.
  { name: "lfu", create: () => new LfuPolicy(), model: () => scoredModel(1, (s) => s + 1, (s) => s + 1) },
  {
    name: "cawolfu",
    create: () => new CawolfuPolicy(4),
    model: () => {
      let accesses = 0;
      return scoredModel(WRITE_WEIGHT, (s) => s + READ_WEIGHT, (s) => s + WRITE_WEIGHT, (all) => {
        if (++accesses < CAWOLFU_WINDOW) return;
        accesses = 0;
        for (const m of all.values()) m.score /= 2;
      });
    },
  },
];

for (const c of CASES) {
  describe(`contract: eviction policy ${c.name}`, () => {
    it("is named after its SERVICE_EVICTION_ALGORITHM value", () => {
      expect(c.create().name).to.equal(c.name);
    });

    it("names no victim (-1) and has size 0 when empty", () => {
      const p = filled(c.create(), [], 16);
      expect(p.victim()).to.equal(-1);
      expect(p.size).to.equal(0);
    });

    it("with no accesses after the inserts, evicts in insertion order", () => {
      expect(drain(filled(c.create(), [3, 0, 2, 1], 16))).to.deep.equal([3, 0, 2, 1]);
    });

    it("removing the victim, a middle slot or the newest keeps the order of the rest", () => {
      const p = filled(c.create(), [0, 1, 2, 3, 4], 16);
      p.remove(0);
      p.remove(2);
      p.remove(4);
      expect(drain(p)).to.deep.equal([1, 3]);
    });

    it("a removed slot can be inserted again and counts as new", () => {
      const p = filled(c.create(), [0, 1, 2], 16);
      p.remove(0);
      p.insert(0);
      expect(drain(p)).to.deep.equal([1, 2, 0]);
    });

    it("resize grows the metadata without losing the order, and never shrinks it", () => {
      const p = filled(c.create(), [0, 1], 2);
      p.resize(64);
      p.insert(40);
      p.resize(1); // smaller than what is in use: a no-op
      p.insert(63);
      expect(p.size).to.equal(4);
      expect(drain(p)).to.deep.equal([0, 1, 40, 63]);
    });

    it("clear() forgets every slot; the policy is usable afterwards", () => {
      const p = filled(c.create(), [0, 1, 2], 16);
      p.clear();
      expect(p.size).to.equal(0);
      expect(p.victim()).to.equal(-1);
      p.insert(2);
      p.insert(1);
      expect(drain(p)).to.deep.equal([2, 1]);
    });

    it("matches its reference model under 4000 seeded random operations (size, victim and final eviction order)", () => {
      const random = seededRandom(20260101);
      const slots = 40;
      const p = c.create();
      p.resize(slots);
      const model = c.model();
      const present = new Set<number>();
      for (let op = 0; op < 4000; op++) {
        const slot = randomInt(random, slots);
        const r = random.next();
        if (!present.has(slot)) {
          p.insert(slot);
          model.insert(slot);
          present.add(slot);
        } else if (r < 0.3) {
          p.touchRead(slot);
          model.read(slot);
        } else if (r < 0.55) {
          p.touchWrite(slot);
          model.write(slot);
        } else if (r < 0.8) {
          p.remove(slot);
          model.remove(slot);
          present.delete(slot);
        } else {
          const v = p.victim();
          expect(v, `victim at op ${op}`).to.equal(model.victim());
          p.remove(v);
          model.remove(v);
          present.delete(v);
        }
        expect(p.size, `size after op ${op}`).to.equal(model.size);
        expect(p.victim(), `victim after op ${op}`).to.equal(model.victim());
      }
      const order: number[] = [];
      for (let v = model.victim(); v >= 0; v = model.victim()) {
        order.push(v);
        model.remove(v);
      }
      expect(drain(p)).to.deep.equal(order);
    });
  });
}
