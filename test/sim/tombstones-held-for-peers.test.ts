// A tombstone stays past its TTL until every ring peer has pulled it by anti-entropy
// (sync-receipts.ts): an owner whose links to the other owners were down for longer than the TTL,
// while it still saw a majority (so neither the ring nor its contact guard changed), used to get
// the deleted key back onto them after the heal (the known-defect reproduction, seed 77).
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { LOG } from "../../src/log/index.js";
import { keysWhere, text } from "./data-path-fixtures.js";
import { writeThenCutOwner } from "./tombstone-fixtures.js";

// Anti-entropy every 2 s, no backoff: a peer reports a completed sync at its next one, so compaction
// waits at most two sync periods past the TTL (with backoff, up to twice 8 x 2 s).
const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_AUTO_SYNC_INTERVAL: "2s", SERVICE_AUTO_SYNC_MAX_FACTOR: "1" };

/** A key written at ALL through n1, then deleted at QUORUM through `b` while `a` is cut off from the two other owners. */
async function deleteWhileCut(c: SimCluster, key: string): Promise<[string, string, string]> {
  const owners = await writeThenCutOwner(c, key, 1_000);
  expect((await c.node(owners[1]).cache.admitWrite().remove(key, "quorum")).applied).to.equal(true);
  return owners;
}

describe("sim/tombstones held until every ring peer has pulled them", () => {
  const cluster = simClusters();

  it(
    "a key deleted at QUORUM while one owner's links to the other two were down for twice the TTL stays deleted after they heal",
    withSeed(77, async () => {
      const c = await cluster({ nodes: 5, seed: 77, env: ENV });
      const key = "item-1";
      const [a, b, other] = await deleteWhileCut(c, key);
      await c.advance(40_000); // the hint for a expires (5 s); the tombstones' TTL (20 s) passes
      expect(c.node(a).metrics.get("dist.contact.resets"), "no reset: a saw a majority").to.equal(0);
      expect(text(c.node(a).store.peek(key)?.value), "a kept the old value").to.equal("v");
      for (const id of [b, other]) expect(c.node(id).store.peek(key)?.tombstone, `${id} keeps the tombstone for a`).to.equal(true);
      expect(c.node(b).metrics.get("dist.tombstones.held_back_ns"), "b says compaction is held back").to.be.greaterThan(0);
      const warned = c.nodes.find((n) => n.id === b)?.logger.records.filter((r) => r.message === LOG.compactionHeldBack).map((r) => r.fields.peer);
      expect(warned, "b names a, once").to.deep.equal([a]);
      c.chaos.heal();
      await c.advance(10_000);
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), "QUORUM read after the heal").to.equal(undefined);
      expect(c.node(a).store.peek(key)?.tombstone, "the tombstone reached a").to.equal(true);
      await c.advance(30_000); // every peer has pulled it: the tombstones go, a's after its own TTL
      for (const id of [a, b, other]) expect(c.node(id).store.peek(key), `${id} compacted the tombstone`).to.equal(undefined);
      expect(c.node(b).metrics.get("dist.tombstones.held_back_ns")).to.equal(0);
    }),
  );

  it(
    "the same with the link up for under a second every 8-9 s (a probe round gets through, a sync may not): the key stays deleted",
    withSeed(77, async () => {
      const c = await cluster({ nodes: 5, seed: 77, env: ENV });
      const key = "item-1";
      const [a, b, other] = await deleteWhileCut(c, key);
      const end = c.clock.monotonicMs() + 40_000;
      while (c.clock.monotonicMs() < end) {
        // Up on odd seconds: the anti-entropy ticks (every 2 s while syncs fail) fall on even ones.
        let up = Math.ceil((c.clock.monotonicMs() + 7_000) / 1_000) * 1_000;
        if ((up / 1_000) % 2 === 0) up += 1_000;
        await c.advance(up - 1 - c.clock.monotonicMs());
        c.chaos.heal();
        await c.advance(900);
        c.chaos.partition([a], [b, other]);
      }
      c.chaos.heal();
      await c.advance(20_000);
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), "QUORUM read after the heal").to.equal(undefined);
    }),
  );

  it(
    "in a healthy cluster a tombstone goes soon after its TTL: every peer pulls it within a sync interval or two",
    withSeed(79, async () => {
      const c = await cluster({ nodes: 3, seed: 79, env: ENV });
      await c.advance(2_000);
      const keys = keysWhere(c, 5, () => true, "gone");
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8("v"), 0, "all");
      for (const k of keys) await c.node("n2").cache.admitWrite().remove(k, "quorum");
      await c.advance(19_000);
      expect(c.nodes.every((n) => keys.every((k) => n.node.store.peek(k)?.tombstone === true)), "within the TTL every owner holds every tombstone").to.equal(true);
      await c.advance(6_000); // the TTL and two sync intervals
      for (const n of c.nodes) for (const k of keys) expect(n.node.store.peek(k), `${n.id} ${k}`).to.equal(undefined);
      for (const n of c.nodes) expect(n.node.metrics.get("dist.tombstones.held_back_ns"), n.id).to.equal(0);
    }),
  );

  it(
    "with anti-entropy off nothing pulls, so nothing is held: tombstones go at their TTL",
    withSeed(80, async () => {
      const c = await cluster({ nodes: 3, seed: 80, env: { ...ENV, SERVICE_AUTO_SYNC_INTERVAL: "0" } });
      await c.advance(2_000);
      await c.node("n1").cache.admitWrite().set("k", fromUtf8("v"), 0, "all");
      await c.node("n1").cache.admitWrite().remove("k", "all");
      await c.advance(21_500);
      for (const n of c.nodes) expect(n.node.store.peek("k"), n.id).to.equal(undefined);
    }),
  );
  it(
    "a tombstone that reached the two owners 5 s apart goes from both, instead of being handed back and forth every TTL",
    withSeed(5, async () => {
      const env = { ...ENV, SERVICE_REPLICATION: "2", SERVICE_DEAD_AFTER: "60s", SERVICE_HINT_TTL: "10s", SERVICE_HINT_REPLAY: "1s" };
      const c = await cluster({ nodes: 2, seed: 5, env });
      await c.advance(2_000);
      await c.node("n1").cache.admitWrite().set("k", fromUtf8("v"), 0, "all");
      c.chaos.partition(["n1"], ["n2"]);
      await c.node("n1").cache.admitWrite().remove("k", "one");
      await c.advance(5_000);
      c.chaos.heal(); // the hint brings n2 the tombstone 5 s after n1 got it
      const seen: string[] = [];
      for (let i = 0; i < 40; i++) {
        await c.advance(5_000);
        seen.push(["n1", "n2"].map((id) => (c.node(id).store.peek("k")?.tombstone ? "T" : c.node(id).store.peek("k") ? "V" : "-")).join(""));
      }
      // Before: "TT TT -T TT TT ... -T T- TT ...": one owner compacted, pulled it back from the other.
      expect(seen.slice(8), seen.join(" ")).to.deep.equal(Array(32).fill("--"));
    }),
  );
});
