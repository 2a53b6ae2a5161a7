// Merkle anti-entropy as the last line of repair: it brings back a replica that missed writes
// after their hints expired; deletes travel only as tombstones (a key deleted while a replica was
// away is not resurrected, and absence on a peer never deletes a key); it compares only the keys
// both nodes own (5 nodes, replication 3); a failed fetch logs 'merkle sync fetch failed'.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { LOG } from "../../src/log/index.js";
import type { PeerRef } from "../../src/transport/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { BASE_VERSION, keysWhere, keyWhere, logRecords, rec, storedEverywhere, text } from "./data-path-fixtures.js";
import { addressOf } from "./membership-fixtures.js";

const ENV = {
  SERVICE_HEARTBEAT: "1s",
  SERVICE_DEAD_AFTER: "6s",
  SERVICE_HINT_TTL: "2s",
  SERVICE_HINT_REPLAY: "200ms",
  SERVICE_AUTO_SYNC_INTERVAL: "10s",
};

const peer = (id: string): PeerRef => ({ id, address: addressOf(id) });

describe("sim/anti-entropy: repair", () => {
  const cluster = simClusters();

  /** Isolates n3, lets `during` run, waits until n1's hints for n3 expired, heals at t = 3.5 s. */
  async function missedWhileAway(c: SimCluster, during: () => Promise<void>, hints: number): Promise<void> {
    c.chaos.isolate("n3");
    await during();
    await c.settle();
    expect(c.node("n1").hints.size("n3"), "hints queued for the isolated replica").to.equal(hints);
    await c.advance(3_000);
    expect(c.node("n1").hints.size("n3")).to.equal(0);
    expect(c.node("n1").metrics.get("dist.hinted.expired"), "every hint expired undelivered").to.equal(hints);
    expect(c.node("n1").metrics.get("dist.hinted.replayed")).to.equal(0);
    c.chaos.heal();
  }

  it(
    "a replica that missed writes while its hints expired holds the latest values after the next auto-sync tick (dist.merkle.keys_pulled), and not before",
    withSeed(251, async () => {
      // The first tick at 5 s comes before the catch-up pass n3 runs after its hold (it lost sight
      // of a majority while isolated: quorum-vote.ts), so only the tick can repair it by then.
      const c = await cluster({ nodes: 3, seed: 251, env: { ...ENV, SERVICE_AUTO_SYNC_INTERVAL: "5s" } });
      await c.advance(500);
      const keys = keysWhere(c, 20, (o) => o.primary === "n1", "ae");
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`old-${k}`), 0, "all");
      const updated = keys.slice(0, 10);
      const added = keysWhere(c, 5, (o) => o.primary === "n1", "ae-new");
      await missedWhileAway(c, async () => {
        for (const k of [...updated, ...added]) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`new-${k}`), 0, "quorum");
      }, updated.length + added.length);
      const stale = () => [...updated, ...added].filter((k) => text(c.node("n3").store.peek(k)?.value) !== `new-${k}`);
      expect(stale()).to.have.length(15);

      await c.advance(5_000 - 1 - c.clock.monotonicMs());
      expect(stale(), "nothing but anti-entropy repairs it: still stale just before the first tick at 5 s").to.have.length(15);
      expect(c.node("n3").members.peers("alive").map((m) => m.id)).to.deep.equal(["n1", "n2"]);
      await c.advance(1);
      expect(stale()).to.deep.equal([]);
      expect(c.node("n3").metrics.get("dist.merkle.keys_pulled")).to.equal(15);
      expect(c.node("n3").metrics.get("dist.merkle.syncs")).to.be.at.least(1);
      for (const k of keys.slice(10)) expect(text(c.node("n3").store.peek(k)?.value), `${k} untouched`).to.equal(`old-${k}`);
      for (const k of [...updated, ...added]) expect(text((await c.node("n3").cache.get(k)).item?.value), k).to.equal(`new-${k}`);
    }),
  );

  it(
    "a key deleted while a replica was away is not resurrected: the replica pulls the tombstone, the others never pull its older value",
    withSeed(252, async () => {
      const c = await cluster({ nodes: 3, seed: 252, env: ENV });
      await c.advance(500);
      const keys = keysWhere(c, 6, (o) => o.primary === "n1", "del");
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "all");
      const deleted = keys.slice(0, 3);
      await missedWhileAway(c, async () => {
        for (const k of deleted) await c.node("n1").cache.admitWrite().remove(k, "quorum");
      }, deleted.length);
      for (const k of deleted) expect(storedEverywhere(c, k), k).to.deep.equal({ n1: "<tombstone>", n2: "<tombstone>", n3: `v-${k}` });

      await c.advance(10_000 - c.clock.monotonicMs() + 1_000);
      for (const k of deleted) {
        expect(storedEverywhere(c, k), k).to.deep.equal({ n1: "<tombstone>", n2: "<tombstone>", n3: "<tombstone>" });
        for (const n of c.nodes) expect((await n.node.cache.get(k)).item, `${k} read from ${n.id}`).to.equal(undefined);
      }
      for (const k of keys.slice(3)) expect(storedEverywhere(c, k), k).to.deep.equal({ n1: `v-${k}`, n2: `v-${k}`, n3: `v-${k}` });
      expect(c.node("n3").metrics.get("dist.merkle.keys_pulled")).to.equal(3);
      expect(c.node("n1").metrics.get("dist.merkle.keys_pulled")).to.equal(0);
      expect(c.node("n2").metrics.get("dist.merkle.keys_pulled")).to.equal(0);
    }),
  );

  it(
    "absence on a peer never deletes a key: the holder's sync keeps it, the other side's sync pulls it",
    withSeed(253, async () => {
      const c = await cluster({ nodes: 3, seed: 253, startLoops: false });
      const key = keyWhere(c, (o) => o.ids.includes("n1") && o.ids.includes("n2"), "absent");
      c.node("n1").store.apply(rec(key, "only-here", BASE_VERSION + 1_000, "n1"));
      const fromN1 = await c.node("n1").merkle.syncer.syncWith(peer("n2"));
      expect(fromN1).to.deep.include({ pulled: 0, clean: false });
      expect(text(c.node("n1").store.peek(key)?.value), "kept by its holder").to.equal("only-here");
      expect(c.node("n2").store.peek(key), "a pull never pushes").to.equal(undefined);
      const fromN2 = await c.node("n2").merkle.syncer.syncWith(peer("n1"));
      expect(fromN2).to.deep.equal({ pulled: 1, clean: false, failed: false });
      expect(text(c.node("n2").store.peek(key)?.value)).to.equal("only-here");
      expect(await c.node("n1").merkle.syncer.syncWith(peer("n2"))).to.deep.include({ pulled: 0, clean: true, failed: false });
    }),
  );

  it(
    "a newer value wins over an older one in both directions; the older side's pull of it is a version conflict, not a downgrade",
    withSeed(254, async () => {
      const c = await cluster({ nodes: 3, seed: 254, startLoops: false });
      const key = keyWhere(c, (o) => o.ids.includes("n1") && o.ids.includes("n2"), "lww");
      c.node("n1").store.apply(rec(key, "older", BASE_VERSION + 1_000, "n1"));
      c.node("n2").store.apply(rec(key, "newer", BASE_VERSION + 2_000, "n2"));
      await c.node("n2").merkle.syncer.syncWith(peer("n1"));
      expect(text(c.node("n2").store.peek(key)?.value)).to.equal("newer");
      expect(c.node("n2").metrics.get("dist.version.conflicts")).to.equal(1);
      await c.node("n1").merkle.syncer.syncWith(peer("n2"));
      expect(text(c.node("n1").store.peek(key)?.value)).to.equal("newer");
    }),
  );

  describe("only keys both nodes own are compared (5 nodes, replication 3)", () => {
    async function fiveLoaded(seed: number): Promise<{ c: SimCluster; keys: string[] }> {
      const c = await cluster({ nodes: 5, seed, startLoops: false });
      const keys = Array.from({ length: 200 }, (_, i) => `five-${i}`);
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "all");
      await c.settle();
      return { c, keys };
    }

    it(
      "two nodes that hold different key sets but agree on the keys they share are in sync: clean, nothing pulled",
      withSeed(255, async () => {
        const { c, keys } = await fiveLoaded(255);
        const owners = (k: string) => c.node("n1").cache.owners(k).ids;
        expect(keys.filter((k) => owners(k).includes("n1") && !owners(k).includes("n2")).length, "keys only n1 of the two holds").to.be.greaterThan(0);
        expect(keys.filter((k) => owners(k).includes("n2") && !owners(k).includes("n1")).length, "keys only n2 of the two holds").to.be.greaterThan(0);
        expect(await c.node("n1").merkle.syncer.syncWith(peer("n2"))).to.deep.include({ pulled: 0, clean: true, failed: false });
        expect(await c.node("n2").merkle.syncer.syncWith(peer("n1"))).to.deep.include({ pulled: 0, clean: true, failed: false });
        const shared = keys.filter((k) => owners(k).includes("n1") && owners(k).includes("n2")).length;
        expect((await c.node("n1").merkle.answers.root("n2", 1, 0)).recordCount, "n1 summarizes for n2 only the keys both own").to.equal(shared);
      }),
    );

    it(
      "a record of a key the peer does not own is neither compared nor pulled; an owner that lacks it pulls it",
      withSeed(256, async () => {
        const { c } = await fiveLoaded(256);
        const notN2 = keyWhere(c, (o) => o.ids.includes("n1") && o.ids.includes("n3") && !o.ids.includes("n2"), "planted");
        c.node("n1").store.apply(rec(notN2, "n1-and-n3", BASE_VERSION + 9_000_000, "n1"));
        expect(await c.node("n2").merkle.syncer.syncWith(peer("n1"))).to.deep.include({ pulled: 0, clean: true, failed: false });
        expect(await c.node("n1").merkle.syncer.syncWith(peer("n2"))).to.deep.include({ pulled: 0, clean: true, failed: false });
        expect(c.node("n2").store.peek(notN2)).to.equal(undefined);
        expect(await c.node("n3").merkle.syncer.syncWith(peer("n1"))).to.deep.equal({ pulled: 1, clean: false, failed: false });
        expect(text(c.node("n3").store.peek(notN2)?.value)).to.equal("n1-and-n3");
      }),
    );

    it(
      "a stray copy held by a node that does not own the key (say, during a removal grace) is not offered to its owners",
      withSeed(257, async () => {
        const { c } = await fiveLoaded(257);
        const stray = keyWhere(c, (o) => !o.ids.includes("n1") && o.ids.includes("n2"), "stray");
        c.node("n1").store.apply(rec(stray, "stray", BASE_VERSION + 9_000_000, "n1"));
        expect(await c.node("n2").merkle.syncer.syncWith(peer("n1"))).to.deep.include({ pulled: 0, clean: true, failed: false });
        expect(c.node("n2").store.peek(stray)).to.equal(undefined);
      }),
    );
  });

  it(
    "a sync with an unreachable peer logs warn 'merkle sync fetch failed' and counts as divergent",
    withSeed(258, async () => {
      const c = await cluster({ nodes: 3, seed: 258, startLoops: false });
      c.chaos.isolate("n3");
      expect(await c.node("n1").merkle.syncer.syncWith(peer("n3"))).to.deep.equal({ pulled: 0, clean: false, failed: true });
      const warns = logRecords(c, "n1", LOG.merkleFetchFailed);
      expect(warns.map((w) => w.level)).to.deep.equal(["warn"]);
      expect(warns[0]!.fields).to.include({ peer: "n3" });
      expect(c.node("n1").metrics.get("dist.merkle.syncs")).to.equal(0);
    }),
  );
});
