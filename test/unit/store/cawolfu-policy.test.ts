// CawolfuPolicy: an ageing frequency score where reads weigh more than writes; the lowest score
// is the victim, the least recently touched among equals.
import { expect } from "chai";
import { CawolfuPolicy } from "../../../src/store/index.js";
import { AGING_ACCESSES_PER_SLOT, READ_WEIGHT, WRITE_WEIGHT } from "../../../src/store/policies/cawolfu-policy.js";
import { drain, filled } from "./policy-fixtures.js";

/** The smallest aging window: shares up to 32 slots age every 256 accesses. */
const MIN_WINDOW = 256;

function policyWith(slots: number[], capacityShare = 4, size = 64): CawolfuPolicy {
  return filled(new CawolfuPolicy(capacityShare), slots, size);
}

function reads(p: CawolfuPolicy, slot: number, n: number): void {
  for (let i = 0; i < n; i++) p.touchRead(slot);
}

function writes(p: CawolfuPolicy, slot: number, n: number): void {
  for (let i = 0; i < n; i++) p.touchWrite(slot);
}

describe("store/policies CawolfuPolicy", () => {
  it("weighs a read above a write (READ_WEIGHT 1, WRITE_WEIGHT 0.25)", () => {
    expect(READ_WEIGHT).to.equal(1);
    expect(WRITE_WEIGHT).to.equal(0.25);
    expect(READ_WEIGHT).to.be.greaterThan(WRITE_WEIGHT);
  });

  it("scores an insert as a write, then adds the read weight per read and the write weight per overwrite", () => {
    const p = policyWith([0, 1]);
    expect(p.score(0)).to.equal(0.25);
    reads(p, 0, 2);
    writes(p, 0, 3);
    writes(p, 1, 1);
    expect(p.score(0)).to.equal(0.25 + 2 + 0.75);
    expect(p.score(1)).to.equal(0.5);
  });

  it("evicts a write-heavy slot before a read-hot one with fewer accesses", () => {
    const p = policyWith([0, 1]);
    writes(p, 0, 3); // 4 accesses, score 1.0
    reads(p, 1, 1); // 2 accesses, score 1.25
    expect(p.victim()).to.equal(0);
  });

  it("evicts the lowest score first", () => {
    const p = policyWith([0, 1, 2, 3]);
    reads(p, 0, 3); // 3.25
    writes(p, 1, 2); // 0.75
    reads(p, 3, 1); // 1.25
    // 2 stays at 0.25
    expect(drain(p)).to.deep.equal([2, 1, 3, 0]);
  });

  it("breaks a score tie by evicting the least recently touched slot", () => {
    const p = policyWith([0, 1, 2]);
    writes(p, 1, 4); // 1.25, touched first
    reads(p, 2, 1); // 1.25, touched second
    reads(p, 0, 1); // 1.25, touched last
    expect([p.score(0), p.score(1), p.score(2)]).to.deep.equal([1.25, 1.25, 1.25]);
    expect(drain(p)).to.deep.equal([1, 2, 0]);
  });

  it("ages after 8 accesses per slot of capacity share, never fewer than 256", () => {
    expect(AGING_ACCESSES_PER_SLOT).to.equal(8);
    for (const [share, window] of [
      [1, MIN_WINDOW],
      [32, MIN_WINDOW],
      [33, 264],
      [100, 800],
    ] as const) {
      const p = policyWith([0], share);
      reads(p, 0, window - 2); // window - 1 accesses with the insert
      expect(p.agings, `share ${share}: before the window`).to.equal(0);
      p.touchRead(0);
      expect(p.agings, `share ${share}: at the window`).to.equal(1);
    }
  });

  it("halves every score when the aging window is reached, and again after the next window", () => {
    const p = policyWith([0, 1]); // 2 accesses
    reads(p, 0, 100); // 102
    writes(p, 1, 10); // 112
    reads(p, 1, MIN_WINDOW - 113); // 255 accesses
    const before0 = p.score(0);
    const before1 = p.score(1);
    expect(before0).to.equal(100.25);
    expect(before1).to.equal(0.25 + 2.5 + (MIN_WINDOW - 113));
    expect(p.agings).to.equal(0);
    p.touchWrite(0); // access 256: the score is bumped, then everything is halved
    expect(p.agings).to.equal(1);
    expect(p.score(0)).to.equal((before0 + WRITE_WEIGHT) / 2);
    expect(p.score(1)).to.equal(before1 / 2);
    writes(p, 1, MIN_WINDOW);
    expect(p.agings).to.equal(2);
    expect(p.score(0)).to.equal((before0 + WRITE_WEIGHT) / 4);
    expect(p.score(1)).to.equal((before1 / 2 + MIN_WINDOW * WRITE_WEIGHT) / 2);
  });

  it("aging lets recent reads outrank older popularity that a plain count would keep", () => {
    const p = policyWith([0]); // A = slot 0
    reads(p, 0, 100); // A: 100.25, 101 accesses
    p.insert(2); // filler slot C
    writes(p, 2, MIN_WINDOW - 102); // access 256: aging, A -> 50.125
    expect(p.agings).to.equal(1);
    p.insert(1); // B = slot 1
    reads(p, 1, 60); // B: 60.25, never aged
    expect(p.score(0)).to.equal(50.125);
    expect(p.score(1)).to.equal(60.25);
    p.remove(2);
    // Without aging A (100.25) would outrank B (60.25); with it A is now the victim.
    expect(p.victim()).to.equal(0);
  });

  it("aging keeps the victim order among the slots it halves", () => {
    const p = policyWith([0, 1, 2]);
    reads(p, 2, 5); // 5.25
    reads(p, 0, 2); // 2.25
    // 1 stays at 0.25
    writes(p, 0, MIN_WINDOW - 10); // access 256 -> aging
    expect(p.agings).to.equal(1);
    expect(drain(p)).to.deep.equal([1, 2, 0]);
  });

  it("removals are not accesses: they do not move the aging window", () => {
    const p = policyWith([], 4, 512);
    for (let s = 0; s < 255; s++) p.insert(s); // 255 accesses
    for (let s = 0; s < 200; s++) p.remove(s);
    expect(p.agings).to.equal(0);
    p.insert(300); // access 256
    expect(p.agings).to.equal(1);
  });

  it("clear() forgets every slot and restarts the aging window", () => {
    const p = policyWith([0]);
    reads(p, 0, 200); // 201 accesses
    p.clear();
    expect(p.size).to.equal(0);
    expect(p.victim()).to.equal(-1);
    p.insert(3);
    reads(p, 3, 100); // 101 accesses since clear: no aging
    expect(p.agings).to.equal(0);
    expect(p.score(3)).to.equal(100.25);
    reads(p, 3, MIN_WINDOW - 101);
    expect(p.agings).to.equal(1);
  });

  it("removing slots keeps the remaining order; a re-inserted slot starts again at the write weight", () => {
    const p = policyWith([0, 1, 2, 3]);
    reads(p, 0, 4);
    reads(p, 1, 3);
    reads(p, 2, 2);
    reads(p, 3, 1);
    p.remove(3);
    p.remove(1);
    p.remove(0);
    p.insert(0);
    expect(p.score(0)).to.equal(0.25);
    expect(drain(p)).to.deep.equal([0, 2]);
  });

  it("resize grows without losing scores or order", () => {
    const p = policyWith([0, 1], 4, 2);
    reads(p, 0, 1);
    p.resize(50);
    p.insert(49);
    p.resize(1);
    expect(p.score(0)).to.equal(1.25);
    expect(drain(p)).to.deep.equal([1, 49, 0]);
  });

});
