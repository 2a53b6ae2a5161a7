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
});
