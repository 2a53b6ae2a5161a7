// TombstoneQueue: one shard's tombstones oldest first, a linked list through a pool of nodes.
import { expect } from "chai";
import { randomInt, seededRandom } from "../../../src/core/random.js";
import { TombstoneQueue } from "../../../src/store/tombstone-queue.js";

/** The slots of the queue oldest first, taken out one by one (the queue is empty afterwards). */
function drain(q: TombstoneQueue): number[] {
  const out: number[] = [];
  for (let node = q.oldest(); node >= 0; node = q.oldest()) {
    out.push(q.slotOf(node));
    q.remove(node);
  }
  return out;
}

describe("store/tombstone-queue TombstoneQueue", () => {
  it("keeps slots oldest first with the time each became a tombstone", () => {
    const q = new TombstoneQueue();
    const a = q.push(7, 100);
    q.push(3, 200);
    expect(q.size).to.equal(2);
    expect(q.oldest()).to.equal(a);
    expect([q.slotOf(a), q.sinceOf(a)]).to.deep.equal([7, 100]);
    expect(drain(q)).to.deep.equal([7, 3]);
    expect([q.size, q.oldest()]).to.deep.equal([0, -1]);
  });

  it("removes a node at the front, in the middle or at the end and keeps the others in order", () => {
    const q = new TombstoneQueue();
    const nodes = [10, 11, 12, 13, 14].map((slot) => q.push(slot, slot));
    q.remove(nodes[2] as number);
    q.remove(nodes[0] as number);
    q.remove(nodes[4] as number);
    expect(q.size).to.equal(2);
    q.push(15, 15);
    expect(drain(q)).to.deep.equal([11, 13, 15]);
  });

  it("reuses removed nodes before it grows, and grows past its 16 initial nodes keeping the order", () => {
    const q = new TombstoneQueue();
    for (let round = 0; round < 3; round++) {
      const nodes = Array.from({ length: 16 }, (_, i) => q.push(i, round));
      for (const n of nodes) q.remove(n);
    }
    expect(q.capacity, "16 at a time fit the initial pool").to.equal(16);
    for (let slot = 0; slot < 100; slot++) q.push(slot, slot);
    expect(q.capacity).to.equal(128);
    expect(drain(q)).to.deep.equal(Array.from({ length: 100 }, (_, i) => i));
  });

  it("clear() forgets every node, gives the grown pool back and leaves the queue usable", () => {
    const q = new TombstoneQueue();
    for (let slot = 0; slot < 40; slot++) q.push(slot, slot);
    q.clear();
    expect([q.size, q.oldest(), q.capacity]).to.deep.equal([0, -1, 16]);
    q.push(5, 1);
    q.push(6, 2);
    expect(drain(q)).to.deep.equal([5, 6]);
  });

  it("finds the oldest with one step, however many nodes ahead of it were removed", () => {
    const q = new TombstoneQueue();
    const nodes = Array.from({ length: 10_000 }, (_, slot) => q.push(slot, slot));
    for (const n of nodes.slice(0, 9_990)) q.remove(n);
    const before = q.steps;
    for (let i = 0; i < 10; i++) {
      const node = q.oldest();
      expect(q.slotOf(node)).to.equal(9_990 + i);
      q.remove(node);
    }
    expect(q.steps - before).to.equal(10);
  });

  for (const seed of [1, 7, 99]) {
    it(`matches an array under 5000 random pushes, removals anywhere and pops of the oldest (seed=${seed})`, () => {
      const random = seededRandom(seed);
      const q = new TombstoneQueue();
      // The model: [slot, node] pairs oldest first.
      let model: [number, number][] = [];
      let nextSlot = 0;
      for (let op = 0; op < 5000; op++) {
        const roll = random.next();
        if (roll < 0.5 || model.length === 0) {
          const slot = nextSlot++;
          model.push([slot, q.push(slot, op)]);
        } else if (roll < 0.8) {
          const [, node] = model.splice(randomInt(random, model.length), 1)[0] as [number, number];
          q.remove(node);
        } else if (roll < 0.995) {
          const node = q.oldest();
          expect(node, `seed=${seed} op ${op}`).to.equal((model[0] as [number, number])[1]);
          expect(q.slotOf(node), `seed=${seed} op ${op}`).to.equal((model[0] as [number, number])[0]);
          q.remove(node);
          model.shift();
        } else {
          q.clear();
          model = [];
        }
        expect(q.size, `seed=${seed} op ${op}`).to.equal(model.length);
      }
      expect(drain(q), `seed=${seed}: the order at the end`).to.deep.equal(model.map(([slot]) => slot));
    });
  }
});
