// ShardedStore: the node's store as the rest of the node sees it: version-gated apply,
// tombstones, TTL, capacity-driven eviction, counters, byte accounting and key paging.
import { expect } from "chai";
import { Applied, headerOf, ShardedStore, type VersionedRecord } from "../../../src/store/index.js";
import { tombstoneCost } from "../../../src/store/record.js";
import type { EvictionAlgorithm } from "../../../src/config/index.js";
import { CacheError } from "../../../src/core/errors.js";
import { compileKeyFilter } from "../../../src/core/key-filter.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { collectKeys, forEachRecord } from "../../helpers/store-contents.js";
import { TEST_HASH_SEED } from "../../helpers/hash-seed.js";

const ALGORITHMS: readonly EvictionAlgorithm[] = ["lru", "lfu", "cawolfu"];
const TOMBSTONE_TTL_MS = 10 * 60_000;

interface Fixture {
  store: ShardedStore;
  clock: ManualClock;
  metrics: Metrics;
  /** A version stamped now by the hybrid clock (wall ms x 1000 + counter). */
  now(counter?: number): number;
}

function fixture(over: { shards?: number; capacity?: number; algorithm?: EvictionAlgorithm; tombstoneTtlMs?: number; tombstoneBytesMax?: number } = {}): Fixture {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const store = new ShardedStore({
    shards: over.shards ?? 1,
    capacity: over.capacity ?? 1000,
    algorithm: over.algorithm ?? "lru",
    tombstoneTtlMs: over.tombstoneTtlMs ?? TOMBSTONE_TTL_MS,
    tombstoneBytesMax: over.tombstoneBytesMax ?? 64 * 1024 * 1024,
    hashSeed: TEST_HASH_SEED,
    clock,
    metrics,
  });
  return { store, clock, metrics, now: (counter = 0) => clock.nowMs() * 1000 + counter };
}

/** A live record; lastUpdatedMs is the wall-clock part of the version, as the node stamps it. */
function rec(key: string, version: number, over: Partial<Omit<VersionedRecord, "key" | "version">> = {}): VersionedRecord {
  return { key, value: `value-${key}`, version, origin: "n1", lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: false, ...over };
}

function tomb(key: string, version: number, origin = "n1"): VersionedRecord {
  return rec(key, version, { value: "", origin, tombstone: true });
}

/** Keys of the form `${prefix}${i}` that land in shard `shard`. */
function keysInShard(store: ShardedStore, shard: number, count: number, prefix = "k"): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) if (store.shardOf(`${prefix}${i}`) === shard) out.push(`${prefix}${i}`);
  return out;
}

/** Live items of each shard, from the shard's own unlimited listing. */
function liveByShard(store: ShardedStore): number[] {
  return Array.from({ length: store.shardCount }, (_, shard) => store.keysPage(shard, 0, 0, () => true).keys.length);
}

/** Every page of a full listing, following `next`. */
function allPages(store: ShardedStore, limit: number, matches: (key: string) => boolean = () => true) {
  const pages: Array<{ at: { shard: number; slot: number }; keys: string[]; truncated: boolean; next: { shard: number; slot: number } | undefined }> = [];
  let at: { shard: number; slot: number } | undefined = { shard: 0, slot: 0 };
  while (at) {
    const page = store.keysPage(at.shard, at.slot, limit, matches);
    pages.push({ at, ...page });
    at = page.next;
    if (pages.length > 100_000) throw new Error("paging never ends");
  }
  return pages;
}

/** Totals recomputed from the records themselves. */
function recount(store: ShardedStore) {
  let live = 0;
  let tombstones = 0;
  let bytes = 0;
  forEachRecord(store, (r) => {
    if (r.tombstone) tombstones++;
    else {
      live++;
      bytes += r.value.length;
    }
  });
  return { live, tombstones, bytes };
}

