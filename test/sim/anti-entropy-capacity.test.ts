// Anti-entropy on a replica at capacity (review fix dce0726). Eviction is local: a replica that
// evicted keys to stay within SERVICE_CAPACITY must not pull them back on the next Merkle sync
// (each tick would pull the cold keys back and evict the ones the application reads). It still
// takes newer versions of the keys it holds, and tombstones; below capacity it pulls missing keys.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import type { VersionedRecord } from "../../src/store/index.js";
import { simCluster, withSeed, type SimCluster, type SimNode } from "../helpers/sim-cluster.js";
import { text } from "./data-path-fixtures.js";

const SYNC = { SERVICE_REPLICATION: "2", SERVICE_AUTO_SYNC_INTERVAL: "10s" };
const SMALL = { SERVICE_CAPACITY: "64", SERVICE_EVICTION_SHARDS: "1" };

describe("sim/anti-entropy: a replica at capacity", () => {
  let c: SimCluster | undefined;
  afterEach(async () => {
    await c?.stop();
    c = undefined;
  });

  /** n1 (capacity 100000) and n2 (capacity 64, one shard), replication 2: both own every key. */
  async function pair(seed: number): Promise<{ c: SimCluster; n2: SimNode }> {
    c = await simCluster({ nodes: 1, seed, env: SYNC });
    const n2 = c.join("n2", SMALL);
    await c.advance(5_000);
    return { c, n2 };
  }

  /** Writes `count` keys through n1 at ALL (n2 stores each and evicts), then lets n2's eviction loop trim it to 64. */
  async function overfilled(seed: number, count = 200): Promise<{ c: SimCluster; n2: SimNode; keys: string[] }> {
    const { c, n2 } = await pair(seed);
    const keys = Array.from({ length: count }, (_, i) => `k${i}`);
    for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "all");
    await c.advance(1_500);
    expect(n2.node.store.items).to.equal(64);
    return { c, n2, keys };
  }

  const held = (n: SimNode, keys: readonly string[]) => keys.filter((k) => n.node.store.peek(k) !== undefined);

  /** Three anti-entropy ticks on a full n2: each syncs, pulls nothing, evicts nothing, and n2 still holds `before`. */
  async function expectSyncsLeaveHeldKeys(c: SimCluster, n2: SimNode, keys: readonly string[], before: readonly string[]): Promise<void> {
    const pulled = n2.node.metrics.get("dist.merkle.keys_pulled");
    const evicted = n2.node.metrics.get("item_evicted_count");
    for (let tick = 0; tick < 3; tick++) {
      const syncs = n2.node.metrics.get("dist.merkle.syncs");
      await c.advance(10_000);
      expect(n2.node.metrics.get("dist.merkle.syncs"), `tick ${tick}: n2 synced with n1`).to.be.greaterThan(syncs);
      expect(n2.node.metrics.get("dist.merkle.keys_pulled") - pulled, `tick ${tick}: keys pulled`).to.equal(0);
      expect(n2.node.metrics.get("item_evicted_count") - evicted, `tick ${tick}: keys evicted`).to.equal(0);
      expect(held(n2, keys), `tick ${tick}: the keys n2 holds`).to.deep.equal(before);
    }
  }

  it(
    "a replica at capacity that evicted keys does not pull them back on the next syncs: the keys it holds stay, nothing is pulled or evicted",
    withSeed(331, async () => {
      const { c, n2, keys } = await overfilled(331);
      const before = held(n2, keys);
      expect(before).to.have.length(64);
      await expectSyncsLeaveHeldKeys(c, n2, keys, before);
    }),
  );

  it(
    "a replica at capacity still pulls newer versions of keys it holds and tombstones of keys it holds, and the other keys it holds stay",
    withSeed(332, async () => {
      const { c, n2, keys } = await overfilled(332);
      const before = held(n2, keys);
      const n1 = c.node("n1");
      const [u1, u2, u3, d1, d2] = before as [string, string, string, string, string];
      // Newer records written on n1 only (as if the pushes to n2 had been lost).
      const newer = (k: string, extra: Partial<VersionedRecord>): VersionedRecord => {
        const cur = n1.store.peek(k) as VersionedRecord;
        return { ...cur, version: cur.version + 1000, lastUpdatedMs: Math.floor((cur.version + 1000) / 1000), ...extra };
      };
      for (const k of [u1, u2, u3]) n1.store.apply(newer(k, { value: fromUtf8(`v2-${k}`) }));
      for (const k of [d1, d2]) n1.store.apply(newer(k, { value: "", tombstone: true }));
      await c.advance(10_000);
      for (const k of [u1, u2, u3]) expect(text(n2.node.store.peek(k)?.value), k).to.equal(`v2-${k}`);
      for (const k of [d1, d2]) expect(n2.node.store.peek(k)?.tombstone, k).to.equal(true);
      const kept = before.filter((k) => k !== d1 && k !== d2);
      expect(kept.filter((k) => n2.node.store.get(k) === undefined), "held keys displaced by the sync").to.deep.equal([]);
      expect(n2.node.store.items, "at most its capacity").to.be.at.most(64);
    }),
  );

  it(
    "a replica at its byte budget (SERVICE_MAX_DATA_BYTES) does not pull back what it evicted for bytes either",
    withSeed(334, async () => {
      c = await simCluster({ nodes: 1, seed: 334, env: SYNC });
      const n2 = c.join("n2", { SERVICE_MAX_DATA_BYTES: "8KiB", SERVICE_MAX_VALUE_BYTES: "1KiB", SERVICE_EVICTION_SHARDS: "1" });
      await c.advance(5_000);
      const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`.padEnd(120, ".")), 0, "all");
      await c.advance(1_500);
      expect(n2.node.store.dataBytes).to.be.at.most(8 * 1024);
      const before = held(n2, keys);
      expect(before.length).to.be.within(50, 70);
      // Before: every sync pulled the evicted keys back and evicted as many held ones for them.
      await expectSyncsLeaveHeldKeys(c, n2, keys, before);
    }),
  );

  it(
    "a replica below capacity pulls the keys it misses, up to its capacity, without evicting any",
    withSeed(333, async () => {
      const { c, n2 } = await pair(333);
      const n1 = c.node("n1");
      const base = Date.UTC(2026, 0, 1) * 1000;
      const put = (k: string, i: number) => n1.store.apply({ key: k, value: fromUtf8(`v-${k}`), version: base + i, origin: "n1", lastUpdatedMs: Math.floor((base + i) / 1000), expiresAtMs: 0, tombstone: false });
      const first = Array.from({ length: 40 }, (_, i) => `a${i}`);
      first.forEach(put);
      await c.advance(10_000);
      expect(held(n2, first), "missing keys pulled below capacity").to.deep.equal(first);
      expect(n2.node.metrics.get("dist.merkle.keys_pulled")).to.equal(40);

      const more = Array.from({ length: 60 }, (_, i) => `b${i}`);
      more.forEach((k, i) => put(k, 100 + i));
      await c.advance(10_000);
      expect(n2.node.store.items, "pulled up to its capacity").to.equal(64);
      expect(held(n2, first), "the keys it held stay").to.deep.equal(first);
      expect(n2.node.metrics.get("item_evicted_count"), "evictions").to.equal(0);
    }),
  );
});
