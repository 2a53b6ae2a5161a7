// Hash flooding: keys a client built to collide under hash32 must not pile up in one shard and
// one probing chain of the store's key index, where every insert, lookup and delete of them would
// walk the whole chain (a review held a node's event loop 290-315 ms with one batch of 1,000 such
// keys). The store places keys by a hash keyed per store (src/core/keyed-hash.ts). Deterministic:
// a fixed test key, and the index's longest probe instead of a time.
import { expect } from "chai";
import { hash32 } from "../../../src/core/hash.js";
import type { HashSeed } from "../../../src/core/keyed-hash.js";
import { Metrics } from "../../../src/observability/index.js";
import { ShardedStore, type VersionedRecord } from "../../../src/store/index.js";
import { hash32Multicollision } from "../../helpers/hash32-collisions.js";
import { OTHER_HASH_SEED, TEST_HASH_SEED } from "../../helpers/hash-seed.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const SHARDS = 8;
/** 2^10 keys of one hash32 (built in about 0.1 s). */
const KEYS = hash32Multicollision(10, "u:");

function storeWith(hashSeed: HashSeed): { store: ShardedStore; clock: ManualClock } {
  const clock = new ManualClock();
  const store = new ShardedStore({ shards: SHARDS, capacity: 100_000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 26, hashSeed, clock, metrics: new Metrics() });
  return { store, clock };
}

function rec(key: string, version: number): VersionedRecord {
  return { key, value: "v", version, origin: "n1", lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: false };
}

describe("store: keys built to collide under hash32 (hash flooding)", () => {
  it("the keys are distinct and share one hash32: what the attack gives a client", () => {
    expect(new Set(KEYS).size).to.equal(1024);
    expect(new Set(KEYS.map((k) => hash32(k))).size).to.equal(1);
  });

  it("spread over every shard, and a lookup of any of them looks at a few buckets of its shard's index, not the whole chain", () => {
    const { store, clock } = storeWith(TEST_HASH_SEED);
    const version = clock.nowMs() * 1000;
    KEYS.forEach((k, i) => store.apply(rec(k, version + i)));
    // Hashed by hash32 it was 1024, every key of the chain; placed at random at this load (about
    // 128 keys in 256 buckets a shard), 10 to 20.
    expect(store.probeLengthMax(), "buckets a lookup looks at, at most").to.be.at.most(32);
    const perShard = Array.from({ length: SHARDS }, (_, s) => KEYS.filter((k) => store.shardOf(k) === s).length);
    // About 128 each; hashed by hash32 they were all in one shard.
    expect(Math.min(...perShard), `keys per shard: ${perShard}`).to.be.above(64);
    expect(KEYS.filter((k) => store.get(k)?.value !== "v")).to.deep.equal([]);
  });

  it("a store with another key places the same keys differently: what an attacker learns of one node's placement holds for no other", () => {
    const a = storeWith(TEST_HASH_SEED).store;
    const b = storeWith(OTHER_HASH_SEED).store;
    const elsewhere = KEYS.filter((k) => a.shardOf(k) !== b.shardOf(k)).length;
    // 7/8 of them by chance.
    expect(elsewhere).to.be.above(KEYS.length / 2);
  });
});
