// ScoreHeap: a min-heap of slots by (score, last touch), backing the frequency policies.
import { expect } from "chai";
import { ScoreHeap } from "../../../src/store/policies/score-heap.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";

function heapOf(entries: Array<[slot: number, score: number]>, size = 32): ScoreHeap {
  const h = new ScoreHeap();
  h.resize(size);
  for (const [slot, score] of entries) h.push(slot, score);
  return h;
}

/** Pops the whole heap in order. */
function drain(h: ScoreHeap): number[] {
  const out: number[] = [];
  for (let t = h.top(); t >= 0; t = h.top()) {
    out.push(t);
    h.remove(t);
    if (out.length > 10_000) throw new Error("heap never empties");
  }
  return out;
}

describe("store/policies ScoreHeap", () => {
  it("has no top (-1) and size 0 when empty", () => {
    const h = heapOf([]);
    expect(h.top()).to.equal(-1);
    expect(h.size).to.equal(0);
  });

  it("pops slots by ascending score", () => {
    const h = heapOf([
      [0, 5],
      [1, 3],
      [2, 9],
      [3, 1],
      [4, 7],
      [5, 0.5],
    ]);
    expect(h.size).to.equal(6);
    expect(drain(h)).to.deep.equal([5, 3, 1, 0, 4, 2]);
  });

  it("pops equal scores in push order (least recently touched first)", () => {
    const h = heapOf([
      [4, 2],
      [1, 2],
      [3, 2],
      [0, 1],
      [2, 2],
    ]);
    expect(drain(h)).to.deep.equal([0, 4, 1, 3, 2]);
  });

  it("bump adds to the score and makes the slot the most recently touched", () => {
    const h = heapOf([
      [0, 1],
      [1, 1],
      [2, 2],
    ]);
    h.bump(0, 1); // 0 -> 2, touched after 2
    expect(h.score(0)).to.equal(2);
    expect(h.top()).to.equal(1);
    expect(drain(h)).to.deep.equal([1, 2, 0]);
  });

  it("a zero bump keeps the score but still refreshes the tie-break", () => {
    const h = heapOf([
      [0, 1],
      [1, 1],
    ]);
    h.bump(0, 0);
    expect(h.score(0)).to.equal(1);
    expect(drain(h)).to.deep.equal([1, 0]);
  });

  it("contains() follows push and remove", () => {
    const h = heapOf([[3, 1]]);
    expect(h.contains(3)).to.equal(true);
    expect(h.contains(4)).to.equal(false);
    h.remove(3);
    expect(h.contains(3)).to.equal(false);
  });

  it("removing the top, the last element or an inner slot keeps the heap ordered", () => {
    const entries: Array<[number, number]> = [];
    for (let s = 0; s < 15; s++) entries.push([s, (s * 7) % 15]); // scores are a permutation of 0..14
    const h = heapOf(entries);
    h.remove(h.top()); // the top: slot 0 (score 0)
    h.remove(14); // score 8
    h.remove(6); // score 12
    h.remove(9); // score 3
    expect(h.size).to.equal(11);
    const order = drain(h);
    const scores = order.map((s) => (s * 7) % 15);
    expect(scores).to.deep.equal([...scores].sort((a, b) => a - b));
    expect(order).to.have.members([1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 13]);
  });

  it("removing a slot that is not in the heap changes nothing", () => {
    const h = heapOf([
      [0, 2],
      [1, 1],
    ]);
    h.remove(5);
    h.remove(1);
    h.remove(1);
    expect(h.size).to.equal(1);
    expect(drain(h)).to.deep.equal([0]);
  });

  it("rescale applies the function to every score and keeps the order for a monotone function", () => {
    const h = heapOf([
      [0, 8],
      [1, 2],
      [2, 4],
    ]);
    h.rescale((s) => s / 2);
    expect([h.score(0), h.score(1), h.score(2)]).to.deep.equal([4, 1, 2]);
    expect(drain(h)).to.deep.equal([1, 2, 0]);
  });

  it("rescale restores the heap order even when the function reverses it", () => {
    const entries: Array<[number, number]> = [];
    for (let s = 0; s < 20; s++) entries.push([s, s]);
    const h = heapOf(entries);
    h.rescale((s) => 100 - s);
    expect(drain(h)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 19 - i));
  });

  it("clear() empties the heap; it is usable afterwards", () => {
    const h = heapOf([
      [0, 1],
      [1, 2],
    ]);
    h.clear();
    expect(h.size).to.equal(0);
    expect(h.top()).to.equal(-1);
    expect(h.contains(0)).to.equal(false);
    h.push(1, 3);
    h.push(0, 4);
    expect(drain(h)).to.deep.equal([1, 0]);
  });

  it("resize grows without losing entries, and a smaller size is ignored", () => {
    const h = heapOf(
      [
        [0, 3],
        [1, 1],
      ],
      2,
    );
    h.resize(100);
    h.push(99, 2);
    h.resize(1);
    h.push(50, 0);
    expect(drain(h)).to.deep.equal([50, 1, 99, 0]);
  });

  for (const seed of [1, 2, 3, 1234, 987654]) {
    it(`matches a naive sorted model under 4000 random operations (seed=${seed})`, () => {
      const random = seededRandom(seed);
      const slots = 64;
      const h = new ScoreHeap();
      h.resize(slots);
      const model = new Map<number, { score: number; tick: number }>();
      let tick = 0;
      const expectedTop = (): number => {
        let best = -1;
        for (const [slot, m] of model) {
          const b = model.get(best);
          if (!b || m.score < b.score || (m.score === b.score && m.tick < b.tick)) best = slot;
        }
        return best;
      };
      for (let op = 0; op < 4000; op++) {
        const slot = randomInt(random, slots);
        const r = random.next();
        const m = model.get(slot);
        if (!m) {
          const score = randomInt(random, 8); // small range: plenty of ties
          h.push(slot, score);
          model.set(slot, { score, tick: ++tick });
        } else if (r < 0.4) {
          const delta = randomInt(random, 3);
          h.bump(slot, delta);
          m.score += delta;
          m.tick = ++tick;
        } else if (r < 0.7) {
          h.remove(slot);
          model.delete(slot);
        } else if (r < 0.9) {
          const top = h.top();
          expect(top, `seed=${seed} op ${op}`).to.equal(expectedTop());
          h.remove(top);
          model.delete(top);
        } else if (r < 0.93) {
          h.rescale((s) => s / 2);
          for (const e of model.values()) e.score /= 2;
        } else {
          // a non-monotone rescale: the heap must be rebuilt, ticks still break ties
          h.rescale((s) => (s * 3) % 5);
          for (const e of model.values()) e.score = (e.score * 3) % 5;
        }
        expect(h.size, `seed=${seed} size after op ${op}`).to.equal(model.size);
        expect(h.top(), `seed=${seed} top after op ${op}`).to.equal(expectedTop());
      }
      const expectedOrder = [...model.entries()]
        .sort(([, a], [, b]) => a.score - b.score || a.tick - b.tick)
        .map(([slot]) => slot);
      expect(drain(h)).to.deep.equal(expectedOrder);
    });
  }
});
