// RecordBytes: the key and value bytes of a shard's records in pages outside the JS heap. Checked
// against a Map under a seeded mix of adds, value changes (shorter, longer, empty, large) and
// removals, so records move between pages and their own buffers and pages compact many times.
import { expect } from "chai";
import { RecordBytes } from "../../../src/store/record-bytes.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";

describe("store/record-bytes RecordBytes", () => {
  it("keeps every record's key and value through adds, changes and removals (seeded, checked against a Map)", () => {
    const random = seededRandom(11);
    const bytes = new RecordBytes(4);
    let slots = 4;
    const model = new Map<number, { key: string; value: string }>();
    for (let i = 0; i < 20_000; i++) {
      const slot = randomInt(random, 200);
      while (slot >= slots) bytes.resize((slots *= 2));
      // The content depends on the step: a value change that keeps the old bytes shows.
      const length = randomInt(random, 8) === 0 ? randomInt(random, 9000) : randomInt(random, 120);
      const value = length === 0 ? "" : `${i}:`.padEnd(length, "v");
      const held = model.get(slot);
      if (!held) {
        const key = randomInt(random, 10) === 0 ? `ключ-${i}-✓` : `key:${i}`;
        bytes.add(slot, key, value);
        model.set(slot, { key, value });
      } else if (randomInt(random, 4) === 0) {
        bytes.remove(slot);
        model.delete(slot);
      } else {
        bytes.setValue(slot, value);
        held.value = value;
      }
      if (i % 500 === 0 || i === 19_999) {
        for (const [s, r] of model) {
          expect(bytes.keyAt(s), `key of slot ${s} at step ${i}`).to.equal(r.key);
          expect(bytes.valueAt(s), `value of slot ${s} at step ${i}`).to.equal(r.value);
          expect(bytes.keyEquals(s, r.key)).to.equal(true);
          expect(bytes.keyEquals(s, `${r.key}x`)).to.equal(false);
        }
      }
    }
    const stats = bytes.stats();
    let live = 0;
    for (const r of model.values()) live += Buffer.byteLength(r.key) + r.value.length;
    expect(stats.liveBytes + stats.largeBytes, "live bytes").to.equal(live);
    expect(stats.largeRecords).to.be.greaterThan(0);
    expect(stats.garbageBytes * 4, "garbage is at most a quarter after the last compaction, plus a page").to.be.at.most(stats.liveBytes + stats.garbageBytes + 4 * 65_536);
    bytes.clear();
    expect(bytes.stats(), "clear() forgets every byte count").to.deep.include({ liveBytes: 0, garbageBytes: 0, largeRecords: 0, largeBytes: 0 });
  });

  it("compares keys by their UTF-8 bytes: equal length in UTF-16 units is not enough", () => {
    const bytes = new RecordBytes(2);
    bytes.add(0, "é", "x");
    bytes.add(1, "ab", "y");
    expect([bytes.keyEquals(0, "é"), bytes.keyEquals(0, "e"), bytes.keyEquals(1, "ab"), bytes.keyEquals(1, "é")]).to.deep.equal([true, false, true, false]);
  });

  it("holds values as bytes of a byte string (every char 0-255 comes back)", () => {
    const bytes = new RecordBytes(1);
    const value = Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)).join("");
    bytes.add(0, "k", value);
    expect(bytes.valueAt(0)).to.equal(value);
    expect(bytes.valueLength(0)).to.equal(256);
  });

  it("compacts in place: under steady churn the pages allocated stay near the pages in use (the soak's write mix, seeded)", () => {
    // Counted at the allocator: compacting into fresh pages allocated a full set every time and
    // left the old ones to the garbage collector (thousands here; tens of MB per node in the soak).
    const allocate = Buffer.allocUnsafeSlow;
    let allocated = 0;
    Buffer.allocUnsafeSlow = (size: number) => {
      if (size === 65_536) allocated++;
      return allocate(size);
    };
    try {
      const random = seededRandom(7);
      const slots = 3000;
      const bytes = new RecordBytes(slots);
      const model = new Map<number, string>();
      const value = (i: number) => `${i}:`.padEnd(64 + randomInt(random, 960), "v");
      let mostPages = 0;
      for (let i = 0; i < 200_000; i++) {
        const slot = randomInt(random, slots);
        const roll = randomInt(random, 100);
        if (!model.has(slot)) {
          const v = value(i);
          bytes.add(slot, `k${slot}`, v);
          model.set(slot, v);
        } else if (roll < 5) {
          bytes.remove(slot);
          model.delete(slot);
        } else {
          const v = value(i);
          bytes.setValue(slot, v);
          model.set(slot, v);
        }
        mostPages = Math.max(mostPages, bytes.stats().pages);
      }
      for (const [slot, v] of model) expect(bytes.valueAt(slot)).to.equal(v);
      expect(allocated, `${allocated} pages allocated, at most ${mostPages} in use at once`).to.be.at.most(mostPages + Math.ceil(mostPages / 3) + 2);
      expect(bytes.stats().pagesAllocated).to.equal(allocated);
    } finally {
      Buffer.allocUnsafeSlow = allocate;
    }
  });

  it("keeps at most a third of the pages in use as spares after a compaction", () => {
    const bytes = new RecordBytes(4000);
    for (let slot = 0; slot < 4000; slot++) bytes.add(slot, `k${slot}`, "v".repeat(1000));
    const full = bytes.stats().pages;
    for (let slot = 0; slot < 3600; slot++) bytes.remove(slot);
    bytes.add(0, "k0", "v".repeat(1000)); // the next page boundary compacts
    for (let slot = 1; slot < 100; slot++) bytes.add(slot, `k${slot}`, "v".repeat(1000));
    const after = bytes.stats();
    expect(after.pages).to.be.below(full / 4);
    expect(after.sparePages).to.be.at.most(Math.ceil(after.pages / 3) + 1);
    for (let slot = 3600; slot < 4000; slot++) expect(bytes.valueAt(slot)).to.equal("v".repeat(1000));
  });
});
