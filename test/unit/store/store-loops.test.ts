// EvictionLoop and ExpirationLoop: a schedule on the injected timers plus one tick each.
import { expect } from "chai";
import { EvictionLoop, EXPIRE_SLICE_MAX, ExpirationLoop, ShardedStore, type StoreLoopDeps, type VersionedRecord } from "../../../src/store/index.js";
import { recordingLogger, type RecordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { flush, ManualClock } from "../../helpers/manual-clock.js";
import { TEST_HASH_SEED } from "../../helpers/hash-seed.js";

/**
 * A store whose eviction pass reports a scripted amount of work and takes a scripted time on the
 * manual clock, so a test can choose each tick's outcome and duration. (A real pass also finds
 * work: writes may take the store up to capacity + shard count; see the real-store tests below.)
 */
class ScriptedEvictionStore extends ShardedStore {
  /** Counts the next evictPass() reports, then 0. */
  readonly script: number[] = [];
  /** Monotonic milliseconds a pass takes on the manual clock. */
  passMs = 0;
  passes = 0;
  constructor(private readonly manual: ManualClock, metrics: Metrics) {
    super({ shards: 2, capacity: 100, algorithm: "lru", tombstoneTtlMs: 1000, tombstoneBytesMax: 64 * 1024 * 1024, hashSeed: TEST_HASH_SEED, clock: manual, metrics });
  }
  override evictPass(): number {
    this.passes++;
    if (this.passMs > 0) this.manual.advance(this.passMs);
    return this.script.shift() ?? super.evictPass();
  }
}

function rec(key: string, clock: ManualClock, over: Partial<VersionedRecord> = {}): VersionedRecord {
  return { key, value: "v", version: clock.nowMs() * 1000, origin: "n1", lastUpdatedMs: clock.nowMs(), expiresAtMs: 0, tombstone: false, ...over };
}

/** A store with room for `capacity` items. */
const roomy = (capacity: number) => (clock: ManualClock, metrics: Metrics) =>
  new ShardedStore({ shards: 4, capacity, algorithm: "lru", tombstoneTtlMs: 60_000, tombstoneBytesMax: 64 * 1024 * 1024, hashSeed: TEST_HASH_SEED, clock, metrics });

function deps(store?: (clock: ManualClock, metrics: Metrics) => ShardedStore): StoreLoopDeps & { clock: ManualClock; logger: RecordingLogger; metrics: Metrics } {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  const s = store ? store(clock, metrics) : new ShardedStore({ shards: 4, capacity: 100, algorithm: "lru", tombstoneTtlMs: 1000, tombstoneBytesMax: 64 * 1024 * 1024, hashSeed: TEST_HASH_SEED, clock, metrics });
  return { store: s, clock, timers: clock, metrics, logger };
}

const messages = (logger: RecordingLogger) => logger.records.map((r) => `${r.level} ${r.message}`);

describe("store/store-loops", () => {
  describe("EvictionLoop", () => {
    it("an idle tick evicts nothing, logs 'eviction tick (idle)' at debug and counts the pass", () => {
      const d = deps();
      d.store.apply(rec("a", d.clock));
      const loop = new EvictionLoop(d, 1000);
      expect(loop.runTick()).to.equal(0);
      expect(d.logger.records).to.deep.equal([{ level: "debug", message: "eviction tick (idle)", fields: { items: 1 } }]);
      expect(d.metrics.get("eviction_loop_count")).to.equal(1);
    });

    it("a tick that evicts logs 'eviction tick' at info with the count, items and duration", () => {
      let store: ScriptedEvictionStore | undefined;
      const d = deps((clock, metrics) => (store = new ScriptedEvictionStore(clock, metrics)));
      (store as ScriptedEvictionStore).script.push(3);
      (store as ScriptedEvictionStore).passMs = 2;
      d.store.apply(rec("a", d.clock));
      const loop = new EvictionLoop(d, 1000);
      expect(loop.runTick()).to.equal(3);
      expect(d.logger.records).to.deep.equal([{ level: "info", message: "eviction tick", fields: { evicted: 3, items: 1, duration_ns: 2_000_000 } }]);
      expect(d.metrics.get("eviction_loop_count")).to.equal(1);
      expect(d.metrics.get("eviction_loop_duration")).to.equal(2_000_000);
    });

    it("with a real store, a tick after writes filled the store past its capacity evicts the overshoot and logs 'eviction tick' at info", () => {
      const d = deps(); // 4 shards, capacity 100: hard limit 104
      for (let i = 0; i < 400; i++) d.store.apply(rec(`k${i}`, d.clock));
      expect(d.store.items).to.equal(104);
      const inline = d.store.counters.evictions;
      expect(inline).to.equal(400 - 104);
      const loop = new EvictionLoop(d, 1000);
      expect(loop.runTick()).to.equal(4);
      expect(d.store.items).to.equal(100);
      expect(d.store.counters.evictions).to.equal(inline + 4);
      expect(loop.runTick()).to.equal(0);
      expect(d.logger.records).to.deep.equal([
        { level: "info", message: "eviction tick", fields: { evicted: 4, items: 100, duration_ns: 0 } },
        { level: "debug", message: "eviction tick (idle)", fields: { items: 100 } },
      ]);
      expect(d.metrics.get("eviction_loop_count")).to.equal(2);
    });

    it("with a real store, a scheduled tick trims the store back to its capacity from the shard above its share", () => {
      const clock = new ManualClock();
      const metrics = new Metrics();
      const store = new ShardedStore({ shards: 2, capacity: 4, algorithm: "lru", tombstoneTtlMs: 1000, tombstoneBytesMax: 64 * 1024 * 1024, hashSeed: TEST_HASH_SEED, clock, metrics }); // shares 2, hard limit 6
      const logger = recordingLogger("info");
      const inShard0: string[] = [];
      for (let i = 0; inShard0.length < 5; i++) if (store.shardOf(`k${i}`) === 0) inShard0.push(`k${i}`);
      for (const k of inShard0) store.apply(rec(k, clock));
      // Five keys in one shard: above the capacity, below the hard limit, so nothing went inline.
      expect([store.items, store.counters.evictions]).to.deep.equal([5, 0]);
      const loop = new EvictionLoop({ store, clock, timers: clock, metrics, logger }, 1000);
      loop.start();
      clock.advance(1000);
      clock.advance(1000);
      loop.stop();
      expect(logger.records).to.deep.equal([{ level: "info", message: "eviction tick", fields: { evicted: 1, items: 4, duration_ns: 0 } }]);
      expect(store.peek(inShard0[0] as string), "the LRU item is the one trimmed").to.equal(undefined);
      expect(inShard0.slice(1).filter((k) => store.peek(k) === undefined)).to.deep.equal([]);
      expect(metrics.get("eviction_loop_count")).to.equal(2);
    });

    it("counts every pass in eviction_loop_count, idle or not, and logs each at its level", () => {
      let store: ScriptedEvictionStore | undefined;
      const d = deps((clock, metrics) => (store = new ScriptedEvictionStore(clock, metrics)));
      (store as ScriptedEvictionStore).script.push(0, 2, 0);
      const loop = new EvictionLoop(d, 1000);
      loop.runTick();
      loop.runTick();
      loop.runTick();
      expect(d.metrics.get("eviction_loop_count")).to.equal(3);
      expect(messages(d.logger)).to.deep.equal(["debug eviction tick (idle)", "info eviction tick", "debug eviction tick (idle)"]);
    });

    it("an info-level logger sees only the ticks that did work", () => {
      const clock = new ManualClock();
      const metrics = new Metrics();
      const store = new ScriptedEvictionStore(clock, metrics);
      store.script.push(0, 1);
      const logger = recordingLogger("info");
      const loop = new EvictionLoop({ store, clock, timers: clock, metrics, logger }, 1000);
      loop.runTick();
      loop.runTick();
      expect(logger.records.map((r) => r.message)).to.deep.equal(["eviction tick"]);
    });

    it("does not tick before start(), ticks on the clock's schedule after it, and stops after stop()", () => {
      let store: ScriptedEvictionStore | undefined;
      const d = deps((clock, metrics) => (store = new ScriptedEvictionStore(clock, metrics)));
      const loop = new EvictionLoop(d, 1000);
      d.clock.advance(5000);
      expect(d.metrics.get("eviction_loop_count")).to.equal(0);
      loop.start();
      d.clock.advance(999);
      expect(d.metrics.get("eviction_loop_count")).to.equal(0);
      d.clock.advance(1);
      expect(d.metrics.get("eviction_loop_count")).to.equal(1);
      d.clock.advance(3000);
      expect(d.metrics.get("eviction_loop_count")).to.equal(4);
      expect((store as ScriptedEvictionStore).passes).to.equal(4);
      loop.stop();
      expect(d.clock.pending).to.equal(0);
      d.clock.advance(10_000);
      expect(d.metrics.get("eviction_loop_count")).to.equal(4);
      expect(messages(d.logger)).to.deep.equal(new Array(4).fill("debug eviction tick (idle)"));
    });

    it("start() twice keeps one schedule; stop() twice is harmless; start() after stop() resumes", () => {
      const d = deps();
      const loop = new EvictionLoop(d, 500);
      loop.start();
      loop.start();
      expect(d.clock.pending).to.equal(1);
      d.clock.advance(1000);
      expect(d.metrics.get("eviction_loop_count")).to.equal(2);
      loop.stop();
      loop.stop();
      d.clock.advance(1000);
      expect(d.metrics.get("eviction_loop_count")).to.equal(2);
      loop.start();
      d.clock.advance(500);
      expect(d.metrics.get("eviction_loop_count")).to.equal(3);
      loop.stop();
    });

    it("a scheduled tick that evicts logs at info with what it evicted", () => {
      let store: ScriptedEvictionStore | undefined;
      const d = deps((clock, metrics) => (store = new ScriptedEvictionStore(clock, metrics)));
      (store as ScriptedEvictionStore).script.push(0, 5);
      const loop = new EvictionLoop(d, 200);
      loop.start();
      d.clock.advance(400);
      loop.stop();
      expect(d.logger.records.map((r) => [r.level, r.message, r.fields.evicted])).to.deep.equal([
        ["debug", "eviction tick (idle)", undefined],
        ["info", "eviction tick", 5],
      ]);
    });
  });

  describe("ExpirationLoop", () => {
    it("a tick removes expired items, returns their count and logs 'expiration tick' at info", () => {
      const d = deps();
      d.store.apply(rec("a", d.clock, { expiresAtMs: d.clock.nowMs() + 100 }));
      d.store.apply(rec("b", d.clock, { expiresAtMs: d.clock.nowMs() + 100 }));
      d.store.apply(rec("c", d.clock));
      d.clock.advance(100);
      const loop = new ExpirationLoop(d, 1000);
      expect(loop.runTick()).to.equal(2);
      expect(d.store.items).to.equal(1);
      expect(d.logger.records).to.deep.equal([{ level: "info", message: "expiration tick", fields: { expired: 2, tombstones_compacted: 0, items: 1 } }]);
    });

    it("a tick that only compacts tombstones logs at info and returns 0 expired", () => {
      const d = deps();
      d.store.apply(rec("t", d.clock, { value: "", tombstone: true }));
      d.clock.advance(1000);
      const loop = new ExpirationLoop(d, 1000);
      expect(loop.runTick()).to.equal(0);
      expect(d.store.tombstones).to.equal(0);
      expect(d.logger.records).to.deep.equal([{ level: "info", message: "expiration tick", fields: { expired: 0, tombstones_compacted: 1, items: 0 } }]);
    });

    it("an idle tick logs 'expiration tick' at debug", () => {
      const d = deps();
      d.store.apply(rec("a", d.clock));
      const loop = new ExpirationLoop(d, 1000);
      expect(loop.runTick()).to.equal(0);
      expect(d.logger.records).to.deep.equal([{ level: "debug", message: "expiration tick", fields: { expired: 0, tombstones_compacted: 0, items: 1 } }]);
    });

    it("once started, expires items on the clock's schedule without anyone calling runTick", () => {
      const d = deps();
      d.store.apply(rec("short", d.clock, { expiresAtMs: d.clock.nowMs() + 1500 }));
      d.store.apply(rec("long", d.clock, { expiresAtMs: d.clock.nowMs() + 3500 }));
      const loop = new ExpirationLoop(d, 1000);
      loop.start();
      d.clock.advance(1000);
      expect(d.store.items).to.equal(2);
      d.clock.advance(1000); // tick at 2000: short is gone
      expect(d.store.items).to.equal(1);
      expect(d.store.counters.expirations).to.equal(1);
      loop.stop();
      d.clock.advance(5000); // long has expired, but nobody sweeps it
      expect(d.store.items).to.equal(1);
      expect(d.logger.records.map((r) => `${r.level} ${r.message}`)).to.deep.equal(["debug expiration tick", "info expiration tick"]);
      expect(d.clock.pending).to.equal(0);
    });

    it("a pass over more expired items than one slice goes on at the end of each turn (Timers.defer), and logs once, with the totals, when done", async () => {
      const d = deps(roomy(100_000));
      const n = EXPIRE_SLICE_MAX * 2 + 10;
      for (let i = 0; i < n; i++) d.store.apply(rec(`x${i}`, d.clock, { expiresAtMs: d.clock.nowMs() + 100 }));
      d.clock.advance(100);
      const loop = new ExpirationLoop(d, 1000);
      expect(loop.runTick(), "the first slice only").to.be.within(EXPIRE_SLICE_MAX - EXPIRE_SLICE_MAX / 32, EXPIRE_SLICE_MAX);
      expect(d.logger.records, "nothing logged before the pass is done").to.deep.equal([]);
      expect(loop.runTick(), "a tick while the pass goes on does nothing").to.equal(0);
      await flush(4);
      expect(d.store.items).to.equal(0);
      expect(d.logger.records).to.deep.equal([{ level: "info", message: "expiration tick", fields: { expired: n, tombstones_compacted: 0, items: 0 } }]);
    });

    it("expireNow runs a whole pass in slices, a turn apart, and answers how many items it expired", async () => {
      const d = deps(roomy(100_000));
      const n = EXPIRE_SLICE_MAX + 5;
      for (let i = 0; i < n; i++) d.store.apply(rec(`y${i}`, d.clock, { expiresAtMs: d.clock.nowMs() + 100 }));
      d.clock.advance(100);
      const loop = new ExpirationLoop(d, 1000);
      const answer = loop.expireNow();
      expect(d.store.items, "one slice ran before the first await").to.be.within(5, 5 + EXPIRE_SLICE_MAX / 32);
      expect(await answer).to.equal(n);
      expect(d.store.items).to.equal(0);
    });

    it("expireNow starts a pass of its own: items that expired behind a pass under way are swept too, and the answer counts every item it expired", async () => {
      const d = deps(roomy(100_000));
      const t0 = d.clock.nowMs();
      for (let i = 0; i < EXPIRE_SLICE_MAX + 100; i++) d.store.apply(rec(`a${i}`, d.clock, { expiresAtMs: t0 + 100 }));
      for (let i = 0; i < 1000; i++) d.store.apply(rec(`b${i}`, d.clock, { expiresAtMs: t0 + 200 }));
      d.clock.advance(100);
      const loop = new ExpirationLoop(d, 1000);
      const byTick = loop.runTick();
      expect(byTick, "the loop's pass stops mid-way").to.be.within(1, EXPIRE_SLICE_MAX);
      d.clock.advance(100); // the b keys expire, some behind the pass's cursor
      const [first, second] = await Promise.all([loop.expireNow(), loop.expireNow()]);
      expect(first, "the a keys left and the 1,000 b keys").to.equal(EXPIRE_SLICE_MAX + 1100 - byTick);
      expect(second, "a second request while one runs shares its pass").to.equal(first);
      expect(d.store.items).to.equal(0);
      await flush(4);
      expect(d.store.counters.expirations).to.equal(EXPIRE_SLICE_MAX + 1100);
    });

    it("start() twice keeps one schedule", () => {
      const d = deps();
      const loop = new ExpirationLoop(d, 250);
      loop.start();
      loop.start();
      expect(d.clock.pending).to.equal(1);
      d.clock.advance(1000);
      expect(d.logger.records).to.have.length(4);
      loop.stop();
    });
  });

  it("the two loops run side by side on one clock, each at its own interval", () => {
    const d = deps();
    const eviction = new EvictionLoop(d, 300);
    const expiration = new ExpirationLoop(d, 500);
    eviction.start();
    expiration.start();
    d.clock.advance(1500);
    eviction.stop();
    expiration.stop();
    const count = (m: string) => d.logger.records.filter((r) => r.message === m).length;
    expect(count("eviction tick (idle)")).to.equal(5);
    expect(count("expiration tick")).to.equal(3);
    expect(d.metrics.get("eviction_loop_count")).to.equal(5);
  });
});