describe("store/sharded-store ShardedStore", () => {
  describe("version-gated apply", () => {
    it("stores a new key and get() returns every field of the live item", () => {
      const { store, now } = fixture();
      const v = now(3);
      const r = rec("user:1", v, { value: "hello", origin: "node-a", expiresAtMs: Date.UTC(2026, 0, 2) });
      expect(store.apply(r)).to.deep.equal({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });
      expect(store.get("user:1")).to.deep.equal({
        key: "user:1",
        value: "hello",
        version: v,
        origin: "node-a",
        lastUpdatedMs: Math.floor(v / 1000),
        expiresAtMs: Date.UTC(2026, 0, 2),
      });
      expect(store.versionOf("user:1")).to.equal(v);
    });

    it("peekHeader describes a value or a tombstone as peek does, its value's size in place of the value", () => {
      const { store, now } = fixture();
      store.apply(rec("big", now(1), { value: "x".repeat(5000), expiresAtMs: Date.UTC(2026, 0, 2) }));
      store.apply(tomb("gone", now(2)));
      for (const key of ["big", "gone"]) expect(store.peekHeader(key), key).to.deep.equal(headerOf(store.peek(key) as VersionedRecord));
      expect(store.peekHeader("big")?.valueBytes).to.equal(5000);
      expect(store.peekHeader("none")).to.equal(undefined);
    });

    it("memory() says where record bytes sit: live in pages, garbage after a replace, page space free, large records apart", () => {
      const { store, now } = fixture({ shards: 1 });
      expect(store.memory()).to.deep.equal({ records: 0, garbage: 0, free: 0, large: 0 });
      store.apply(rec("a", now(1), { value: "x".repeat(100) }));
      expect(store.memory()).to.deep.equal({ records: 101, garbage: 0, free: 65_536 - 101, large: 0 });
      store.apply(rec("a", now(2), { value: "y".repeat(200) }));
      expect(store.memory()).to.deep.equal({ records: 201, garbage: 101, free: 65_536 - 302, large: 0 });
      store.apply(rec("big", now(3), { value: "z".repeat(5000) }));
      expect(store.memory().large).to.equal(5003);
    });

    it("a newer version replaces the value and reports the replaced value's size", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(1), { value: "abc" }));
      expect(store.apply(rec("k", now(2), { value: "abcdef" }))).to.deep.equal({ applied: Applied.Stored, previousLive: true, previousBytes: 3 });
      expect(store.get("k")?.value).to.equal("abcdef");
      expect(store.versionOf("k")).to.equal(now(2));
    });

    it("an older version is ignored with Applied.Older and leaves the stored record as it was", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(5), { value: "new" }));
      expect(store.apply(rec("k", now(4), { value: "old" })).applied).to.equal(Applied.Older);
      expect(store.get("k")).to.include({ value: "new", version: now(5) });
    });

    it("the same version and origin again is ignored with Applied.Duplicate", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(5), { value: "first" }));
      expect(store.apply(rec("k", now(5), { value: "second" })).applied).to.equal(Applied.Duplicate);
      expect(store.get("k")?.value).to.equal("first");
    });

    it("on a version tie the lexicographically smaller origin wins, whichever arrives first", () => {
      const a = fixture();
      const v = a.now(9);
      a.store.apply(rec("k", v, { origin: "n2", value: "from-n2" }));
      expect(a.store.apply(rec("k", v, { origin: "n1", value: "from-n1" })).applied).to.equal(Applied.Stored);
      const b = fixture();
      b.store.apply(rec("k", v, { origin: "n1", value: "from-n1" }));
      expect(b.store.apply(rec("k", v, { origin: "n2", value: "from-n2" })).applied).to.equal(Applied.Older);
      expect(a.store.get("k")).to.include({ origin: "n1", value: "from-n1" });
      expect(b.store.get("k")).to.include({ origin: "n1", value: "from-n1" });
    });

    it("keeps values as byte strings, including NUL and high bytes", () => {
      const { store, now } = fixture();
      const bytes = "\u0000\u00ff\u0080abc\u0001";
      store.apply(rec("bin", now(), { value: bytes }));
      expect(store.get("bin")?.value).to.equal(bytes);
      expect(store.bytes).to.equal(7);
    });

    it("valueHead: the first bytes of a value without the rest, the whole of a short one, \"\" for a tombstone, undefined for no record", () => {
      const { store, now } = fixture();
      store.apply(rec("big", now(), { value: "\u0000hc" + "x".repeat(100_000) }));
      store.apply(rec("short", now(), { value: "ab" }));
      store.apply(tomb("gone", now()));
      expect(store.valueHead("big", 3)).to.equal("\u0000hc");
      expect(store.valueHead("short", 14)).to.equal("ab");
      expect(store.valueHead("gone", 14)).to.equal("");
      expect(store.valueHead("none", 14)).to.equal(undefined);
    });

    it("converges to the same record whatever order the versions arrive in", () => {
      const { now } = fixture();
      const versions = [rec("k", now(1), { origin: "b" }), rec("k", now(3), { origin: "c" }), rec("k", now(3), { origin: "a" }), rec("k", now(2), { origin: "a" })];
      const orders = [
        [0, 1, 2, 3],
        [3, 2, 1, 0],
        [2, 0, 3, 1],
        [1, 3, 0, 2],
      ];
      for (const order of orders) {
        const { store } = fixture();
        for (const i of order) store.apply(versions[i] as VersionedRecord);
        expect(store.peek("k"), `order ${order.join(",")}`).to.include({ version: now(3), origin: "a" });
      }
    });
  });

  describe("tombstones", () => {
    it("a delete leaves a tombstone: get misses, peek shows it with no value and no expiry", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(1), { value: "abcd", expiresAtMs: Date.UTC(2027, 0, 1) }));
      expect(store.apply(tomb("k", now(2)))).to.deep.equal({ applied: Applied.Stored, previousLive: true, previousBytes: 4 });
      expect(store.get("k")).to.equal(undefined);
      expect(store.peek("k")).to.include({ key: "k", tombstone: true, value: "", expiresAtMs: 0, version: now(2) });
      expect([store.items, store.tombstones, store.bytes]).to.deep.equal([0, 1, 0]);
    });

    it("a tombstone beats an older set (Applied.Older), so the deleted key does not come back", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(1)));
      store.apply(tomb("k", now(3)));
      expect(store.apply(rec("k", now(2), { value: "late" })).applied).to.equal(Applied.Older);
      expect(store.get("k")).to.equal(undefined);
      expect(store.peek("k")?.tombstone).to.equal(true);
    });

    it("a tombstone for a key never seen is kept, so a delayed older set is still refused", () => {
      const { store, now } = fixture();
      expect(store.apply(tomb("k", now(5))).applied).to.equal(Applied.Stored);
      expect(store.tombstones).to.equal(1);
      expect(store.apply(rec("k", now(4))).applied).to.equal(Applied.Older);
      expect(store.get("k")).to.equal(undefined);
    });

    it("an older delete does not remove a newer value", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(5)));
      expect(store.apply(tomb("k", now(4))).applied).to.equal(Applied.Older);
      expect(store.get("k")?.version).to.equal(now(5));
    });

    it("a newer set over a tombstone revives the key", () => {
      const { store, now } = fixture();
      store.apply(rec("k", now(1)));
      store.apply(tomb("k", now(2)));
      expect(store.apply(rec("k", now(3), { value: "again" }))).to.deep.equal({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });
      expect(store.get("k")).to.include({ value: "again", version: now(3) });
      expect([store.items, store.tombstones, store.bytes]).to.deep.equal([1, 0, 5]);
    });

    it("tombstones are not listed by keysPage or collectKeys", () => {
      const { store, now } = fixture({ shards: 4 });
      for (const k of ["a", "b", "c", "d"]) store.apply(rec(k, now(1)));
      store.apply(tomb("b", now(2)));
      store.apply(tomb("never-set", now(2)));
      expect(collectKeys(store, () => true).sort()).to.deep.equal(["a", "c", "d"]);
      const listed = allPages(store, 0).flatMap((p) => p.keys);
      expect(listed.sort()).to.deep.equal(["a", "c", "d"]);
    });

    it("expirePass compacts a tombstone once tombstoneTtlMs has passed since its version, not before", () => {
      const { store, clock, now } = fixture({ tombstoneTtlMs: 60_000 });
      store.apply(rec("k", now(1)));
      store.apply(tomb("k", now(2)));
      clock.advance(59_999);
      expect(store.expirePass()).to.deep.equal({ expired: 0, compacted: 0 });
      expect(store.peek("k")?.tombstone).to.equal(true);
      clock.advance(1);
      expect(store.expirePass()).to.deep.equal({ expired: 0, compacted: 1 });
      expect(store.peek("k")).to.equal(undefined);
      expect(store.tombstones).to.equal(0);
    });

    it("compaction takes only the tombstones that are old enough", () => {
      const { store, clock, now } = fixture({ shards: 4, tombstoneTtlMs: 1000 });
      for (const k of ["a", "b", "c"]) store.apply(tomb(k, now()));
      clock.advance(500);
      for (const k of ["d", "e"]) store.apply(tomb(k, now()));
      clock.advance(500);
      expect(store.expirePass()).to.deep.equal({ expired: 0, compacted: 3 });
      expect(["a", "b", "c", "d", "e"].map((k) => store.peek(k)?.tombstone ?? false)).to.deep.equal([false, false, false, true, true]);
      clock.advance(500);
      expect(store.expirePass().compacted).to.equal(2);
    });

    it("a newer delete over an old tombstone restarts its age", () => {
      const { store, clock, now } = fixture({ tombstoneTtlMs: 1000 });
      store.apply(tomb("k", now(1)));
      clock.advance(800);
      store.apply(tomb("k", now(1)));
      clock.advance(800); // 1600 after the first delete, 800 after the second
      expect(store.expirePass().compacted).to.equal(0);
      expect(store.peek("k")?.version).to.equal(now(1) - 800 * 1000);
      clock.advance(200);
      expect(store.expirePass().compacted).to.equal(1);
    });

    it("the tombstone byte budget drops the oldest tombstones first, counted in dist.tombstones.dropped", () => {
      const { store, clock, now, metrics } = fixture({ shards: 1, capacity: 1000, tombstoneBytesMax: 3 * tombstoneCost("t1") });
      for (const k of ["t1", "t2", "t3", "t4"]) {
        store.apply(tomb(k, now()));
        clock.advance(1);
      }
      expect(store.tombstones).to.equal(3);
      expect(store.tombstoneBytes).to.equal(3 * tombstoneCost("t1"));
      expect(store.peek("t1")).to.equal(undefined);
      for (const k of ["t2", "t3", "t4"]) expect(store.peek(k)?.tombstone, k).to.equal(true);
      expect(metrics.get("dist.tombstones.dropped")).to.equal(1);
    });

    it("tombstones are not limited by the item capacity: 2,000 deletes on a store of capacity 10 keep every tombstone", () => {
      const { store, now, metrics } = fixture({ shards: 2, capacity: 10 });
      for (let i = 0; i < 2000; i++) store.apply(tomb(`gone-${i}`, now(i)));
      expect(store.tombstones).to.equal(2000);
      expect(metrics.get("dist.tombstones.dropped")).to.equal(0);
    });

    it("the budget applies per shard (its share): one shard's deletes do not push out another's tombstones", () => {
      const probe = fixture({ shards: 2 }).store;
      const [a0, a1, a2] = keysInShard(probe, 0, 3, "a") as [string, string, string];
      const [b0] = keysInShard(probe, 1, 1, "b") as [string];
      const share = Math.max(tombstoneCost(a1) + tombstoneCost(a2), tombstoneCost(b0));
      const { store, now } = fixture({ shards: 2, tombstoneBytesMax: 2 * share });
      store.apply(tomb(b0, now(1)));
      for (const k of [a0, a1, a2]) store.apply(tomb(k, now(2)));
      expect(store.tombstones).to.equal(3);
      expect(store.peek(b0)?.tombstone).to.equal(true);
      expect(store.peek(a0)).to.equal(undefined);
    });

    it("a delete of a live key counts one delete; a delete of an absent, expired or deleted key counts none", () => {
      const { store, clock, now } = fixture();
      store.apply(rec("live", now(1)));
      store.apply(rec("short", now(1), { expiresAtMs: clock.nowMs() + 10 }));
      store.apply(tomb("live", now(2)));
      expect(store.counters.deletes).to.equal(1);
      store.apply(tomb("absent", now(2)));
      store.apply(tomb("live", now(3)));
      clock.advance(10);
      store.apply(tomb("short", now(4)));
      expect(store.counters.deletes).to.equal(1);
    });
  });

  describe("expiry", () => {
    it("get() treats an expired item as a miss and leaves a tombstone of its version", () => {
      const { store, clock, now } = fixture();
      const version = now();
      store.apply(rec("k", version, { value: "abc", expiresAtMs: clock.nowMs() + 1000 }));
      clock.advance(999);
      expect(store.get("k")?.value).to.equal("abc");
      clock.advance(1);
      expect(store.get("k")).to.equal(undefined);
      expect(store.peek("k")).to.include({ tombstone: true, version, value: "", expiresAtMs: 0 });
      expect([store.items, store.bytes]).to.deep.equal([0, 0]);
      expect(store.counters).to.include({ hits: 1, misses: 1, expirations: 1 });
    });

    it("a read never extends the expiry", () => {
      const { store, clock, now } = fixture();
      const expiresAtMs = clock.nowMs() + 5000;
      store.apply(rec("k", now(), { expiresAtMs }));
      clock.advance(4000);
      expect(store.get("k")?.expiresAtMs).to.equal(expiresAtMs);
      expect(store.peek("k")?.expiresAtMs).to.equal(expiresAtMs);
      clock.advance(1000);
      expect(store.get("k")).to.equal(undefined);
    });

    it("an item stored with an expiry already in the past is never returned", () => {
      const { store, clock, now } = fixture();
      store.apply(rec("k", now(), { expiresAtMs: clock.nowMs() - 1 }));
      expect(store.get("k")).to.equal(undefined);
    });

    it("expired items are not listed by keysPage or collectKeys, even before a sweep", () => {
      const { store, clock, now } = fixture({ shards: 2 });
      store.apply(rec("stay", now()));
      store.apply(rec("go", now(), { expiresAtMs: clock.nowMs() + 100 }));
      expect(collectKeys(store, () => true).sort()).to.deep.equal(["go", "stay"]);
      clock.advance(100);
      expect(collectKeys(store, () => true)).to.deep.equal(["stay"]);
      expect(allPages(store, 0).flatMap((p) => p.keys)).to.deep.equal(["stay"]);
      expect(store.items).to.equal(2); // listed as gone, physically still there until swept
    });

    it("expirePass removes exactly the expired items, counts them and frees their bytes", () => {
      const { store, clock, now } = fixture({ shards: 4 });
      for (let i = 0; i < 10; i++) store.apply(rec(`e${i}`, now(), { value: "xx", expiresAtMs: clock.nowMs() + 100 }));
      for (let i = 0; i < 5; i++) store.apply(rec(`l${i}`, now(), { value: "yyy", expiresAtMs: clock.nowMs() + 200 }));
      store.apply(rec("forever", now(), { value: "z" }));
      expect(store.expirePass()).to.deep.equal({ expired: 0, compacted: 0 });
      clock.advance(100);
      expect(store.expirePass()).to.deep.equal({ expired: 10, compacted: 0 });
      expect([store.items, store.bytes, store.counters.expirations]).to.deep.equal([6, 16, 10]);
      clock.advance(100);
      expect(store.expirePass()).to.deep.equal({ expired: 5, compacted: 0 });
      expect([store.items, store.bytes, store.counters.expirations]).to.deep.equal([1, 1, 15]);
      expect(store.get("forever")?.value).to.equal("z");
    });

    it("expirePass reports expired items and compacted tombstones together", () => {
      const { store, clock, now } = fixture({ tombstoneTtlMs: 100 });
      store.apply(tomb("t", now()));
      store.apply(rec("e", now(), { expiresAtMs: clock.nowMs() + 100 }));
      clock.advance(100);
      expect(store.expirePass()).to.deep.equal({ expired: 1, compacted: 1 });
      expect(store.counters.expirations).to.equal(1);
    });

    it("expireSlice does at most `maxWork` expirations and compactions, and the next slices go on where it stopped until the pass is done", () => {
      const { store, clock, now } = fixture({ shards: 4, tombstoneTtlMs: 50 });
      for (let i = 0; i < 30; i++) store.apply(rec(`e${i}`, now(), { expiresAtMs: clock.nowMs() + 100 }));
      for (let i = 0; i < 7; i++) store.apply(tomb(`t${i}`, now()));
      store.apply(rec("forever", now()));
      clock.advance(100);
      const slices: Array<{ expired: number; compacted: number; done: boolean }> = [];
      for (let i = 0; i < 20 && !slices.at(-1)?.done; i++) slices.push(store.expireSlice(8));
      for (const s of slices) expect(s.expired + s.compacted, JSON.stringify(s)).to.be.at.most(8);
      expect(slices.reduce((n, s) => n + s.expired, 0)).to.equal(30);
      expect(slices.reduce((n, s) => n + s.compacted, 0)).to.equal(7);
      expect(slices.slice(0, -1).every((s) => !s.done)).to.equal(true);
      expect([store.items, store.tombstones, store.counters.expirations]).to.deep.equal([1, 30, 30]);
      // A new pass starts from the beginning.
      expect(store.expireSlice(8)).to.deep.equal({ expired: 0, compacted: 0, done: true });
    });

    it("a newer set over an expired (unswept) item stores it as a fresh value", () => {
      const { store, clock, now } = fixture();
      store.apply(rec("k", now(1), { value: "old", expiresAtMs: clock.nowMs() + 10 }));
      clock.advance(10);
      expect(store.apply(rec("k", now(2), { value: "new!" }))).to.deep.equal({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });
      expect(store.get("k")?.value).to.equal("new!");
      expect([store.items, store.bytes]).to.deep.equal([1, 4]);
    });
  });

  describe("capacity and eviction", () => {
    it("the hard limit is the capacity plus the shard count", () => {
      expect(fixture({ shards: 32, capacity: 100_000 }).store.hardLimit).to.equal(100_032);
      expect(fixture({ shards: 10, capacity: 1000 }).store.hardLimit).to.equal(1010);
      expect(fixture({ shards: 8, capacity: 5 }).store.hardLimit).to.equal(13);
      expect(fixture({ shards: 1, capacity: 3 }).store.hardLimit).to.equal(4);
    });

    for (const algorithm of ALGORITHMS) {
      it(`${algorithm}: honours the capacity within plus or minus the shard count over 20000 inserts`, () => {
        const { store, metrics, now } = fixture({ shards: 32, capacity: 1000, algorithm });
        const random = seededRandom(99);
        let stored = 0;
        for (let i = 0; i < 20_000; i++) {
          if (store.apply(rec(`key-${i}`, now(i))).applied === Applied.Stored) stored++;
          if (i % 3 === 0) store.get(`key-${randomInt(random, i + 1)}`);
          // Nothing is evicted below the hard limit; past it every insert evicts exactly one.
          expect(store.items, `after insert ${i}`).to.equal(Math.min(i + 1, 1000 + 32));
          expect(store.counters.evictions, `after insert ${i}`).to.equal(Math.max(0, i + 1 - (1000 + 32)));
        }
        expect(stored).to.equal(20_000);
        expect(store.counters.evictions).to.equal(20_000 - store.items);
        expect(metrics.get("item_evicted_count")).to.equal(store.counters.evictions);
        expect(metrics.get("evicted_item_count")).to.equal(store.counters.evictions);
        expect(collectKeys(store, () => true)).to.have.length(store.items);
        expect(store.evictPass()).to.equal(32);
        expect(store.items).to.equal(1000);
      });

      it(`${algorithm}: a shard count that is not a power of two also honours the capacity`, () => {
        const { store, now } = fixture({ shards: 10, capacity: 1000, algorithm });
        for (let i = 0; i < 5000; i++) store.apply(rec(`key-${i}`, now(i)));
        expect(store.items).to.equal(1000 + 10);
        expect(liveByShard(store).reduce((x, y) => x + y, 0)).to.equal(1010);
        expect(store.evictPass()).to.equal(10);
        expect(store.items).to.equal(1000);
        expect(liveByShard(store).reduce((x, y) => x + y, 0)).to.equal(1000);
      });

      it(`${algorithm}: inline eviction never evicts the record being inserted`, () => {
        // Capacity 3, one shard: hard limit 4, so four hot keys fill the store to it.
        const { store, now } = fixture({ shards: 1, capacity: 3, algorithm });
        for (const k of ["h1", "h2", "h3", "h4"]) store.apply(rec(k, now()));
        for (let i = 0; i < 10; i++) for (const k of ["h1", "h2", "h3", "h4"]) store.get(k);
        for (let i = 0; i < 20; i++) {
          const key = `new-${i}`;
          expect(store.apply(rec(key, now(i + 1))).applied).to.equal(Applied.Stored);
          expect(store.peek(key), `${key} must survive its own insert`).to.not.equal(undefined);
          expect(store.items).to.equal(4);
        }
        expect(store.counters.evictions).to.equal(20);
      });

      it(`${algorithm}: evictPass evicts exactly what is above the capacity, once, and counts it`, () => {
        const { store, metrics, now } = fixture({ shards: 4, capacity: 40, algorithm });
        for (let i = 0; i < 500; i++) store.apply(rec(`key-${i}`, now(i)));
        // Inline eviction holds the store at its hard limit (capacity + shards), not at its capacity.
        expect(store.items).to.equal(44);
        const before = store.counters.evictions;
        expect(before).to.equal(500 - 44);
        expect(store.evictPass()).to.equal(4);
        expect(store.items).to.equal(40);
        expect(recount(store).live).to.equal(40);
        expect(store.counters.evictions).to.equal(before + 4);
        expect(metrics.get("item_evicted_count")).to.equal(before + 4);
        expect(metrics.get("evicted_item_count")).to.equal(before + 4);
        expect(store.evictPass(), "a second pass finds nothing").to.equal(0);
        expect(store.counters.evictions).to.equal(before + 4);
      });

      it(`${algorithm}: evictPass takes its victims from the shards furthest above their share`, () => {
        // Capacity 10 over 4 shards: shares 3, 3, 2, 2, hard limit 14. 13 items: nothing inline.
        const { store, now } = fixture({ shards: 4, capacity: 10, algorithm });
        const fill = [4, 3, 4, 2]; // above their shares by 1, 0, 2, 0
        for (const [shard, n] of fill.entries()) for (const k of keysInShard(store, shard, n, `s${shard}-`)) store.apply(rec(k, now()));
        expect(liveByShard(store)).to.deep.equal(fill);
        expect(store.counters.evictions).to.equal(0);
        // Shard 2 (2 over) first, then shards 0 and 2 (1 over each). Shards 1 and 3, at their
        // share, keep everything; by count alone shard 0 would have lost as much as shard 2.
        expect(store.evictPass()).to.equal(3);
        expect(liveByShard(store)).to.deep.equal([3, 3, 2, 2]);
        expect(store.counters.evictions).to.equal(3);
      });

      it(`${algorithm}: a write evicts inline only once the store holds its hard limit, and from the written shard`, () => {
        const { store, now } = fixture({ shards: 2, capacity: 6, algorithm }); // shares 3, hard limit 8
        const keys = keysInShard(store, 0, 8);
        const [other, other2] = keysInShard(store, 1, 2, "o");
        store.apply(rec(other as string, now()));
        for (const [i, k] of keys.slice(0, 7).entries()) {
          store.apply(rec(k, now()));
          expect(store.counters.evictions, `insert ${i + 1} of shard 0`).to.equal(0);
        }
        // Shard 0 holds 7, far above its share of 3: the store is what counts.
        expect(liveByShard(store)).to.deep.equal([7, 1]);
        store.apply(rec(keys[7] as string, now(1)));
        expect(store.counters.evictions).to.equal(1);
        expect(store.peek(keys[7] as string)).to.not.equal(undefined);
        expect(liveByShard(store)).to.deep.equal([7, 1]);
        expect(store.peek(other as string), "the write into shard 0 took its victim from shard 0").to.not.equal(undefined);
        // A write into shard 1 takes shard 1's own item, although shard 0 is the fuller one.
        store.apply(rec(other2 as string, now(2)));
        expect(store.counters.evictions).to.equal(2);
        expect(liveByShard(store)).to.deep.equal([7, 1]);
        expect(store.peek(other as string)).to.equal(undefined);
        expect(store.peek(other2 as string)).to.not.equal(undefined);
      });

      it(`${algorithm}: reviving a tombstone in a full store evicts another key, never the revived one`, () => {
        const { store, now } = fixture({ shards: 1, capacity: 2, algorithm });
        store.apply(rec("k", now(1)));
        store.apply(tomb("k", now(2)));
        store.apply(rec("a", now(3)));
        store.apply(rec("b", now(4)));
        store.apply(rec("c", now(4))); // the store is at its hard limit (capacity + shards)
        expect(store.counters.evictions).to.equal(0);
        store.apply(rec("k", now(5), { value: "revived" }));
        expect(store.get("k")?.value).to.equal("revived");
        expect(store.items).to.equal(3);
        expect(store.counters.evictions).to.equal(1);
      });
    }

    it("keeps every distinct key up to the capacity however unevenly they fall over the shards", () => {
      const { store, now } = fixture({ shards: 4, capacity: 1000 }); // shares 250, hard limit 1004
      const keys = [...keysInShard(store, 0, 700, "a"), ...keysInShard(store, 1, 300, "b")];
      for (const k of keys) store.apply(rec(k, now()));
      expect(liveByShard(store)).to.deep.equal([700, 300, 0, 0]);
      expect(store.counters.evictions).to.equal(0);
      expect(keys.filter((k) => store.get(k) === undefined)).to.deep.equal([]);
      expect(store.evictPass(), "at the capacity a pass has nothing to do").to.equal(0);
      const more = keysInShard(store, 0, 705, "a").slice(700);
      for (const k of more.slice(0, 4)) store.apply(rec(k, now()));
      expect([store.items, store.counters.evictions], "up to the hard limit").to.deep.equal([1004, 0]);
      store.apply(rec(more[4] as string, now()));
      expect([store.items, store.counters.evictions], "past it").to.deep.equal([1004, 1]);
    });

    it("32 shards, capacity 100000: keeps all 100000 distinct keys written; 150000 leave 100032, a pass 100000", () => {
      const { store, now } = fixture({ shards: 32, capacity: 100_000 });
      for (let i = 0; i < 100_000; i++) store.apply(rec(`key:${i}`, now()));
      expect([store.items, store.counters.evictions]).to.deep.equal([100_000, 0]);
      for (let i = 100_000; i < 150_000; i++) store.apply(rec(`key:${i}`, now()));
      expect([store.items, store.counters.evictions]).to.deep.equal([100_032, 50_000 - 32]);
      expect(store.evictPass()).to.equal(32);
      expect(store.items).to.equal(100_000);
    });

    it("an overwrite of a live key in a full store evicts nothing", () => {
      const { store, now } = fixture({ shards: 2, capacity: 2 }); // hard limit 4
      for (const k of ["a", "b", "c", "d"]) store.apply(rec(k, now(1)));
      for (const k of ["a", "b", "c", "d"]) expect(store.apply(rec(k, now(2))).applied).to.equal(Applied.Stored);
      expect([store.items, store.counters.evictions]).to.deep.equal([4, 0]);
    });

    it("an empty written shard borrows its victim from the shard furthest above its share", () => {
      // Capacity 10 over 4 shards: shares 3, 3, 2, 2, hard limit 14.
      const { store, now } = fixture({ shards: 4, capacity: 10 });
      const fill = [6, 2, 6, 0]; // above their shares by 3, -1, 4, 0: equal counts, shard 2 further above
      for (const [shard, n] of fill.entries()) for (const k of keysInShard(store, shard, n, `s${shard}-`)) store.apply(rec(k, now(1)));
      expect([store.items, store.counters.evictions]).to.deep.equal([14, 0]);
      const [k3] = keysInShard(store, 3, 1, "new");
      store.apply(rec(k3 as string, now(2)));
      expect(liveByShard(store)).to.deep.equal([6, 2, 5, 1]);
      expect(store.peek(k3 as string)).to.not.equal(undefined);
      expect(store.peek(keysInShard(store, 2, 1, "s2-")[0] as string), "shard 2's LRU item").to.equal(undefined);
      expect(store.counters.evictions).to.equal(1);
    });

    it("reviving a tombstone in a shard with no live record borrows the victim from the fullest shard", () => {
      const { store, now } = fixture({ shards: 2, capacity: 2 }); // shares 1, hard limit 4
      const [t] = keysInShard(store, 1, 1, "t");
      store.apply(rec(t as string, now(1)));
      store.apply(tomb(t as string, now(2)));
      const zero = keysInShard(store, 0, 4);
      for (const k of zero) store.apply(rec(k, now(3)));
      expect(liveByShard(store)).to.deep.equal([4, 0]);
      store.apply(rec(t as string, now(4), { value: "back" }));
      expect(liveByShard(store)).to.deep.equal([3, 1]);
      expect(store.get(t as string)?.value).to.equal("back");
      expect(store.peek(zero[0] as string)).to.equal(undefined);
      expect(store.counters.evictions).to.equal(1);
    });

    it("under seeded random writes, deletes and passes: never above the hard limit, no eviction below it, a pass leaves the capacity", () => {
      for (const algorithm of ALGORITHMS) {
        const { store, clock, now } = fixture({ shards: 8, capacity: 50, algorithm });
        const random = seededRandom(7);
        for (let op = 0; op < 5000; op++) {
          const before = store.items;
          const evictions = store.counters.evictions;
          const r = random.next();
          // Skewed keys, so the shards fill unevenly.
          const key = `k${randomInt(random, r < 0.5 ? 20 : 200)}`;
          if (r < 0.8) store.apply(rec(key, now(op)));
          else if (r < 0.9) store.apply(tomb(key, now(op)));
          else if (r < 0.95) clock.advance(1);
          else {
            expect(store.evictPass(), `${algorithm} op ${op}`).to.equal(Math.max(0, before - 50));
            expect(store.items, `${algorithm} op ${op}`).to.equal(Math.min(before, 50));
            continue;
          }
          expect(store.items, `${algorithm} op ${op}`).to.be.at.most(store.hardLimit);
          if (store.counters.evictions > evictions) {
            expect(before, `${algorithm} op ${op} evicted below the hard limit`).to.equal(store.hardLimit);
            expect(store.counters.evictions - evictions).to.equal(1);
          }
        }
      }
    });

    it("lru: evicts the least recently used key, a read counting as a use", () => {
      const { store, now } = fixture({ shards: 1, capacity: 3, algorithm: "lru" });
      for (const k of ["a", "b", "c"]) store.apply(rec(k, now()));
      store.get("a");
      store.apply(rec("d", now(1)));
      expect(store.evictPass()).to.equal(1);
      expect(["a", "b", "c", "d"].filter((k) => store.peek(k))).to.deep.equal(["a", "c", "d"]);
    });

    it("lru: an overwrite counts as a use", () => {
      const { store, now } = fixture({ shards: 1, capacity: 3, algorithm: "lru" });
      for (const k of ["a", "b", "c"]) store.apply(rec(k, now(1)));
      store.apply(rec("a", now(2)));
      store.apply(rec("b", now(2)));
      store.apply(rec("d", now(3)));
      expect(store.evictPass()).to.equal(1);
      expect(["a", "b", "c", "d"].filter((k) => store.peek(k))).to.deep.equal(["a", "b", "d"]);
    });

    it("lru: ignored (older or duplicate) writes do not count as a use", () => {
      const { store, now } = fixture({ shards: 1, capacity: 2, algorithm: "lru" });
      store.apply(rec("a", now(5)));
      store.apply(rec("b", now(5)));
      store.apply(rec("a", now(4)));
      store.apply(rec("a", now(5)));
      store.apply(rec("c", now(6)));
      expect(store.evictPass()).to.equal(1);
      expect(store.peek("a")).to.equal(undefined);
      expect(store.peek("b")).to.not.equal(undefined);
    });

    it("lfu: evicts the least frequently read key, not the least recent one", () => {
      // Capacity 2 (hard limit 3): a, b and c fill the shard, so inserting d evicts inline.
      const { store, now } = fixture({ shards: 1, capacity: 2, algorithm: "lfu" });
      for (const k of ["a", "b", "c"]) store.apply(rec(k, now()));
      store.get("a");
      store.get("a");
      store.get("b");
      store.get("b");
      store.get("c"); // c is the most recent, but read least
      store.apply(rec("d", now(1)));
      expect(["a", "b", "c", "d"].filter((k) => store.peek(k))).to.deep.equal(["a", "b", "d"]);
    });

    it("cawolfu: a key that is only overwritten is evicted before a key that is read", () => {
      // Capacity 1 (hard limit 2): the two keys fill the shard, so inserting "new" evicts inline.
      const { store, now } = fixture({ shards: 1, capacity: 1, algorithm: "cawolfu" });
      store.apply(rec("written", now(1)));
      store.apply(rec("read", now(1)));
      for (let i = 2; i < 5; i++) store.apply(rec("written", now(i))); // 4 writes: 1.0
      store.get("read"); // 1 write + 1 read: 1.25
      store.apply(rec("new", now(9)));
      expect(store.peek("written")).to.equal(undefined);
      expect(store.peek("read")).to.not.equal(undefined);
    });

    it("lfu and cawolfu differ on write-heavy keys: LFU keeps the key with more accesses", () => {
      // Capacity 1 (hard limit 2), as in the cawolfu case above.
      const { store, now } = fixture({ shards: 1, capacity: 1, algorithm: "lfu" });
      store.apply(rec("written", now(1)));
      store.apply(rec("read", now(1)));
      for (let i = 2; i < 5; i++) store.apply(rec("written", now(i)));
      store.get("read");
      store.apply(rec("new", now(9)));
      expect(store.peek("read")).to.equal(undefined);
      expect(store.peek("written")).to.not.equal(undefined);
    });

    it("evictions are counted in store.counters and in both eviction metrics, one per evicted item", () => {
      const { store, metrics, now } = fixture({ shards: 1, capacity: 2 });
      for (let i = 0; i < 7; i++) store.apply(rec(`k${i}`, now()));
      // Inline: every insert once the store holds its hard limit (3) evicts one.
      expect(store.counters.evictions).to.equal(4);
      expect(metrics.get("item_evicted_count")).to.equal(4);
      expect(metrics.get("evicted_item_count")).to.equal(4);
      // The pass trims the store from 3 to its capacity of 2, counted the same way.
      expect(store.evictPass()).to.equal(1);
      expect(store.counters.evictions).to.equal(5);
      expect(metrics.get("item_evicted_count")).to.equal(5);
      expect(metrics.get("evicted_item_count")).to.equal(5);
    });

    it("capacity counts live items only: tombstones do not evict live values", () => {
      const { store, now } = fixture({ shards: 1, capacity: 2 }); // hard limit 3
      store.apply(rec("a", now(1)));
      store.apply(rec("b", now(1)));
      store.apply(rec("c", now(1)));
      store.apply(tomb("x", now(1)));
      store.apply(tomb("y", now(1)));
      expect([store.items, store.tombstones, store.counters.evictions]).to.deep.equal([3, 2, 0]);
      store.apply(tomb("a", now(2))); // a delete frees room: the next new key evicts nothing
      store.apply(rec("d", now(2)));
      expect([store.items, store.counters.evictions]).to.deep.equal([3, 0]);
    });

    it("eviction is a local removal: no tombstone is left behind; expiration leaves a local tombstone of the expired version", () => {
      const { store, clock, now } = fixture({ shards: 1, capacity: 1 });
      store.apply(rec("a", now(1), { expiresAtMs: clock.nowMs() + 10 }));
      store.apply(rec("b", now(1)));
      expect(store.evictPass()).to.equal(1); // evicts a
      expect(store.peek("a")).to.equal(undefined);
      expect(store.apply(rec("a", now(0))).applied).to.equal(Applied.Stored); // an older version is accepted again
      clock.advance(10);
      store.apply(rec("c", now(1), { expiresAtMs: clock.nowMs() + 10 }));
      clock.advance(10);
      store.expirePass();
      expect(store.peek("c")?.tombstone).to.equal(true);
      expect(store.tombstones).to.equal(1);
    });
  });

  describe("capacity shares", () => {
    const cases = [
      { shards: 4, capacity: 10, shares: [3, 3, 2, 2], why: "not divisible: the first shards take the remainder" },
      { shards: 3, capacity: 1000, shares: [334, 333, 333], why: "not divisible, shard count not a power of two" },
      { shards: 8, capacity: 5, shares: [1, 1, 1, 1, 1, 0, 0, 0], why: "capacity below the shard count: some shares are 0" },
      { shards: 4, capacity: 40, shares: [10, 10, 10, 10], why: "divisible" },
    ];
    for (const { shards, capacity, shares, why } of cases) {
      it(`${shards} shards, capacity ${capacity} (${why}): the shares sum to the capacity and a pass trims to them`, () => {
        const { store, now } = fixture({ shards, capacity });
        // share + 1 in every shard is exactly the hard limit: nothing is evicted inline.
        for (let shard = 0; shard < shards; shard++) {
          for (const k of keysInShard(store, shard, (shares[shard] as number) + 1, `s${shard}-`)) store.apply(rec(k, now()));
        }
        expect(liveByShard(store)).to.deep.equal(shares.map((n) => n + 1));
        expect([store.items, store.counters.evictions]).to.deep.equal([store.hardLimit, 0]);
        expect(store.evictPass()).to.equal(shards);
        expect(liveByShard(store), "after a pass: the share").to.deep.equal(shares);
        expect(store.items).to.equal(capacity);
      });
    }

    it("a shard with a share of 0 stores writes; a pass takes the overshoot from it", () => {
      const { store, now } = fixture({ shards: 4, capacity: 2 }); // shares 1, 1, 0, 0, hard limit 6
      const [k1, k2, k3] = keysInShard(store, 3, 3);
      const [z] = keysInShard(store, 0, 1, "z");
      for (const k of [k1, k2, k3]) expect(store.apply(rec(k as string, now(1))).applied).to.equal(Applied.Stored);
      store.apply(rec(z as string, now(1)));
      expect(liveByShard(store)).to.deep.equal([1, 0, 0, 3]);
      expect(store.counters.evictions).to.equal(0);
      expect(store.evictPass()).to.equal(2);
      expect(liveByShard(store)).to.deep.equal([1, 0, 0, 1]);
      expect(store.peek(z as string), "shard 0 holds its share").to.not.equal(undefined);
      expect([store.peek(k1 as string), store.peek(k2 as string)]).to.deep.equal([undefined, undefined]);
      expect(store.peek(k3 as string)).to.not.equal(undefined);
    });

    });

  describe("counters and bytes", () => {
    it("counts hits and misses on get(): absent, deleted and expired keys are misses", () => {
      const { store, clock, now } = fixture();
      store.apply(rec("a", now(1)));
      store.apply(rec("d", now(1)));
      store.apply(tomb("d", now(2)));
      store.apply(rec("e", now(1), { expiresAtMs: clock.nowMs() + 1 }));
      store.get("a");
      store.get("a");
      store.get("absent");
      store.get("d");
      clock.advance(1);
      store.get("e");
      expect(store.counters).to.include({ hits: 2, misses: 3 });
    });

    it("counts one set per stored live write; ignored and tombstone writes are not sets", () => {
      const { store, now } = fixture();
      store.apply(rec("a", now(1)));
      store.apply(rec("a", now(2)));
      store.apply(rec("a", now(1)));
      store.apply(rec("a", now(2)));
      store.apply(tomb("a", now(3)));
      store.apply(rec("b", now(1)));
      expect(store.counters).to.include({ sets: 3, deletes: 1 });
    });

    it("peek() touches neither the counters nor the eviction order; get() does both", () => {
      const { store, now } = fixture({ shards: 1, capacity: 2, algorithm: "lru" });
      store.apply(rec("a", now()));
      store.apply(rec("b", now()));
      expect(store.peek("a")).to.include({ key: "a", tombstone: false });
      expect(store.peek("nope")).to.equal(undefined);
      expect(store.counters).to.include({ hits: 0, misses: 0 });
      store.apply(rec("c", now(1)));
      expect(store.evictPass()).to.equal(1); // a is still the LRU victim after the peek
      expect(store.peek("a")).to.equal(undefined);
      store.get("b");
      store.apply(rec("d", now(1)));
      expect(store.evictPass()).to.equal(1); // the get saved b: c goes
      expect(store.peek("b")).to.not.equal(undefined);
      expect(store.peek("c")).to.equal(undefined);
      expect(store.counters).to.include({ hits: 1, misses: 0 });
    });

    it("peek() returns an expired record without removing or counting it", () => {
      const { store, clock, now } = fixture();
      store.apply(rec("k", now(), { expiresAtMs: clock.nowMs() + 1 }));
      clock.advance(5);
      expect(store.peek("k")).to.include({ key: "k", tombstone: false });
      expect(store.items).to.equal(1);
      expect(store.counters).to.include({ misses: 0, expirations: 0 });
    });

    it("bytes follow overwrites, deletes, revivals, evictions, expirations and removals", () => {
      const { store, clock, now } = fixture({ shards: 1, capacity: 3 });
      store.apply(rec("a", now(1), { value: "12345" }));
      store.apply(rec("b", now(1), { value: "123" }));
      expect(store.bytes).to.equal(8);
      store.apply(rec("a", now(2), { value: "12" })); // overwrite, smaller
      expect(store.bytes).to.equal(5);
      store.apply(rec("b", now(2), { value: "1234567890" })); // overwrite, larger
      expect(store.bytes).to.equal(12);
      store.apply(tomb("a", now(3))); // delete
      expect(store.bytes).to.equal(10);
      store.apply(rec("a", now(4), { value: "1234" })); // revive
      expect(store.bytes).to.equal(14);
      store.apply(rec("c", now(4), { value: "1", expiresAtMs: clock.nowMs() + 10 }));
      expect(store.bytes).to.equal(15);
      store.apply(rec("d", now(5), { value: "123456" })); // the store reaches its hard limit, nothing evicted
      expect(store.bytes).to.equal(21);
      expect(store.evictPass()).to.equal(1); // evicts b (LRU), 10 bytes
      expect(store.peek("b")).to.equal(undefined);
      expect(store.bytes).to.equal(11);
      clock.advance(10);
      store.expirePass(); // c expires
      expect(store.bytes).to.equal(10);
      store.removeLocal("d");
      expect(store.bytes).to.equal(4);
      store.clear();
      expect(store.bytes).to.equal(0);
    });

    it("items, tombstones and bytes agree with the records under 5000 seeded random operations", () => {
      for (const algorithm of ALGORITHMS) {
        const { store, clock, now } = fixture({ shards: 4, capacity: 24, algorithm, tombstoneTtlMs: 300 });
        const random = seededRandom(2026);
        for (let op = 0; op < 5000; op++) {
          const key = `k${randomInt(random, 60)}`;
          const r = random.next();
          const version = now(randomInt(random, 1000));
          if (r < 0.45) {
            const ttl = random.next() < 0.3 ? clock.nowMs() + randomInt(random, 200) : 0;
            store.apply(rec(key, version, { value: "x".repeat(randomInt(random, 20)), expiresAtMs: ttl, origin: `n${randomInt(random, 3)}` }));
          } else if (r < 0.6) store.apply(tomb(key, version));
          else if (r < 0.8) store.get(key);
          else if (r < 0.85) store.removeLocal(key);
          else if (r < 0.95) clock.advance(randomInt(random, 50));
          else store.expirePass();
          const counted = recount(store);
          expect({ live: store.items, tombstones: store.tombstones, bytes: store.bytes }, `${algorithm} op ${op}`).to.deep.equal(counted);
          expect(store.items, `${algorithm} op ${op}`).to.be.at.most(store.hardLimit);
        }
      }
    });
  });

  describe("keysPage and collectKeys", () => {
    it("a page without a limit is a whole shard and points at the next shard; the last page has next undefined", () => {
      const { store, now } = fixture({ shards: 4 });
      const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
      for (const k of keys) store.apply(rec(k, now()));
      const pages = allPages(store, 0);
      expect(pages.map((p) => p.at)).to.deep.equal([0, 1, 2, 3].map((shard) => ({ shard, slot: 0 })));
      expect(pages.every((p) => !p.truncated)).to.equal(true);
      expect(pages[3]?.next).to.equal(undefined);
      for (const [i, p] of pages.entries()) expect(p.keys.every((k) => store.shardOf(k) === i)).to.equal(true);
      expect(pages.flatMap((p) => p.keys).sort()).to.deep.equal([...keys].sort());
    });

    it("a limit cuts a shard short, and the next page resumes exactly where it stopped, each key once", () => {
      const { store, now } = fixture({ shards: 4 });
      const keys = Array.from({ length: 300 }, (_, i) => `key:${i}`);
      for (const k of keys) store.apply(rec(k, now()));
      const pages = allPages(store, 7);
      const listed = pages.flatMap((p) => p.keys);
      expect(listed).to.have.length(300);
      expect(new Set(listed).size).to.equal(300);
      expect([...listed].sort()).to.deep.equal([...keys].sort());
      for (const p of pages) {
        expect(p.keys.length).to.be.at.most(7);
        if (p.truncated) {
          expect(p.keys).to.have.length(7);
          expect(p.next?.shard).to.equal(p.at.shard);
        }
      }
      expect(pages.filter((p) => p.truncated).length).to.be.greaterThan(30);
      // Concatenating a shard's limited pages gives exactly its unlimited listing, in order.
      for (let shard = 0; shard < 4; shard++) {
        const whole = store.keysPage(shard, 0, 0, () => true).keys;
        expect(pages.filter((p) => p.at.shard === shard).flatMap((p) => p.keys)).to.deep.equal(whole);
      }
      expect(pages.at(-1)?.next).to.equal(undefined);
    });

    it("a limit reached on the shard's last matching key is not a truncation", () => {
      const { store, now } = fixture({ shards: 1 });
      for (const k of ["a1", "a2", "b1"]) store.apply(rec(k, now()));
      const exact = store.keysPage(0, 0, 3, () => true);
      expect(exact).to.deep.equal({ keys: ["a1", "a2", "b1"], next: undefined, truncated: false });
      const onlyA = store.keysPage(0, 0, 2, (k) => k.startsWith("a"));
      expect(onlyA).to.deep.equal({ keys: ["a1", "a2"], next: undefined, truncated: false });
      const cut = store.keysPage(0, 0, 2, () => true);
      expect(cut.keys).to.deep.equal(["a1", "a2"]);
      expect(cut.truncated).to.equal(true);
      expect(store.keysPage(0, (cut.next as { slot: number }).slot, 2, () => true)).to.deep.equal({ keys: ["b1"], next: undefined, truncated: false });
    });

    it("the matcher callback filters keys (glob) and the limit counts matching keys only", () => {
      const { store, now } = fixture({ shards: 2 });
      const users = Array.from({ length: 30 }, (_, i) => `user:${i}:profile`);
      for (const k of users) store.apply(rec(k, now()));
      for (let i = 0; i < 30; i++) store.apply(rec(`user:${i}:avatar`, now()));
      for (let i = 0; i < 30; i++) store.apply(rec(`session:${i}`, now()));
      const glob = compileKeyFilter("user:*:profile");
      const pages = allPages(store, 4, (k) => glob.matches(k));
      const listed = pages.flatMap((p) => p.keys);
      expect([...listed].sort()).to.deep.equal([...users].sort());
      for (const p of pages.filter((x) => x.truncated)) expect(p.keys).to.have.length(4);
      const byClass = compileKeyFilter("session:[12]");
      expect(collectKeys(store, (k) => byClass.matches(k)).sort()).to.deep.equal(["session:1", "session:2"]);
      const prefix = compileKeyFilter("user:1");
      expect(collectKeys(store, (k) => prefix.matches(k)).length).to.equal(22); // user:1, user:10..19 x2
    });

    it("a shard index past the last shard gives an empty final page", () => {
      const { store, now } = fixture({ shards: 2 });
      store.apply(rec("a", now()));
      expect(store.keysPage(2, 0, 10, () => true)).to.deep.equal({ keys: [], next: undefined, truncated: false });
    });

    it("an empty shard gives an empty page that still points at the next shard", () => {
      const { store } = fixture({ shards: 3 });
      expect(store.keysPage(0, 0, 5, () => true)).to.deep.equal({ keys: [], next: { shard: 1, slot: 0 }, truncated: false });
    });

    it("paging skips keys deleted after the listing started and never lists one twice", () => {
      const { store, now } = fixture({ shards: 1 });
      const keys = Array.from({ length: 20 }, (_, i) => `k${String(i).padStart(2, "0")}`);
      for (const k of keys) store.apply(rec(k, now(1)));
      const first = store.keysPage(0, 0, 5, () => true);
      for (const k of keys.slice(0, 10)) store.apply(tomb(k, now(2)));
      const rest: string[] = [];
      let at = first.next;
      while (at) {
        const p = store.keysPage(at.shard, at.slot, 5, () => true);
        rest.push(...p.keys);
        at = p.next;
      }
      const all = [...first.keys, ...rest];
      expect(new Set(all).size).to.equal(all.length);
      expect(rest.filter((k) => keys.indexOf(k) < 10)).to.deep.equal([]);
      expect(rest.sort()).to.deep.equal(keys.slice(10));
    });
  });

  describe("clear, removeLocal, shards and records", () => {
    it("clear() removes every record, tombstones included, and returns the number of live items", () => {
      const { store, now } = fixture({ shards: 4 });
      for (let i = 0; i < 10; i++) store.apply(rec(`k${i}`, now(1)));
      store.apply(tomb("k0", now(2)));
      store.apply(tomb("gone", now(2)));
      expect(store.clear()).to.equal(9);
      expect([store.items, store.tombstones, store.bytes]).to.deep.equal([0, 0, 0]);
      expect(store.get("k1")).to.equal(undefined);
      expect(store.peek("k0")).to.equal(undefined);
      expect(collectKeys(store, () => true)).to.deep.equal([]);
      let records = 0;
      forEachRecord(store, () => records++);
      expect(records).to.equal(0);
    });

    it("the store is fully usable after clear(), capacity included", () => {
      const { store, now } = fixture({ shards: 1, capacity: 2 });
      for (const k of ["a", "b"]) store.apply(rec(k, now(5)));
      store.clear();
      expect(store.apply(rec("a", now(1))).applied).to.equal(Applied.Stored); // no memory of version 5
      store.apply(rec("b", now(1)));
      store.apply(rec("c", now(1)));
      expect(store.items).to.equal(3); // the hard limit (capacity + shards)
      store.apply(rec("d", now(1)));
      expect(store.items).to.equal(3);
      expect(store.peek("a")).to.equal(undefined);
      expect(store.evictPass()).to.equal(1);
      expect(store.items).to.equal(2);
    });

    it("removeLocal() removes a live record or a tombstone without leaving a tombstone", () => {
      const { store, now } = fixture();
      store.apply(rec("a", now(5), { value: "abc" }));
      store.apply(tomb("t", now(5)));
      expect(store.removeLocal("a")).to.equal(true);
      expect(store.removeLocal("t")).to.equal(true);
      expect(store.removeLocal("absent")).to.equal(false);
      expect([store.items, store.tombstones, store.bytes]).to.deep.equal([0, 0, 0]);
      expect(store.apply(rec("t", now(1))).applied).to.equal(Applied.Stored);
      expect(store.versionOf("a")).to.equal(0);
    });

    it("versionOf() reports the version of live records and tombstones, 0 for unknown keys", () => {
      const { store, now } = fixture();
      store.apply(rec("a", now(3)));
      store.apply(tomb("t", now(4)));
      expect([store.versionOf("a"), store.versionOf("t"), store.versionOf("x")]).to.deep.equal([now(3), now(4), 0]);
    });

    it("forEachRecord() visits live, expired and tombstone records once each", () => {
      const { store, clock, now } = fixture({ shards: 4 });
      store.apply(rec("live", now()));
      store.apply(rec("exp", now(), { expiresAtMs: clock.nowMs() + 1 }));
      store.apply(tomb("dead", now()));
      clock.advance(1);
      const seen: Array<[string, boolean]> = [];
      forEachRecord(store, (r) => seen.push([r.key, r.tombstone]));
      expect(seen.sort()).to.deep.equal([
        ["dead", true],
        ["exp", false],
        ["live", false],
      ]);
    });

    it("shardOf() is deterministic, in range, and spreads keys over every shard", () => {
      for (const shards of [1, 3, 10, 32]) {
        const a = fixture({ shards }).store;
        const b = fixture({ shards }).store;
        expect(a.shardCount).to.equal(shards);
        const used = new Set<number>();
        for (let i = 0; i < 2000; i++) {
          const s = a.shardOf(`key-${i}`);
          expect(s).to.be.within(0, shards - 1);
          expect(b.shardOf(`key-${i}`)).to.equal(s);
          used.add(s);
        }
        expect(used.size).to.equal(shards);
      }
    });

    it("reports the configured capacity", () => {
      expect(fixture({ capacity: 1234, shards: 8 }).store.capacity).to.equal(1234);
    });

    it("records keep their origin across many distinct origins", () => {
      const { store, now } = fixture({ shards: 4 });
      for (let i = 0; i < 300; i++) store.apply(rec(`k${i}`, now(), { origin: `node-${i % 37}` }));
      for (let i = 0; i < 300; i++) expect(store.peek(`k${i}`)?.origin).to.equal(`node-${i % 37}`);
    });

    it("refuses a record from one origin too many with BAD_REQUEST and changes nothing", () => {
      const { store, now } = fixture({ shards: 2, capacity: 10 });
      for (let i = 1; i <= 65_535; i++) store.apply(rec(`k${i % 20}`, now(i), { origin: `o${i}` }));
      store.apply(rec("victim-candidate", now(70_000), { origin: "o1" }));
      const before = { items: store.items, bytes: store.bytes, sets: store.counters.sets, evictions: store.counters.evictions };
      let thrown: unknown;
      try {
        store.apply(rec("new-key", now(80_000), { origin: "never-seen" }));
      } catch (e) {
        thrown = e;
      }
      expect(thrown).to.be.instanceOf(CacheError);
      expect((thrown as CacheError).code).to.equal("BAD_REQUEST");
      expect(store.peek("new-key")).to.equal(undefined);
      expect({ items: store.items, bytes: store.bytes, sets: store.counters.sets, evictions: store.counters.evictions }).to.deep.equal(before);
      expect(store.peek("victim-candidate")?.origin).to.equal("o1");
    });

    it("two stores share nothing", () => {
      const a = fixture();
      const b = fixture();
      a.store.apply(rec("k", a.now()));
      expect(b.store.peek("k")).to.equal(undefined);
      expect(b.store.counters.sets).to.equal(0);
    });
  });
});
