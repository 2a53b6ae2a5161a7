// KeyIndex: the open-addressing key -> slot index of a shard (linear probing, backward-shift
// deletion). Checked against a Map, with hashes chosen to collide so probe chains are long.
import { expect } from "chai";
import { KeyIndex } from "../../../src/store/key-index.js";
import { hash32 } from "../../../src/core/hash.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";

/** An index over slot arrays the test owns, as a shard owns them. */
function harness(hashOf: (key: string) => number = (k) => hash32(k)) {
  const keys: (string | undefined)[] = [];
  const hashes: number[] = [];
  const free: number[] = [];
  const index = new KeyIndex(
    (slot, key) => keys[slot] === key,
    (slot) => hashes[slot] as number,
  );
  return {
    index,
    add(key: string): number {
      const slot = free.pop() ?? keys.length;
      keys[slot] = key;
      hashes[slot] = hashOf(key);
      index.insert(slot, hashes[slot] as number);
      return slot;
    },
    remove(slot: number): void {
      index.remove(slot, hashes[slot] as number);
      keys[slot] = undefined;
      free.push(slot);
    },
    find: (key: string) => index.find(key, hashOf(key)),
  };
}

describe("store/key-index KeyIndex", () => {
  it("finds nothing (-1) when empty", () => {
    const h = harness();
    expect(h.find("a")).to.equal(-1);
    expect(h.index.size).to.equal(0);
  });

  it("finds the slot of every inserted key and -1 for others", () => {
    const h = harness();
    const slots = new Map<string, number>();
    for (let i = 0; i < 1000; i++) slots.set(`k${i}`, h.add(`k${i}`));
    expect(h.index.size).to.equal(1000);
    for (const [k, s] of slots) expect(h.find(k), k).to.equal(s);
    for (let i = 1000; i < 1100; i++) expect(h.find(`k${i}`)).to.equal(-1);
  });

  it("tells apart keys whose hashes are equal", () => {
    const h = harness(() => 12345);
    const a = h.add("a");
    const b = h.add("b");
    const c = h.add("c");
    expect([h.find("a"), h.find("b"), h.find("c"), h.find("d")]).to.deep.equal([a, b, c, -1]);
  });

  it("removing the head of a collision chain keeps the rest of the chain reachable", () => {
    const h = harness(() => 7);
    const slots = ["a", "b", "c", "d", "e"].map((k) => h.add(k));
    h.remove(slots[0] as number);
    h.remove(slots[2] as number);
    expect(["a", "b", "c", "d", "e"].map((k) => h.find(k))).to.deep.equal([-1, slots[1], -1, slots[3], slots[4]]);
    expect(h.index.size).to.equal(3);
  });

  it("removing a slot that is not indexed changes nothing", () => {
    const h = harness();
    const a = h.add("a");
    h.index.remove(99, hash32("zz"));
    expect(h.find("a")).to.equal(a);
    expect(h.index.size).to.equal(1);
  });

  it("clear() forgets every key and the index is usable afterwards", () => {
    const h = harness();
    for (let i = 0; i < 50; i++) h.add(`k${i}`);
    h.index.clear();
    expect(h.index.size).to.equal(0);
    expect(h.find("k1")).to.equal(-1);
    const s = h.add("new");
    expect(h.find("new")).to.equal(s);
  });

  it("a lookup repeated after the index changed answers from the index, not from the lookup before", () => {
    const h = harness(() => 9);
    expect(h.find("a")).to.equal(-1);
    const a = h.add("a");
    expect(h.find("a")).to.equal(a);
    expect(h.find("a")).to.equal(a);
    h.remove(a);
    expect(h.find("a")).to.equal(-1);
    const b = h.add("b");
    expect(h.find("b")).to.equal(b);
    // The slot "a" had is reused for "c": a lookup of "a" must not find it.
    const c = h.add("c");
    expect(h.find("a")).to.equal(-1);
    expect(h.find("c")).to.equal(c);
    h.index.clear();
    expect(h.find("c")).to.equal(-1);
  });

  it("an equal key built as another string finds the slot the last lookup found", () => {
    const h = harness();
    const s = h.add("key-12");
    expect(h.find(["key", "12"].join("-"))).to.equal(s);
    expect(h.find(`key-${6 * 2}`)).to.equal(s);
    expect(h.find("key-13")).to.equal(-1);
  });

  it("probeLengthMax() is 0 when empty, the chain's length when every key has one hash, and short for well-mixed hashes", () => {
    expect(harness().index.probeLengthMax()).to.equal(0);
    const same = harness(() => 12345);
    const slots = Array.from({ length: 40 }, (_, i) => same.add(`k${i}`));
    expect(same.index.probeLengthMax()).to.equal(40);
    same.remove(slots[0] as number);
    expect(same.index.probeLengthMax(), "a removal shifts the chain back").to.equal(39);
    const mixed = harness();
    for (let i = 0; i < 1000; i++) mixed.add(`k${i}`);
    expect(mixed.index.probeLengthMax()).to.be.within(1, 16);
  });

  const hashings: Array<[string, (k: string) => number]> = [
    ["well-mixed hashes", (k) => hash32(k)],
    ["8 distinct hashes (long collision chains)", (k) => hash32(k) & 7],
    ["hashes sharing their low bits (as within one store shard)", (k) => (hash32(k) & ~31) >>> 0],
  ];
  for (const [name, hashOf] of hashings) {
    for (const seed of [1, 77]) {
      it(`matches a Map under 6000 random inserts, removes and lookups with ${name} (seed=${seed})`, () => {
        const random = seededRandom(seed);
        const h = harness(hashOf);
        const model = new Map<string, number>();
        for (let op = 0; op < 6000; op++) {
          const key = `key-${randomInt(random, 400)}`;
          const slot = model.get(key);
          if (slot === undefined) {
            if (random.next() < 0.7) model.set(key, h.add(key));
            else expect(h.find(key), `seed=${seed} op ${op}: absent ${key}`).to.equal(-1);
          } else if (random.next() < 0.45) {
            h.remove(slot);
            model.delete(key);
          } else {
            expect(h.find(key), `seed=${seed} op ${op}: ${key}`).to.equal(slot);
          }
          // The key just looked up, added or removed, looked up again (the remembered lookup).
          expect(h.find(key), `seed=${seed} op ${op}: again ${key}`).to.equal(model.get(key) ?? -1);
          expect(h.index.size).to.equal(model.size);
          if (op % 100 === 0) for (const [k, s] of model) expect(h.find(k), `seed=${seed} op ${op} full check ${k}`).to.equal(s);
        }
        for (const [k, s] of model) expect(h.find(k), k).to.equal(s);
      });
    }
  }
});
