// LruPolicy: the least recently inserted, read or overwritten live slot is the victim.
import { expect } from "chai";
import { LruPolicy } from "../../../src/store/index.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";
import { drain, filled } from "./policy-fixtures.js";

function policyWith(slots: number[], capacity = 16): LruPolicy {
  return filled(new LruPolicy(), slots, capacity);
}

describe("store/policies LruPolicy", () => {
  it("is named lru", () => {
    expect(new LruPolicy().name).to.equal("lru");
  });

  it("names no victim (-1) and has size 0 when empty", () => {
    const p = policyWith([]);
    expect(p.victim()).to.equal(-1);
    expect(p.size).to.equal(0);
  });

  it("evicts in insertion order when nothing is touched", () => {
    const p = policyWith([3, 1, 4, 0, 5]);
    expect(p.size).to.equal(5);
    expect(drain(p)).to.deep.equal([3, 1, 4, 0, 5]);
    expect(p.size).to.equal(0);
  });

  it("a read moves the slot to most recent, so the next oldest becomes the victim", () => {
    const p = policyWith([0, 1, 2]);
    p.touchRead(0);
    expect(p.victim()).to.equal(1);
    expect(drain(p)).to.deep.equal([1, 2, 0]);
  });

  it("an overwrite (touchWrite) also moves the slot to most recent", () => {
    const p = policyWith([0, 1, 2]);
    p.touchWrite(0);
    p.touchWrite(1);
    expect(drain(p)).to.deep.equal([2, 0, 1]);
  });

  it("touching the most recent slot leaves the order unchanged", () => {
    const p = policyWith([0, 1, 2]);
    p.touchRead(2);
    p.touchWrite(2);
    expect(drain(p)).to.deep.equal([0, 1, 2]);
  });

  it("touching the only slot keeps it tracked and the victim", () => {
    const p = policyWith([7]);
    p.touchRead(7);
    expect(p.victim()).to.equal(7);
    expect(p.size).to.equal(1);
  });

  it("touching the tail of a two-slot list swaps the eviction order", () => {
    const p = policyWith([0, 1]);
    p.touchRead(0);
    expect(drain(p)).to.deep.equal([1, 0]);
  });

  it("removing the head, a middle slot or the tail keeps the rest in order", () => {
    const p = policyWith([0, 1, 2, 3, 4]);
    p.remove(4); // head (most recent)
    p.remove(2); // middle
    p.remove(0); // tail (victim)
    expect(p.size).to.equal(2);
    expect(p.victim()).to.equal(1);
    expect(drain(p)).to.deep.equal([1, 3]);
  });

  it("a removed slot can be inserted again and becomes most recent", () => {
    const p = policyWith([0, 1, 2]);
    p.remove(0);
    p.insert(0);
    expect(drain(p)).to.deep.equal([1, 2, 0]);
  });

  it("resize grows the metadata without losing the order, and never shrinks it", () => {
    const p = policyWith([0, 1, 2], 4);
    p.touchRead(0);
    p.resize(64);
    p.insert(40);
    p.resize(2); // smaller than what is in use: must be a no-op
    p.insert(63);
    expect(p.size).to.equal(5);
    expect(drain(p)).to.deep.equal([1, 2, 0, 40, 63]);
  });

  it("clear() forgets every slot; the policy is usable afterwards", () => {
    const p = policyWith([0, 1, 2]);
    p.clear();
    expect(p.size).to.equal(0);
    expect(p.victim()).to.equal(-1);
    p.insert(2);
    p.insert(1);
    expect(drain(p)).to.deep.equal([2, 1]);
  });

  it("matches a naive recency list under 3000 seeded random operations", () => {
    const random = seededRandom(20260101);
    const slots = 48;
    const p = new LruPolicy();
    p.resize(slots);
    const model: number[] = []; // oldest first
    for (let op = 0; op < 3000; op++) {
      const slot = randomInt(random, slots);
      const present = model.includes(slot);
      const r = random.next();
      if (!present) {
        p.insert(slot);
        model.push(slot);
      } else if (r < 0.3) {
        p.touchRead(slot);
        model.splice(model.indexOf(slot), 1);
        model.push(slot);
      } else if (r < 0.5) {
        p.touchWrite(slot);
        model.splice(model.indexOf(slot), 1);
        model.push(slot);
      } else if (r < 0.8) {
        p.remove(slot);
        model.splice(model.indexOf(slot), 1);
      } else {
        const v = p.victim();
        expect(v, `op ${op}`).to.equal(model[0]);
        p.remove(v);
        model.shift();
      }
      expect(p.size, `size after op ${op}`).to.equal(model.length);
      expect(p.victim(), `victim after op ${op}`).to.equal(model.length > 0 ? model[0] : -1);
    }
    expect(drain(p)).to.deep.equal(model);
  });
});
