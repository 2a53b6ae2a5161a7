// Hinted handoff across real nodes: failed replica writes and deletes are queued per target,
// replayed on the loop's tick once the target is back, coalesced per (target, key), expired
// after SERVICE_HINT_TTL and bounded by the per-node and byte caps.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { LOG } from "../../src/log/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { keysWhere, keyWhere, logRecords, ownersOf, text } from "./data-path-fixtures.js";

describe("sim/data path: hints", () => {
  const cluster = simClusters();

  it(
    "a write missed by a crashed replica is delivered after it revives, on the first replay tick past SERVICE_HINT_REPLAY",
    withSeed(61, async () => {
      const c = await cluster({ nodes: 3, seed: 61, env: { SERVICE_HINT_REPLAY: "200ms" } });
      const key = keyWhere(c, (o) => o.primary === "n1", "replay");
      const target = ownersOf(c, key).replicas[1]!;
      c.crash(target);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("missed"), 0, "quorum");
      await c.settle();
      expect(c.node("n1").hints.size(target)).to.equal(1);
      expect(c.node("n1").metrics.get("dist.hinted.queued")).to.equal(1);
      await c.advance(1_000);
      expect(c.node("n1").hints.size(target), "kept while the target is down").to.equal(1);
      c.revive(target);
      await c.advance(199);
      expect(c.node(target).store.peek(key), "not before the tick").to.equal(undefined);
      await c.advance(1);
      expect(text(c.node(target).store.peek(key)?.value)).to.equal("missed");
      expect(c.node("n1").hints.size(target)).to.equal(0);
      expect(c.node("n1").metrics.get("dist.hinted.replayed")).to.equal(1);
    }),
  );

  it(
    "hints coalesce per (target, key): three writes while the replica is down leave one hint, and the replay delivers the newest",
    withSeed(62, async () => {
      const c = await cluster({ nodes: 3, seed: 62 });
      const key = keyWhere(c, (o) => o.primary === "n1", "coalesce");
      const target = ownersOf(c, key).replicas[0]!;
      c.crash(target);
      let last = 0;
      for (const v of ["a", "b", "c"]) {
        last = (await c.node("n1").cache.admitWrite().set(key, fromUtf8(v), 0, "one")).version;
        await c.settle();
      }
      expect(c.node("n1").hints.size(target)).to.equal(1);
      c.revive(target);
      await c.advance(200);
      const held = c.node(target).store.peek(key);
      expect(text(held?.value)).to.equal("c");
      expect(held?.version).to.equal(last);
      expect(c.node("n1").metrics.get("dist.hinted.replayed")).to.equal(1);
    }),
  );

  it(
    "deletes are hinted like sets: a tombstone replaces the pending set hint and reaches the replica after it revives",
    withSeed(63, async () => {
      const c = await cluster({ nodes: 3, seed: 63 });
      const key = keyWhere(c, (o) => o.primary === "n2", "hint-rm");
      const target = ownersOf(c, key).replicas[0]!;
      await c.node("n2").cache.admitWrite().set(key, fromUtf8("old"), 0, "all");
      c.crash(target);
      await c.node("n2").cache.admitWrite().set(key, fromUtf8("newer"), 0, "one");
      await c.node("n2").cache.admitWrite().remove(key, "quorum");
      await c.settle();
      expect(c.node("n2").hints.size(target)).to.equal(1);
      expect(text(c.node(target).store.peek(key)?.value)).to.equal("old");
      c.revive(target);
      await c.advance(200);
      expect(c.node(target).store.peek(key)?.tombstone).to.equal(true);
      expect((await c.node(target).cache.get(key)).item).to.equal(undefined);
    }),
  );

  it(
    "any replay error keeps the hint: ten failed ticks later it is still queued and is delivered once the target is reachable",
    withSeed(64, async () => {
      const c = await cluster({ nodes: 3, seed: 64 });
      const key = keyWhere(c, (o) => o.primary === "n1", "keep");
      const target = ownersOf(c, key).replicas[0]!;
      c.chaos.isolate(target);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("persistent"), 0, "quorum");
      await c.advance(2_000);
      expect(c.node("n1").hints.size(target)).to.equal(1);
      expect(c.node("n1").metrics.get("dist.hinted.replayed")).to.equal(0);
      c.chaos.heal();
      await c.advance(200);
      expect(text(c.node(target).store.peek(key)?.value)).to.equal("persistent");
      expect(c.node("n1").hints.size(target)).to.equal(0);
    }),
  );

  it(
    "a hint past SERVICE_HINT_TTL while the target is down is dropped: dist.hinted.expired, a warn 'hint dropped after replay error', never delivered",
    withSeed(65, async () => {
      const c = await cluster({ nodes: 3, seed: 65, env: { SERVICE_HINT_TTL: "1s", SERVICE_HINT_REPLAY: "200ms" } });
      const key = keyWhere(c, (o) => o.primary === "n1", "ttl");
      const target = ownersOf(c, key).replicas[0]!;
      c.crash(target);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("expiring"), 0, "quorum");
      await c.settle();
      await c.advance(800);
      expect(c.node("n1").hints.size(target), "still within the TTL").to.equal(1);
      expect(c.node("n1").metrics.get("dist.hinted.expired")).to.equal(0);
      await c.advance(400);
      expect(c.node("n1").hints.size(target)).to.equal(0);
      expect(c.node("n1").metrics.get("dist.hinted.expired")).to.equal(1);
      expect(c.node("n1").metrics.get("dist.hinted.bytes")).to.equal(0);
      const warns = logRecords(c, "n1", LOG.hintDropped);
      expect(warns).to.have.length(1);
      expect(warns[0]!.level).to.equal("warn");
      expect(warns[0]!.fields).to.include({ peer: target });
      c.revive(target);
      await c.advance(1_000);
      expect(c.node("n1").metrics.get("dist.hinted.replayed"), "an expired hint is never replayed").to.equal(0);
      // The target may still get the value, from anti-entropy (its catch-up pull), never from the hint.
      if (c.node(target).store.peek(key) !== undefined) expect(c.node(target).metrics.get("dist.merkle.keys_pulled")).to.be.greaterThan(0);
    }),
  );

  it(
    "SERVICE_HINT_MAX_PER_NODE caps each target: past 2 hints new ones are dropped with dist.hinted.dropped, and only the kept ones replay",
    withSeed(66, async () => {
      const c = await cluster({ nodes: 3, seed: 66, env: { SERVICE_HINT_MAX_PER_NODE: "2" }, startLoops: false });
      const keys = keysWhere(c, 3, (o) => o.primary === "n1", "cap");
      c.crash("n2");
      c.crash("n3");
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "one");
      await c.settle();
      expect(c.node("n1").hints.size("n2")).to.equal(2);
      expect(c.node("n1").hints.size("n3")).to.equal(2);
      expect(c.node("n1").metrics.get("dist.hinted.dropped")).to.equal(2);
      expect(c.node("n1").metrics.get("dist.hinted.queued")).to.equal(4);
      // A newer hint for a key already queued replaces it and is not dropped by the cap.
      await c.node("n1").cache.admitWrite().set(keys[0]!, fromUtf8("newest"), 0, "one");
      await c.settle();
      expect(c.node("n1").hints.size("n2")).to.equal(2);
      expect(c.node("n1").metrics.get("dist.hinted.dropped")).to.equal(2);
      c.revive("n2");
      await c.node("n1").loops.hints.runReplayTick();
      expect(text(c.node("n2").store.peek(keys[0]!)?.value)).to.equal("newest");
      expect(text(c.node("n2").store.peek(keys[1]!)?.value)).to.equal(`v-${keys[1]}`);
      expect(c.node("n2").store.peek(keys[2]!), "the dropped hint never arrives").to.equal(undefined);
    }),
  );

  it(
    "SERVICE_HINT_MAX_BYTES caps all targets together: a hint that would exceed it is dropped with dist.hinted.global_dropped; dist.hinted.bytes follows the queue",
    withSeed(67, async () => {
      const value = fromUtf8("x".repeat(1_000));
      const c = await cluster({ nodes: 3, seed: 67, env: { SERVICE_HINT_MAX_BYTES: "2800" }, startLoops: false });
      const [k1, k2] = keysWhere(c, 2, (o) => o.primary === "n1", "bytes");
      c.crash("n2");
      c.crash("n3");
      await c.node("n1").cache.admitWrite().set(k1!, value, 0, "one");
      await c.settle();
      // One hint per target for k1: two hints of a 1000-byte value (and 320 bytes of bookkeeping each), under 2800 together.
      expect(c.node("n1").hints.size()).to.equal(2);
      const twoHints = c.node("n1").metrics.get("dist.hinted.bytes");
      expect(twoHints).to.equal(c.node("n1").hints.bytes);
      expect(twoHints).to.be.within(2_500, 2_800);
      await c.node("n1").cache.admitWrite().set(k2!, value, 0, "one");
      await c.settle();
      expect(c.node("n1").hints.size()).to.equal(2);
      expect(c.node("n1").metrics.get("dist.hinted.global_dropped")).to.equal(2);
      expect(c.node("n1").metrics.get("dist.hinted.dropped")).to.equal(0);
      expect(c.node("n1").metrics.get("dist.hinted.bytes")).to.equal(twoHints);
      c.revive("n2");
      await c.node("n1").loops.hints.runReplayTick();
      expect(c.node("n1").hints.size()).to.equal(1);
      expect(c.node("n1").metrics.get("dist.hinted.bytes")).to.equal(twoHints / 2);
      c.revive("n3");
      await c.node("n1").loops.hints.runReplayTick();
      expect(c.node("n1").metrics.get("dist.hinted.bytes")).to.equal(0);
      expect(c.node("n3").store.peek(k2!), "the dropped hint never arrives").to.equal(undefined);
      expect(text(c.node("n3").store.peek(k1!)?.value)).to.have.length(1_000);
    }),
  );

  it(
    "a replica's stale set hint replayed after a newer delete does not resurrect the key (hint from another coordinator)",
    withSeed(68, async () => {
      const c = await cluster({ nodes: 3, seed: 68, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n1", "stale-hint");
      const [r1, r2] = ownersOf(c, key).replicas as [string, string];
      // n1 writes while r2 is away: n1 holds a set hint for r2.
      c.chaos.isolate(r2);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("stale"), 0, "quorum");
      await c.settle();
      expect(c.node("n1").hints.size(r2)).to.equal(1);
      // n1 goes away too; the delete is promoted on r1, which hints n1 and r2.
      c.chaos.heal();
      c.chaos.isolate("n1");
      c.chaos.partition([r1], [r2]);
      await c.node(r1).cache.admitWrite().remove(key, "one");
      await c.settle();
      expect(c.node(r1).hints.size(r2)).to.equal(1);
      // r2 comes back and gets the tombstone first, then n1's stale set hint.
      c.chaos.heal();
      c.chaos.isolate("n1");
      await c.node(r1).loops.hints.runReplayTick();
      expect(c.node(r2).store.peek(key)?.tombstone).to.equal(true);
      c.chaos.heal();
      await c.node("n1").loops.hints.runReplayTick();
      expect(c.node(r2).store.peek(key)?.tombstone, "stale hint ignored").to.equal(true);
      expect(c.node(r2).metrics.get("dist.version.conflicts")).to.equal(1);
      await c.node(r1).loops.hints.runReplayTick();
      for (const n of c.nodes) expect((await n.node.cache.get(key)).item, n.id).to.equal(undefined);
    }),
  );
});
