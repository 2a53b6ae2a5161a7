// LfuPolicy: the slot with the fewest accesses is the victim, the least recently touched among equals.
import { expect } from "chai";
import { LfuPolicy } from "../../../src/store/index.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";
import { drain, filled } from "./policy-fixtures.js";

function policyWith(slots: number[], capacity = 16): LfuPolicy {
  return filled(new LfuPolicy(), slots, capacity);
}

describe("store/policies LfuPolicy", () => {
  it("is named lfu", () => {
    expect(new LfuPolicy().name).to.equal("lfu");
  });

  it("names no victim (-1) and has size 0 when empty", () => {
    const p = policyWith([]);
    expect(p.victim()).to.equal(-1);
    expect(p.size).to.equal(0);
  });

  it("counts the insert as one access and every read or overwrite as one more", () => {
    const p = policyWith([0, 1]);
    expect(p.frequency(0)).to.equal(1);
    p.touchRead(0);
    p.touchRead(0);
    p.touchWrite(0);
    p.touchWrite(1);
    expect(p.frequency(0)).to.equal(4);
    expect(p.frequency(1)).to.equal(2);
  });

  it("evicts the least frequently used slot first, whatever the insertion order", () => {
    const p = policyWith([0, 1, 2, 3]);
    for (let i = 0; i < 3; i++) p.touchRead(0); // 4
    p.touchRead(1); // 2
    for (let i = 0; i < 5; i++) p.touchWrite(3); // 6
    // slot 2 stays at 1
    expect(p.victim()).to.equal(2);
    expect(drain(p)).to.deep.equal([2, 1, 0, 3]);
  });

  it("breaks a frequency tie by evicting the least recently touched slot", () => {
    const p = policyWith([0, 1, 2]);
    // all at 2 after these, touched in the order 2, 0, 1
    p.touchRead(2);
    p.touchRead(0);
    p.touchWrite(1);
    expect(drain(p)).to.deep.equal([2, 0, 1]);
  });

  it("with equal counts and no touches, evicts in insertion order", () => {
    expect(drain(policyWith([5, 2, 9, 0]))).to.deep.equal([5, 2, 9, 0]);
  });

  it("a newcomer (1 access) is evicted before an older slot that was read once", () => {
    const p = policyWith([0]);
    p.touchRead(0);
    p.insert(1);
    expect(p.victim()).to.equal(1);
  });

  it("unlike LRU, a recent touch does not save a slot that has fewer accesses", () => {
    const p = policyWith([0, 1]);
    p.touchRead(0);
    p.touchRead(0); // 0 -> 3
    p.touchRead(1); // 1 -> 2, and the most recently touched
    expect(p.victim()).to.equal(1);
  });

  it("removing the victim or any other slot keeps the order of the rest", () => {
    const p = policyWith([0, 1, 2, 3, 4]);
    p.touchRead(4);
    p.touchRead(4);
    p.touchRead(3);
    p.remove(0); // the victim
    p.remove(3); // an inner slot
    expect(p.size).to.equal(3);
    expect(drain(p)).to.deep.equal([1, 2, 4]);
  });

  it("a re-inserted slot starts again at one access", () => {
    const p = policyWith([0, 1]);
    for (let i = 0; i < 5; i++) p.touchRead(0);
    p.touchRead(1);
    p.remove(0);
    p.insert(0);
    expect(p.frequency(0)).to.equal(1);
    expect(p.victim()).to.equal(0);
  });

  it("resize grows without losing counts or order", () => {
    const p = policyWith([0, 1, 2], 3);
    p.touchRead(0);
    p.resize(100);
    p.insert(99);
    p.resize(1);
    p.touchRead(99);
    p.touchRead(99);
    expect(p.frequency(0)).to.equal(2);
    expect(drain(p)).to.deep.equal([1, 2, 0, 99]);
  });

  it("clear() forgets every slot; the policy is usable afterwards", () => {
    const p = policyWith([0, 1, 2]);
    p.clear();
    expect(p.size).to.equal(0);
    expect(p.victim()).to.equal(-1);
    p.insert(1);
    p.insert(0);
    p.touchRead(1);
    expect(drain(p)).to.deep.equal([0, 1]);
  });

  it("matches a naive (count, last touch) model under 3000 seeded random operations", () => {
    const random = seededRandom(42);
    const slots = 40;
    const p = new LfuPolicy();
    p.resize(slots);
    const model = new Map<number, { count: number; touched: number }>();
    let tick = 0;
    const expectedVictim = (): number => {
      let best = -1;
      for (const [slot, m] of model) {
        const b = model.get(best);
        if (!b || m.count < b.count || (m.count === b.count && m.touched < b.touched)) best = slot;
      }
      return best;
    };
    for (let op = 0; op < 3000; op++) {
      const slot = randomInt(random, slots);
      const m = model.get(slot);
      const r = random.next();
      if (!m) {
        p.insert(slot);
        model.set(slot, { count: 1, touched: ++tick });
      } else if (r < 0.5) {
        if (r < 0.25) p.touchRead(slot);
        else p.touchWrite(slot);
        m.count++;
        m.touched = ++tick;
      } else if (r < 0.75) {
        p.remove(slot);
        model.delete(slot);
      } else {
        const v = p.victim();
        expect(v, `op ${op}`).to.equal(expectedVictim());
        p.remove(v);
        model.delete(v);
      }
      expect(p.size).to.equal(model.size);
      expect(p.victim(), `victim after op ${op}`).to.equal(expectedVictim());
    }
    for (const [slot, m] of model) expect(p.frequency(slot)).to.equal(m.count);
  });
});
