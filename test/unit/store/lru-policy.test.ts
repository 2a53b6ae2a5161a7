// LruPolicy: the least recently inserted, read or overwritten live slot is the victim.
import { expect } from "chai";
import { LruPolicy } from "../../../src/store/index.js";
import { drain, filled } from "./policy-fixtures.js";

function policyWith(slots: number[], capacity = 16): LruPolicy {
  return filled(new LruPolicy(), slots, capacity);
}

describe("store/policies LruPolicy", () => {
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

});
