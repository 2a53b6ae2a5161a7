// Owners, the write path (forwarding, version stamping, fan-out, consistency levels, deletes)
// and promotion, over several real nodes on the in-memory network with a manual clock.
import { expect } from "chai";
import { fromBytes, fromUtf8, toBuffer } from "../../src/core/byte-string.js";
import type { ConsistencyLevel } from "../../src/config/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { expectCacheError, keyWhere, nonOwnersOf, ownersOf, storedEverywhere, text } from "./data-path-fixtures.js";

describe("sim/data path: owners and writes", () => {
  const cluster = simClusters();

  describe("owners", () => {
    it(
      "every node of a 5-node cluster computes the same owner list (3 distinct ids, primary first) for every key",
      withSeed(11, async () => {
        const c = await cluster({ nodes: 5, seed: 11 });
        for (let i = 0; i < 300; i++) {
          const key = `owner-${i}`;
          const lists = c.nodes.map((n) => n.node.cache.owners(key));
          const first = lists[0]!;
          expect(new Set(first.ids).size, key).to.equal(3);
          expect(first.primary, key).to.equal(first.ids[0]);
          for (const l of lists) expect(l.ids, key).to.deep.equal(first.ids);
        }
      }),
    );

    it(
      "with replication 3 on 3 nodes every node owns every key",
      withSeed(12, async () => {
        const c = await cluster({ nodes: 3, seed: 12 });
        for (let i = 0; i < 200; i++) {
          expect([...c.node("n2").cache.owners(`all-${i}`).ids].sort()).to.deep.equal(["n1", "n2", "n3"]);
        }
      }),
    );

    it(
      "with 5 nodes and replication 3 a non-owner keeps no copy after set, get (one, quorum, all) and remove through it",
      withSeed(13, async () => {
        const c = await cluster({ nodes: 5, seed: 13 });
        const key = keyWhere(c, () => true, "nocopy");
        const outsiders = nonOwnersOf(c, key);
        expect(outsiders).to.have.length(2);
        const [via, other] = outsiders as [string, string];
        const w = await c.node(via).cache.admitWrite().set(key, fromUtf8("value"), 0, "all");
        expect(w.owners.ids).to.not.include(via);
        for (const level of ["one", "quorum", "all"] as const) {
          const r = await c.node(via).cache.get(key, level);
          expect(text(r.item?.value), level).to.equal("value");
        }
        await c.settle();
        expect(c.node(via).store.peek(key), "non-owner after set+get").to.equal(undefined);
        expect(c.node(other).store.peek(key), "other non-owner").to.equal(undefined);
        await c.node(via).cache.admitWrite().remove(key, "all");
        await c.settle();
        expect(c.node(via).store.peek(key), "non-owner after remove").to.equal(undefined);
        for (const id of w.owners.ids) expect(c.node(id).store.peek(key)?.tombstone, id).to.equal(true);
      }),
    );
  });

  describe("forwarding, stamping and fan-out", () => {
    it(
      "a write through a non-primary is forwarded: the result carries the primary's version and origin = primary id",
      withSeed(21, async () => {
        const c = await cluster({ nodes: 3, seed: 21 });
        const key = keyWhere(c, (o) => o.primary === "n2", "fwd");
        const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("hello"), 0);
        expect(r.origin).to.equal("n2");
        expect(r.owners.primary).to.equal("n2");
        const atPrimary = c.node("n2").store.peek(key);
        expect(atPrimary?.version).to.equal(r.version);
        expect(atPrimary?.origin).to.equal("n2");
        expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(0);
      }),
    );

    it(
      "the primary stamps every write of a key: versions strictly increase and origin is the primary, whichever node the write entered",
      withSeed(22, async () => {
        const c = await cluster({ nodes: 3, seed: 22 });
        const key = keyWhere(c, (o) => o.primary === "n3", "stamp");
        const versions: number[] = [];
        for (const via of ["n1", "n2", "n3", "n1", "n2"]) {
          const r = await c.node(via).cache.admitWrite().set(key, fromUtf8(`from ${via}`), 0);
          expect(r.origin, via).to.equal("n3");
          versions.push(r.version);
        }
        for (let i = 1; i < versions.length; i++) expect(versions[i]).to.be.greaterThan(versions[i - 1]!);
        // Same millisecond: the hybrid clock's counter keeps them apart.
        expect(c.node("n3").store.peek(key)?.version).to.equal(versions[versions.length - 1]);
        await c.advance(5);
        const later = await c.node("n1").cache.admitWrite().set(key, fromUtf8("later"), 0);
        expect(later.version).to.be.greaterThan(versions[versions.length - 1]!);
      }),
    );

    it(
      "fan-out: every owner holds the same bytes (binary value), version and origin after a write through any node",
      withSeed(23, async () => {
        const c = await cluster({ nodes: 5, seed: 23 });
        const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        const key = keyWhere(c, () => true, "fan");
        const via = nonOwnersOf(c, key)[0]!;
        const r = await c.node(via).cache.admitWrite().set(key, fromBytes(bytes), 0, "one");
        await c.settle();
        for (const id of r.owners.ids) {
          const held = c.node(id).store.peek(key);
          expect(held, id).to.not.equal(undefined);
          expect(toBuffer(held!.value).equals(bytes), id).to.equal(true);
          expect(held!.version, id).to.equal(r.version);
          expect(held!.origin, id).to.equal(r.owners.primary);
        }
        for (const n of c.nodes) {
          const got = await n.node.cache.get(key);
          expect(toBuffer(got.item!.value).equals(bytes), n.id).to.equal(true);
        }
      }),
    );

    it(
      "a forwarded write returns the primary's real outcome: a non-owner gets QUORUM_FAILED when the primary cannot reach enough owners",
      withSeed(24, async () => {
        const c = await cluster({ nodes: 5, seed: 24, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n2", "fwdq");
        const { replicas } = ownersOf(c, key);
        const via = nonOwnersOf(c, key)[0]!;
        // The primary cannot reach its second replica; the writer (in no group) reaches everyone.
        c.chaos.partition(["n2"], [replicas[1]!]);
        const err = await expectCacheError(c.node(via).cache.admitWrite().set(key, fromUtf8("x"), 0, "all"), "QUORUM_FAILED");
        expect(err.status).to.equal(503);
        expect(c.node("n2").metrics.get("dist.write.quorum_failures")).to.equal(1);
        await c.settle();
        expect(c.node(via).store.peek(key)).to.equal(undefined);
      }),
    );
  });

  describe("consistency levels (3 nodes, replication 3: R = 3, QUORUM needs 2, ALL needs 3)", () => {
    const table: Array<[ConsistencyLevel, number, boolean]> = [
      ["one", 0, true],
      ["one", 1, true],
      ["one", 2, true],
      ["quorum", 0, false],
      ["quorum", 1, true],
      ["quorum", 2, true],
      ["all", 0, false],
      ["all", 1, false],
      ["all", 2, true],
    ];

    for (const [level, reachable, ok] of table) {
      it(
        `set at ${level} with ${reachable} of 2 replicas reachable ${ok ? "succeeds and hints the unreachable ones" : "fails with QUORUM_FAILED and counts dist.write.quorum_failures"}`,
        withSeed(30 + reachable, async () => {
          const c = await cluster({ nodes: 3, seed: 30 + reachable, startLoops: false });
          const key = keyWhere(c, (o) => o.primary === "n1", `lvl-${level}-${reachable}`);
          const { replicas } = ownersOf(c, key);
          const down = replicas.slice(reachable);
          const up = replicas.slice(0, reachable);
          for (const id of down) c.chaos.isolate(id);
          const p = c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, level);
          if (ok) {
            const r = await p;
            expect(r.origin).to.equal("n1");
            expect(r.applied).to.equal(true);
          } else {
            await expectCacheError(p, "QUORUM_FAILED");
          }
          await c.settle();
          expect(c.node("n1").metrics.get("dist.write.quorum_failures")).to.equal(ok ? 0 : 1);
          // Applied where it reached (the primary always), hinted where it did not.
          expect(text(c.node("n1").store.peek(key)?.value)).to.equal("v1");
          for (const id of up) expect(text(c.node(id).store.peek(key)?.value), id).to.equal("v1");
          for (const id of down) {
            expect(c.node(id).store.peek(key), id).to.equal(undefined);
            expect(c.node("n1").hints.size(id), `hints for ${id}`).to.equal(1);
          }
          for (const id of up) expect(c.node("n1").hints.size(id), `hints for ${id}`).to.equal(0);
        }),
      );
    }

    for (const [level, reachable, ok] of table) {
      it(
        `remove at ${level} with ${reachable} of 2 replicas reachable ${ok ? "succeeds, the tombstone replicates and is hinted" : "fails with QUORUM_FAILED"}`,
        withSeed(40 + reachable, async () => {
          const c = await cluster({ nodes: 3, seed: 40 + reachable, startLoops: false });
          const key = keyWhere(c, (o) => o.primary === "n1", `rm-${level}-${reachable}`);
          await c.node("n1").cache.admitWrite().set(key, fromUtf8("live"), 0, "all");
          const { replicas } = ownersOf(c, key);
          const down = replicas.slice(reachable);
          const up = replicas.slice(0, reachable);
          for (const id of down) c.chaos.isolate(id);
          const p = c.node("n1").cache.admitWrite().remove(key, level);
          if (ok) {
            const r = await p;
            expect(r.applied, "deleted").to.equal(true);
            expect(r.bytes).to.equal(4);
          } else {
            await expectCacheError(p, "QUORUM_FAILED");
          }
          await c.settle();
          expect(c.node("n1").metrics.get("dist.write.quorum_failures")).to.equal(ok ? 0 : 1);
          expect(c.node("n1").store.peek(key)?.tombstone).to.equal(true);
          for (const id of up) expect(c.node(id).store.peek(key)?.tombstone, id).to.equal(true);
          for (const id of down) {
            expect(text(c.node(id).store.peek(key)?.value), id).to.equal("live");
            expect(c.node("n1").hints.size(id), `tombstone hinted for ${id}`).to.equal(1);
          }
        }),
      );
    }

    it(
      "ONE answers right after the primary's local apply, before any replica has acknowledged",
      withSeed(35, async () => {
        const c = await cluster({ nodes: 3, seed: 35, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "one-fast");
        c.chaos.delayMs = 1_000;
        const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("quick"), 0, "one");
        expect(r.origin).to.equal("n1");
        // Replica pushes are delayed by a second of simulated time: nobody else has it yet.
        expect(storedEverywhere(c, key)).to.deep.equal({ n1: "quick", n2: undefined, n3: undefined });
        await c.advance(1_000);
        expect(storedEverywhere(c, key)).to.deep.equal({ n1: "quick", n2: "quick", n3: "quick" });
      }),
    );

    it(
      "QUORUM waits for a replica acknowledgement: it does not answer while every push is still in flight",
      withSeed(36, async () => {
        const c = await cluster({ nodes: 3, seed: 36, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "q-wait");
        c.chaos.delayMs = 1_000;
        let done = false;
        const p = c.node("n1").cache.admitWrite().set(key, fromUtf8("slow"), 0, "quorum").then((r) => {
          done = true;
          return r;
        });
        await c.advance(999);
        expect(done, "answered before any ack").to.equal(false);
        await c.advance(1);
        expect((await p).origin).to.equal("n1");
        expect(done).to.equal(true);
      }),
    );

    it(
      "R = min(replication, known nodes): on 2 nodes with replication 3, QUORUM needs both (fails with the peer isolated) and ALL succeeds with both",
      withSeed(37, async () => {
        const c = await cluster({ nodes: 2, seed: 37, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "r2");
        expect(c.node("n1").cache.owners(key).ids).to.have.length(2);
        await c.node("n1").cache.admitWrite().set(key, fromUtf8("both"), 0, "all");
        c.chaos.isolate("n2");
        const err = await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("alone"), 0, "quorum"), "QUORUM_FAILED");
        expect(err.details).to.include({ required: 2, acknowledged: 1 });
      }),
    );

    it(
      "a one-node cluster accepts QUORUM and ALL writes (R = 1)",
      withSeed(38, async () => {
        const c = await cluster({ nodes: 1, seed: 38, startLoops: false });
        const r = await c.node("n1").cache.admitWrite().set("solo", fromUtf8("s"), 0, "all");
        expect(r.origin).to.equal("n1");
        await c.node("n1").cache.admitWrite().set("solo", fromUtf8("t"), 0, "quorum");
        expect(text((await c.node("n1").cache.get("solo", "all")).item?.value)).to.equal("t");
      }),
    );

    it(
      "pruned nodes still count in R: with n3 pruned, QUORUM (2) succeeds on the 2 remaining owners and ALL (3) cannot be met",
      withSeed(39, async () => {
        const c = await cluster({ nodes: 3, seed: 39, startLoops: false });
        for (const id of ["n1", "n2"]) {
          c.node(id).members.markSuspect("n3");
          c.node(id).members.prune("n3");
        }
        c.crash("n3");
        const key = keyWhere(c, (o) => o.primary === "n1", "pruned");
        expect(c.node("n1").cache.owners(key).ids).to.deep.equal(["n1", "n2"]);
        await c.node("n1").cache.admitWrite().set(key, fromUtf8("q"), 0, "quorum");
        expect(text(c.node("n2").store.peek(key)?.value)).to.equal("q");
        const err = await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("a"), 0, "all"), "QUORUM_FAILED");
        expect(err.details).to.include({ required: 3, acknowledged: 2 });
      }),
    );
  });

  describe("promotion", () => {
    it(
      "with the primary crashed, a set through a replica owner is applied by it, fanned out, counted, and the old primary is hinted",
      withSeed(51, async () => {
        const c = await cluster({ nodes: 3, seed: 51, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n3", "promo");
        const { replicas } = ownersOf(c, key);
        const [via, other] = replicas as [string, string];
        await c.node(via).cache.admitWrite().set(key, fromUtf8("before"), 0, "all");
        c.crash("n3");
        const r = await c.node(via).cache.admitWrite().set(key, fromUtf8("promoted"), 0, "quorum");
        expect(r.origin).to.equal(via);
        await c.settle();
        expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(1);
        expect(text(c.node(via).store.peek(key)?.value)).to.equal("promoted");
        expect(text(c.node(other).store.peek(key)?.value)).to.equal("promoted");
        expect(c.node(other).store.peek(key)?.origin).to.equal(via);
        expect(c.node(via).hints.size("n3")).to.be.greaterThan(0);
        expect(text(c.node("n3").store.peek(key)?.value), "old primary unchanged while down").to.equal("before");
        // The old primary converges once it is back and the hint replays.
        c.revive("n3");
        await c.node(via).loops.hints.runReplayTick();
        expect(text(c.node("n3").store.peek(key)?.value)).to.equal("promoted");
        expect(c.node("n3").store.peek(key)?.version).to.equal(r.version);
        expect(c.node(via).hints.size("n3")).to.equal(0);
      }),
    );

    it(
      "with the primary crashed, a remove through a replica owner is promoted: tombstone on the replicas, counted, the old primary hinted",
      withSeed(52, async () => {
        const c = await cluster({ nodes: 3, seed: 52, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n2", "promo-rm");
        const { replicas } = ownersOf(c, key);
        const [via, other] = replicas as [string, string];
        await c.node(via).cache.admitWrite().set(key, fromUtf8("doomed"), 0, "all");
        c.crash("n2");
        const r = await c.node(via).cache.admitWrite().remove(key, "quorum");
        expect(r.applied).to.equal(true);
        expect(r.origin).to.equal(via);
        await c.settle();
        expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(1);
        expect(c.node(via).store.peek(key)?.tombstone).to.equal(true);
        expect(c.node(other).store.peek(key)?.tombstone).to.equal(true);
        expect(c.node(via).hints.size("n2")).to.equal(1);
        c.revive("n2");
        await c.node(via).loops.hints.runReplayTick();
        expect(c.node("n2").store.peek(key)?.tombstone).to.equal(true);
        expect((await c.node("n2").cache.get(key)).item).to.equal(undefined);
      }),
    );

    it(
      "with the primary crashed, a write through a NON-owner returns UNAVAILABLE and is applied nowhere",
      withSeed(53, async () => {
        const c = await cluster({ nodes: 5, seed: 53, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "promo-no");
        const via = nonOwnersOf(c, key)[0]!;
        c.crash("n1");
        await expectCacheError(c.node(via).cache.admitWrite().set(key, fromUtf8("nope"), 0, "one"), "UNAVAILABLE");
        await expectCacheError(c.node(via).cache.admitWrite().remove(key, "one"), "UNAVAILABLE");
        await c.settle();
        expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(0);
        for (const n of c.nodes) expect(n.node.store.peek(key), n.id).to.equal(undefined);
      }),
    );

    it(
      "SPEC 'fails with ANY error': a primary's QUORUM_FAILED after its own apply still makes the replica owner take a plain set over (only increments are kept from it)",
      withSeed(57, async () => {
        const c = await cluster({ nodes: 3, seed: 57 });
        const key = keyWhere(c, (o) => o.primary === "n1", "promo-after-apply");
        // n1 applies, reaches n2 but not n3, and answers QUORUM_FAILED at ALL; n2 reaches both.
        c.chaos.partition(["n1"], ["n3"]);
        const r = await c.node("n2").cache.admitWrite().set(key, fromUtf8("taken over"), 0, "all");
        expect(r.origin).to.equal("n2");
        expect(c.node("n2").metrics.get("dist.write.forward_promotion")).to.equal(1);
        for (const id of ["n2", "n3"]) expect(text(c.node(id).store.peek(key)?.value), id).to.equal("taken over");
      }),
    );

    it(
      "a draining primary (forward answered DRAINING) makes the replica owner promote itself",
      withSeed(54, async () => {
        const c = await cluster({ nodes: 3, seed: 54, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "promo-drain");
        const via = ownersOf(c, key).replicas[0]!;
        c.node("n1").drain("test");
        const r = await c.node(via).cache.admitWrite().set(key, fromUtf8("while draining"), 0, "quorum");
        expect(r.origin).to.equal(via);
        expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(1);
      }),
    );

    it(
      "SPEC 'if the local node is not an owner, the error is returned': a non-owner whose forward a draining primary answers DRAINING (its gossip not here yet) returns DRAINING naming the primary in details.node, and keeps nothing",
      withSeed(56, async () => {
        const c = await cluster({ nodes: 4, seed: 56, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "drain-past");
        const via = nonOwnersOf(c, key)[0]!;
        c.node("n1").drain("test");
        const err = await expectCacheError(c.node(via).cache.admitWrite().set(key, fromUtf8("v"), 0, "quorum"), "DRAINING");
        // The answer names the node that drains, not the one the client called.
        expect(err.details).to.deep.equal({ node: "n1" });
        expect(err.message).to.contain("n1");
        for (const n of c.nodes) expect(n.node.store.peek(key), n.id).to.equal(undefined);
      }),
    );

    it(
      "a non-owner relays the primary's error with its details: a QUORUM_FAILED from the primary says what it reached",
      withSeed(58, async () => {
        const c = await cluster({ nodes: 4, seed: 58, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "relay-details");
        const owners = ownersOf(c, key);
        const via = nonOwnersOf(c, key)[0]!;
        c.chaos.partition(["n1"], owners.replicas);
        const err = await expectCacheError(c.node(via).cache.admitWrite().set(key, fromUtf8("v"), 0, "all"), "QUORUM_FAILED");
        expect(err.details).to.deep.equal({ consistency: "all", acknowledged: 1, required: 3 });
      }),
    );

    it(
      "SPEC 'forwarding fails with ANY error': a forward answered QUORUM_FAILED by the primary makes the replica owner promote itself",
      withSeed(55, async () => {
        const c = await cluster({ nodes: 3, seed: 55, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n2" && o.ids[1] === "n1", "promo-q");
        // n2 (primary) cannot reach n3; n1 reaches both. The primary's ALL fails; n1 promoted
        // would reach every owner.
        c.chaos.partition(["n2"], ["n3"]);
        const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("any error"), 0, "all");
        expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(1);
        expect(r.origin).to.equal("n1");
      }),
    );
  });
});
