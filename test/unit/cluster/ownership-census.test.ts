// The ownership census on a ManualClock: each live record counted once by this node's role for its
// key in the ring (primary, replica or none), with key and value bytes; tombstones and expired
// values not counted; the last complete count kept.
import { expect } from "chai";
import { OwnershipCensus } from "../../../src/cluster/ownership-census.js";
import { Metrics } from "../../../src/observability/index.js";
import { HashRing } from "../../../src/ring/hash-ring.js";
import { ShardedStore } from "../../../src/store/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { TEST_HASH_SEED } from "../../helpers/hash-seed.js";

describe("cluster/ownership-census", () => {
  it("counts every live record once by this node's role for its key, with key and value bytes; tombstones and expired values are not counted", async () => {
    const clock = new ManualClock();
    const store = new ShardedStore({ shards: 4, capacity: 10_000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 26, hashSeed: TEST_HASH_SEED, clock, metrics: new Metrics() });
    const ring = HashRing.build(["me", "a", "b", "c"], 2);
    const version = clock.nowMs() * 1000;
    const want = { primary: { items: 0, bytes: 0 }, replica: { items: 0, bytes: 0 }, none: { items: 0, bytes: 0 } };
    for (let i = 0; i < 600; i++) {
      const key = `key-${i}`;
      const value = "v".repeat(i % 50);
      const kind = i % 10;
      if (kind === 0) {
        store.apply({ key, value: "", version: version + i, origin: "me", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: true });
        continue;
      }
      store.apply({ key, value, version: version + i, origin: "me", lastUpdatedMs: 0, expiresAtMs: kind === 1 ? clock.nowMs() + 1_000 : 0, tombstone: false });
      if (kind === 1) continue; // expires before the count
      const ids = ring.ownersOf(key).ids;
      const role = ids[0] === "me" ? want.primary : ids.includes("me") ? want.replica : want.none;
      role.items++;
      role.bytes += key.length + value.length;
    }
    clock.advance(2_000);
    const census = new OwnershipCensus({ selfId: "me", store, view: { ring: () => ring }, clock, timers: clock, yieldToLoop: () => Promise.resolve() });
    expect(census.last).to.equal(undefined);
    await census.runCensusTick();
    expect(census.last).to.deep.equal(want);
    for (const role of [want.primary, want.replica, want.none]) expect(role.items, "every role occurs").to.be.greaterThan(0);
  });

  it("yields every sliceRecords records across shard boundaries, not only inside a shard larger than a slice", async () => {
    const clock = new ManualClock();
    const store = new ShardedStore({ shards: 16, capacity: 10_000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 26, hashSeed: TEST_HASH_SEED, clock, metrics: new Metrics() });
    const version = clock.nowMs() * 1000;
    for (let i = 0; i < 1000; i++) store.apply({ key: `key-${i}`, value: "v", version: version + i, origin: "me", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false });
    // Every shard holds fewer records than a slice (about 62 against 100).
    const ring = HashRing.build(["me"], 1);
    let yields = 0;
    const census = new OwnershipCensus({ selfId: "me", store, view: { ring: () => ring }, clock, timers: clock, yieldToLoop: () => (yields++, Promise.resolve()), sliceRecords: 100 });
    await census.runCensusTick();
    expect(census.last?.primary.items).to.equal(1000);
    expect(yields).to.be.within(9, 10);
  });
});
