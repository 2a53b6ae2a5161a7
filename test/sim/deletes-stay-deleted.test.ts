// A deleted key does not come back (hardening §3):
// - tombstones live for SERVICE_TOMBSTONE_TTL under their own byte budget, not the item capacity;
// - an item whose TTL passes leaves a tombstone of its version;
// - a read never answers with a value older than a tombstone the node holds;
// - a node that saw no majority for longer than the tombstone TTL drops its data and rejoins as a
//   new node, so it cannot spread keys deleted while it was away.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { keyWhere, text } from "./data-path-fixtures.js";

/** Syncs every pair of nodes both ways (anti-entropy by hand). */
async function syncAll(c: SimCluster): Promise<void> {
  for (const a of c.nodes) for (const b of c.nodes) if (a !== b) await a.node.merkle.syncer.syncWith({ id: b.id, address: b.address });
}

describe("sim/deletes stay deleted", () => {
  const cluster = simClusters();

  it(
    "deleting 2,000 absent keys on a node with capacity 1,000 keeps the real tombstones: anti-entropy does not bring the deleted key back",
    withSeed(511, async () => {
      const env = { SERVICE_REPLICATION: "2", SERVICE_CAPACITY: "1000", SERVICE_HINT_TTL: "1s", SERVICE_AUTO_SYNC_INTERVAL: "0" };
      const c = await cluster({ nodes: 2, seed: 511, env });
      await c.advance(1_000);
      await c.node("n1").cache.admitWrite().set("victim", fromUtf8("v"), 0, "all");
      c.crash("n2");
      await c.node("n1").cache.admitWrite().remove("victim", "one");
      for (let i = 0; i < 2000; i++) await c.node("n1").cache.admitWrite().remove(`absent-${i}`, "one");
      await c.advance(3_000); // the hints for n2 expire
      c.revive("n2");
      await c.advance(2_000); // a probe finds n2 alive again (QUORUM and ALL reads need a majority alive)
      await syncAll(c);
      expect(c.node("n1").store.peek("victim")?.tombstone, "n1 still holds the tombstone").to.equal(true);
      expect((await c.node("n1").cache.get("victim", "all")).item).to.equal(undefined);
      expect(c.node("n2").store.peek("victim")?.tombstone, "the tombstone reached n2").to.equal(true);
      expect(c.node("n1").metrics.get("dist.tombstones.dropped"), "no tombstone dropped within the budget").to.equal(0);
    }),
  );

  it(
    "an item whose TTL passes leaves a tombstone of its version: a replica that missed the TTL'd write cannot bring the older value back",
    withSeed(512, async () => {
      const env = { SERVICE_REPLICATION: "2", SERVICE_HINT_TTL: "1s", SERVICE_AUTO_SYNC_INTERVAL: "0" };
      const c = await cluster({ nodes: 2, seed: 512, env });
      await c.advance(1_000);
      await c.node("n1").cache.admitWrite().set("ttl-key", fromUtf8("older, no ttl"), 0, "all");
      c.crash("n2");
      const w = await c.node("n1").cache.admitWrite().set("ttl-key", fromUtf8("newer, 2 s ttl"), 2_000, "one");
      await c.advance(5_000); // the newer value expires on n1; the hint for n2 expires too
      expect(c.node("n1").store.peek("ttl-key"), "n1 keeps a tombstone of the expired version").to.deep.include({ tombstone: true, version: w.version });
      c.revive("n2");
      await c.advance(2_000); // a probe finds n2 alive again (QUORUM and ALL reads need a majority alive)
      await syncAll(c);
      expect((await c.node("n1").cache.get("ttl-key", "all")).item).to.equal(undefined);
      expect(c.node("n2").store.peek("ttl-key")?.tombstone, "n2's older value was replaced by the tombstone").to.equal(true);
    }),
  );

  it(
    "an owner that holds a tombstone and looks past its local miss (catch-up not done yet) does not answer the older value its peers still hold",
    withSeed(513, async () => {
      const c = await cluster({ nodes: 3, seed: 513 });
      // No time passes: catch-up has not run, so reads on an owner look past a local miss.
      const key = keyWhere(c, (o) => o.primary === "n1", "past");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("before the delete"), 0, "all");
      c.chaos.isolate("n2");
      c.chaos.isolate("n3");
      await c.node("n1").cache.admitWrite().remove(key, "one");
      await c.settle(); // the pushes to n2 and n3 fail (they become hints, replayed only on a tick)
      c.chaos.heal();
      expect(c.node("n2").store.peek(key)?.tombstone, "n2 missed the delete").to.equal(false);
      expect(c.node("n1").store.peek(key)?.tombstone).to.equal(true);
      expect((await c.node("n1").cache.get(key, "one")).item, "ONE read on the owner with the tombstone").to.equal(undefined);
      expect(c.node("n1").store.peek(key)?.tombstone, "the tombstone stays").to.equal(true);
    }),
  );

  it(
    "a node that saw no majority for longer than the tombstone TTL drops its data and rejoins as a new node: keys deleted while it was away do not come back",
    withSeed(514, async () => {
      const env = { SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_AUTO_SYNC_INTERVAL: "2s" };
      const c = await cluster({ nodes: 3, seed: 514, env });
      await c.advance(2_000);
      const key = keyWhere(c, (o) => o.primary === "n1", "away");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("deleted while n3 was away"), 0, "all");
      await c.node("n1").cache.admitWrite().set("kept", fromUtf8("kept"), 0, "all");
      c.chaos.isolate("n3");
      await c.advance(1_000);
      await c.node("n1").cache.admitWrite().remove(key, "quorum");
      await c.advance(40_000); // n1 and n2 compact the tombstone; n3 has seen no majority for 40 s
      expect(c.node("n1").store.peek(key), "the tombstone was compacted on n1").to.equal(undefined);
      expect(c.node("n3").metrics.get("dist.contact.resets"), "n3 dropped its data").to.equal(1);
      c.chaos.heal();
      await c.advance(20_000);
      for (const n of c.nodes) expect(n.node.store.peek(key), `${n.id} holds nothing for the deleted key`).to.equal(undefined);
      expect(text((await c.node("n3").cache.get("kept", "all")).item?.value), "n3 caught up like a new node").to.equal("kept");
    }),
  );
});
