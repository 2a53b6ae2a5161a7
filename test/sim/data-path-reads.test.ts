// Reads: ONE local on an owner, first reachable owner elsewhere; QUORUM/ALL choose the newest
// (version, origin) among the answers and repair stale owners, at once or batched per
// (peer, key) with SERVICE_READ_REPAIR_BATCH_SIZE / SERVICE_READ_REPAIR_INTERVAL.
import { expect } from "chai";
import { fromBytes, fromUtf8, toBuffer } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { BASE_VERSION, expectCacheError, keysWhere, keyWhere, nonOwnersOf, ownersOf, rec, storedEverywhere, text, tomb } from "./data-path-fixtures.js";

describe("sim/data path: reads and read repair", () => {
  const cluster = simClusters();

  const V = BASE_VERSION;

  /** Puts (version, value) records straight into owners' stores, as pushes from peers would. */
  function seed(c: SimCluster, key: string, byNode: Record<string, [number, string, string?]>): void {
    for (const [id, [version, value, origin]] of Object.entries(byNode)) {
      expect(c.node(id).endpoint.applySet("seed", [rec(key, value, version, origin ?? "n9")]).map((o) => o.kind), `seed ${id}`).to.deep.equal(["applied"]);
    }
  }

  describe("consistency ONE", () => {
    it(
      "ONE on an owner reads its local copy without consulting the others (it returns its own older value)",
      withSeed(91, async () => {
        const c = await cluster({ nodes: 3, seed: 91, startLoops: false });
        seed(c, "local", { n1: [V + 1, "old at n1"], n2: [V + 2, "new"], n3: [V + 2, "new"] });
        const r = await c.node("n1").cache.get("local", "one");
        expect(text(r.item?.value)).to.equal("old at n1");
        expect(r.item?.version).to.equal(V + 1);
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(0);
        expect(text(c.node("n1").store.peek("local")?.value), "ONE does not repair").to.equal("old at n1");
      }),
    );

    it(
      "ONE on an owner serves locally even when every other node is unreachable",
      withSeed(92, async () => {
        const c = await cluster({ nodes: 3, seed: 92, startLoops: false });
        seed(c, "island", { n2: [V, "mine"] });
        c.chaos.isolate("n2");
        expect(text((await c.node("n2").cache.get("island", "one")).item?.value)).to.equal("mine");
      }),
    );

    it(
      "ONE on a non-owner reads the first owner; with the first owner crashed it is served by the next one",
      withSeed(93, async () => {
        const c = await cluster({ nodes: 5, seed: 93, startLoops: false });
        const key = keyWhere(c, () => true, "first");
        const { ids } = ownersOf(c, key);
        const via = nonOwnersOf(c, key)[0]!;
        seed(c, key, { [ids[0]!]: [V + 1, "from first"], [ids[1]!]: [V + 2, "from second"], [ids[2]!]: [V + 3, "from third"] });
        expect(text((await c.node(via).cache.get(key, "one")).item?.value)).to.equal("from first");
        c.crash(ids[0]!);
        expect(text((await c.node(via).cache.get(key, "one")).item?.value)).to.equal("from second");
        c.crash(ids[1]!);
        expect(text((await c.node(via).cache.get(key, "one")).item?.value)).to.equal("from third");
        expect(c.node(via).store.peek(key), "the non-owner keeps no copy").to.equal(undefined);
      }),
    );

    it(
      "ONE on a non-owner with every owner unreachable fails with UNAVAILABLE",
      withSeed(94, async () => {
        const c = await cluster({ nodes: 5, seed: 94, startLoops: false });
        const key = keyWhere(c, () => true, "dark");
        for (const id of ownersOf(c, key).ids) c.crash(id);
        const err = await expectCacheError(c.node(nonOwnersOf(c, key)[0]!).cache.get(key, "one"), "UNAVAILABLE");
        expect(err.status).to.equal(503);
      }),
    );

    it(
      "a non-owner serves the same bytes as the writer (binary value, and expiry kept), and absent keys read as undefined",
      withSeed(95, async () => {
        const c = await cluster({ nodes: 5, seed: 95, startLoops: false });
        const key = keyWhere(c, () => true, "bin");
        const via = nonOwnersOf(c, key)[1]!;
        const bytes = Buffer.from([0, 255, 1, 254, 0x80, 0x7f, 0xc3, 0x28]);
        const w = await c.node(via).cache.admitWrite().set(key, fromBytes(bytes), 60_000, "all");
        for (const n of c.nodes) {
          const r = await n.node.cache.get(key, "one");
          expect(toBuffer(r.item!.value).equals(bytes), n.id).to.equal(true);
          expect(r.item!.version, n.id).to.equal(w.version);
          expect(r.item!.expiresAtMs, n.id).to.equal(c.clock.nowMs() + 60_000);
        }
        expect((await c.node(via).cache.get("absent-key", "one")).item).to.equal(undefined);
        await c.advance(60_000);
        expect((await c.node(via).cache.get(key, "one")).item, "expired everywhere").to.equal(undefined);
      }),
    );
  });

  describe("consistency QUORUM and ALL", () => {
    for (const level of ["quorum", "all"] as const) {
      it(
        `${level.toUpperCase()} returns the newest (version, origin) on every node when one owner holds an older copy`,
        withSeed(101, async () => {
          const c = await cluster({ nodes: 3, seed: 101, startLoops: false });
          for (const stale of ["n1", "n2", "n3"]) {
            const key = `newest-${level}-${stale}`;
            const fresh = ["n1", "n2", "n3"].filter((id) => id !== stale);
            seed(c, key, { [stale]: [V + 1, "old"], [fresh[0]!]: [V + 2, "new"], [fresh[1]!]: [V + 2, "new"] });
            for (const n of c.nodes) {
              expect(text((await n.node.cache.get(key, level)).item?.value), `${key} via ${n.id}`).to.equal("new");
            }
          }
        }),
      );
    }

    it(
      "ALL breaks a version tie by the smaller origin",
      withSeed(102, async () => {
        const c = await cluster({ nodes: 3, seed: 102, startLoops: false });
        seed(c, "tie", { n1: [V, "by n3", "n3"], n2: [V, "by n2", "n2"], n3: [V, "by n4", "n4"] });
        const r = await c.node("n1").cache.get("tie", "all");
        expect(text(r.item?.value)).to.equal("by n2");
        expect(r.item?.origin).to.equal("n2");
        await c.settle();
        expect(storedEverywhere(c, "tie")).to.deep.equal({ n1: "by n2", n2: "by n2", n3: "by n2" });
      }),
    );

    it(
      "read repair: after an ALL read the stale owner and an owner with no copy hold the newest record, counted in dist.read_repair",
      withSeed(103, async () => {
        const c = await cluster({ nodes: 5, seed: 103, startLoops: false });
        const key = keyWhere(c, () => true, "repair");
        const [a, b, d] = ownersOf(c, key).ids as [string, string, string];
        const via = nonOwnersOf(c, key)[0]!;
        seed(c, key, { [a]: [V + 5, "newest"], [b]: [V + 1, "stale"] });
        const r = await c.node(via).cache.get(key, "all");
        expect(text(r.item?.value)).to.equal("newest");
        await c.settle();
        for (const id of [a, b, d]) {
          expect(text(c.node(id).store.peek(key)?.value), id).to.equal("newest");
          expect(c.node(id).store.peek(key)?.version, id).to.equal(V + 5);
        }
        expect(c.node(via).metrics.get("dist.read_repair")).to.equal(2);
        expect(c.node(via).store.peek(key), "the reading non-owner keeps no copy").to.equal(undefined);
        // A second read finds nothing stale.
        await c.node(via).cache.get(key, "all");
        await c.settle();
        expect(c.node(via).metrics.get("dist.read_repair")).to.equal(2);
      }),
    );

    it(
      "read repair after a QUORUM read also reaches the owner whose answer came after the quorum was met",
      withSeed(104, async () => {
        const c = await cluster({ nodes: 3, seed: 104, startLoops: false });
        for (const stale of ["n2", "n3"]) {
          const key = `late-${stale}`;
          const other = stale === "n2" ? "n3" : "n2";
          seed(c, key, { n1: [V + 2, "new"], [other]: [V + 2, "new"], [stale]: [V + 1, "old"] });
          expect(text((await c.node("n1").cache.get(key, "quorum")).item?.value)).to.equal("new");
          await c.settle();
          expect(text(c.node(stale).store.peek(key)?.value), key).to.equal("new");
        }
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(2);
      }),
    );

    it(
      "a stale local copy of the reading owner is repaired too",
      withSeed(105, async () => {
        const c = await cluster({ nodes: 3, seed: 105, startLoops: false });
        seed(c, "self", { n1: [V + 1, "old"], n2: [V + 2, "new"], n3: [V + 2, "new"] });
        expect(text((await c.node("n1").cache.get("self", "all")).item?.value)).to.equal("new");
        expect(text(c.node("n1").store.peek("self")?.value)).to.equal("new");
        expect(text((await c.node("n1").cache.get("self", "one")).item?.value)).to.equal("new");
      }),
    );

    it(
      "a newest tombstone wins the read (absent) and is repaired onto the owner that still holds the value",
      withSeed(106, async () => {
        const c = await cluster({ nodes: 3, seed: 106, startLoops: false });
        seed(c, "dead", { n1: [V + 1, "zombie"], n2: [V + 1, "zombie"], n3: [V + 1, "zombie"] });
        c.node("n1").endpoint.applyRemove("x", [tomb("dead", V + 2, "n1")]);
        c.node("n2").endpoint.applyRemove("x", [tomb("dead", V + 2, "n1")]);
        expect((await c.node("n2").cache.get("dead", "all")).item).to.equal(undefined);
        await c.settle();
        expect(c.node("n3").store.peek("dead")?.tombstone).to.equal(true);
        expect((await c.node("n3").cache.get("dead", "one")).item).to.equal(undefined);
      }),
    );

    it(
      "ALL fails with QUORUM_FAILED when an owner does not answer; QUORUM still answers with 2 of 3",
      withSeed(107, async () => {
        const c = await cluster({ nodes: 3, seed: 107, startLoops: false });
        seed(c, "gap", { n1: [V, "v"], n2: [V, "v"], n3: [V, "v"] });
        c.crash("n3");
        const err = await expectCacheError(c.node("n1").cache.get("gap", "all"), "QUORUM_FAILED");
        expect(err.details).to.include({ answered: 2, required: 3 });
        expect(text((await c.node("n1").cache.get("gap", "quorum")).item?.value)).to.equal("v");
        c.crash("n2");
        await expectCacheError(c.node("n1").cache.get("gap", "quorum"), "QUORUM_FAILED");
      }),
    );
  });

  describe("batched read repair (SERVICE_READ_REPAIR_BATCH_SIZE=4, SERVICE_READ_REPAIR_INTERVAL=100ms)", () => {
    const env = { SERVICE_READ_REPAIR_BATCH_SIZE: "4", SERVICE_READ_REPAIR_INTERVAL: "100ms" };

    /** Keys all three owners hold, n3 with an older copy. */
    function staleOnN3(c: SimCluster, count: number, prefix: string): string[] {
      const keys = keysWhere(c, count, () => true, prefix);
      for (const k of keys) seed(c, k, { n1: [V + 2, `new ${k}`], n2: [V + 2, `new ${k}`], n3: [V + 1, `old ${k}`] });
      return keys;
    }

    it(
      "repairs wait in the per-peer queue (dist.read_repair.batched) and are sent when the interval elapses",
      withSeed(111, async () => {
        const c = await cluster({ nodes: 3, seed: 111, env });
        const keys = staleOnN3(c, 3, "batch-int");
        for (const k of keys) expect(text((await c.node("n1").cache.get(k, "all")).item?.value)).to.equal(`new ${k}`);
        await c.settle();
        expect(c.node("n1").metrics.get("dist.read_repair.batched")).to.equal(3);
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(0);
        for (const k of keys) expect(text(c.node("n3").store.peek(k)?.value), `${k} before the flush`).to.equal(`old ${k}`);
        await c.advance(100);
        for (const k of keys) expect(text(c.node("n3").store.peek(k)?.value), `${k} after the flush`).to.equal(`new ${k}`);
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(3);
      }),
    );

    it(
      "a peer's batch is sent as soon as it reaches 4 repairs, without waiting for the interval",
      withSeed(112, async () => {
        const c = await cluster({ nodes: 3, seed: 112, env });
        const keys = staleOnN3(c, 4, "batch-size");
        for (const k of keys.slice(0, 3)) await c.node("n1").cache.get(k, "all");
        await c.settle();
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(0);
        await c.node("n1").cache.get(keys[3]!, "all");
        await c.settle();
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(4);
        for (const k of keys) expect(text(c.node("n3").store.peek(k)?.value), k).to.equal(`new ${k}`);
      }),
    );

    it(
      "repairs of the same (peer, key) coalesce keeping the newest (dist.read_repair.coalesced): one record is sent, the newest",
      withSeed(113, async () => {
        const c = await cluster({ nodes: 3, seed: 113, env });
        const [key] = staleOnN3(c, 1, "batch-co");
        await c.node("n1").cache.get(key!, "all");
        await c.settle();
        // A newer write reaches n1 and n2 only; the next read queues a newer repair for n3.
        seed(c, key!, { n1: [V + 3, "newest"], n2: [V + 3, "newest"] });
        expect(text((await c.node("n1").cache.get(key!, "all")).item?.value)).to.equal("newest");
        await c.settle();
        expect(c.node("n1").metrics.get("dist.read_repair.batched")).to.equal(1);
        expect(c.node("n1").metrics.get("dist.read_repair.coalesced")).to.equal(1);
        await c.advance(100);
        expect(text(c.node("n3").store.peek(key!)?.value)).to.equal("newest");
        expect(c.node("n3").store.peek(key!)?.version).to.equal(V + 3);
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(1);
      }),
    );

    it(
      "a clean stop (node.stop()) sends the queued repairs without the interval elapsing",
      withSeed(114, async () => {
        const c = await cluster({ nodes: 3, seed: 114, env });
        const keys = staleOnN3(c, 2, "batch-stop");
        for (const k of keys) await c.node("n1").cache.get(k, "all");
        await c.settle();
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(0);
        await c.node("n1").stop();
        for (const k of keys) expect(text(c.node("n3").store.peek(k)?.value), k).to.equal(`new ${k}`);
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(2);
      }),
    );

    it(
      "without batching (the default) each repair is sent at once",
      withSeed(115, async () => {
        const c = await cluster({ nodes: 3, seed: 115 });
        const keys = staleOnN3(c, 2, "unbatched");
        for (const k of keys) await c.node("n1").cache.get(k, "all");
        await c.settle();
        expect(c.node("n1").metrics.get("dist.read_repair")).to.equal(2);
        expect(c.node("n1").metrics.get("dist.read_repair.batched")).to.equal(0);
        for (const k of keys) expect(text(c.node("n3").store.peek(k)?.value), k).to.equal(`new ${k}`);
      }),
    );
  });

  it(
    "writes with fromUtf8 text read back as the same text through any node",
    withSeed(116, async () => {
      const c = await cluster({ nodes: 3, seed: 116, startLoops: false });
      await c.node("n2").cache.admitWrite().set("greeting", fromUtf8("héllo wörld ✓"), 0, "all");
      for (const n of c.nodes) expect(text((await n.node.cache.get("greeting")).item?.value), n.id).to.equal("héllo wörld ✓");
    }),
  );
});
