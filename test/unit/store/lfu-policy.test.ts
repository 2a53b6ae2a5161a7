// LfuPolicy: the slot with the fewest accesses is the victim, the least recently touched among equals.
import { expect } from "chai";
import { LfuPolicy } from "../../../src/store/index.js";
import { drain, filled } from "./policy-fixtures.js";

function policyWith(slots: number[], capacity = 16): LfuPolicy {
  return filled(new LfuPolicy(), slots, capacity);
}

describe("store/policies LfuPolicy", () => {
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

});
