// HintQueue and HintReplayLoop with a fake PeerTransport and a ManualClock: queueing per target,
// coalescing per (target, key), replay with any error keeping the hint, TTL expiry with its warn
// record, the per-node and byte caps with their counters, and the bytes gauge.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { PEER_BATCHING } from "../../../../src/core/limits.js";
import { expect } from "chai";
import { CacheError } from "../../../../src/core/errors.js";
import { counterTotal, decodeCounter, encodeCounter, incrementCounter, startCounter } from "../../../../src/core/counter-state.js";
import { HINTED_METRICS, MIGRATION_METRICS } from "../../../../src/cluster/hints/hint-metrics.js";
import { HintBytes, HintQueue, type HintLimits } from "../../../../src/cluster/hints/hint-queue.js";
import { HintReplayLoop } from "../../../../src/cluster/hints/hint-replay-loop.js";
import { LOG, recordingLogger, type RecordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { PeerRef, PeerTransport } from "../../../../src/transport/index.js";
import { flush, ManualClock } from "../../../helpers/manual-clock.js";
import { RecordingTransport } from "../../../helpers/recording-transport.js";

const A: PeerRef = { id: "a", address: "a:7946" };
const B: PeerRef = { id: "b", address: "b:7946" };

function rec(key: string, value: string, version: number, extra: Partial<VersionedRecord> = {}): VersionedRecord {
  return { key, value, version, origin: "self", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false, ...extra };
}
const tomb = (key: string, version: number) => rec(key, "", version, { tombstone: true });

interface Fixture {
  clock: ManualClock;
  metrics: Metrics;
  logger: RecordingLogger;
  q: HintQueue;
  t: RecordingTransport;
}

function fixture(limits: Partial<HintLimits> = {}): Fixture {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  const q = new HintQueue({ clock, metrics, logger, limits: { ttlMs: 30_000, maxPerNode: 10_000, maxBytes: 64 * 1024 * 1024, ...limits }, names: HINTED_METRICS });
  return { clock, metrics, logger, q, t: new RecordingTransport() };
}

describe("dist/hint-queue", () => {
  describe("queueing and replay", () => {
    it("queues per target and replays sets with Set and tombstones with Remove, then forgets them", async () => {
      const f = fixture();
      expect(f.q.add(A, rec("k1", "v1", 1))).to.equal(true);
      expect(f.q.add(A, tomb("k2", 2))).to.equal(true);
      expect(f.q.add(B, rec("k1", "v1", 1))).to.equal(true);
      expect(f.q.size("a")).to.equal(2);
      expect(f.q.size("b")).to.equal(1);
      expect(f.q.size()).to.equal(3);
      expect(f.metrics.get("dist.hinted.queued")).to.equal(3);
      await f.q.replay(f.t.asTransport(), "self");
      const calls = f.t.sent.map((c) => `${c.kind}->${c.to}:${c.records.map((r) => r.key).join(",")}`).sort();
      expect(calls).to.deep.equal(["remove->a:k2", "set->a:k1", "set->b:k1"]);
      expect(f.t.sent.every((c) => c.from === "self")).to.equal(true);
      expect(f.q.size()).to.equal(0);
      expect(f.metrics.get("dist.hinted.replayed")).to.equal(3);
      expect(f.metrics.get("dist.hinted.bytes")).to.equal(0);
    });

    it("coalesces per (target, key): a newer record replaces the queued one, an older or equal one is ignored", async () => {
      const f = fixture();
      f.q.add(A, rec("k", "v1", 1));
      f.q.add(A, rec("k", "v3", 3));
      f.q.add(A, rec("k", "v2", 2));
      f.q.add(A, rec("k", "v3-dup", 3));
      expect(f.q.size("a")).to.equal(1);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent).to.have.length(1);
      expect(f.t.sent[0]!.records.map((r) => r.value)).to.deep.equal(["v3"]);
      expect(f.metrics.get("dist.hinted.replayed")).to.equal(1);
    });

    it("two counter hints for one (target, key) merge: the newer stamp carries both copies' increments (the older hint's were dropped)", async () => {
      const f = fixture();
      const g = startCounter(0, 0);
      const older = encodeCounter(incrementCounter(g, "n2@b", 5));
      const newer = encodeCounter(incrementCounter(g, "n1@a", 1));
      f.q.add(A, rec("ctr", older, 10));
      f.q.add(A, rec("ctr", newer, 20));
      f.q.add(A, rec("ctr", older, 5));
      expect(f.q.size("a")).to.equal(1);
      await f.q.replay(f.t.asTransport(), "self");
      const sent = f.t.sent[0]!.records[0]!;
      expect([sent.version, sent.origin]).to.deep.equal([20, "self"]);
      expect(counterTotal(decodeCounter(sent.value)!), "5 from the older hint, 1 from the newer").to.equal(6);
      // A plain value still replaces a counter by the version gate alone.
      f.q.add(A, rec("ctr", newer, 30));
      f.q.add(A, rec("ctr", "plain", 40));
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent.at(-1)!.records[0]!.value).to.equal("plain");
    });

    it("a tombstone newer than a queued set replaces it (deletes are hinted like sets)", async () => {
      const f = fixture();
      f.q.add(A, rec("k", "v1", 1));
      f.q.add(A, tomb("k", 2));
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent.map((c) => c.kind)).to.deep.equal(["remove"]);
      expect(f.t.sent[0]!.records[0]).to.include({ key: "k", version: 2, tombstone: true });
    });

    for (const [label, err] of [
      ["UNAVAILABLE", new CacheError("UNAVAILABLE", "down")],
      ["INTERNAL", new CacheError("INTERNAL", "bug")],
      ["DRAINING", new CacheError("DRAINING", "draining")],
      ["a plain Error", new Error("socket hang up")],
    ] as const) {
      it(`any replay error keeps the hint (${label}); a later successful replay delivers it`, async () => {
        const f = fixture();
        f.q.add(A, rec("k", "v", 1));
        f.t.fail = () => err;
        await f.q.replay(f.t.asTransport(), "self");
        await f.q.replay(f.t.asTransport(), "self");
        expect(f.t.sent).to.have.length(2);
        expect(f.q.size("a")).to.equal(1);
        expect(f.metrics.get("dist.hinted.replayed")).to.equal(0);
        f.t.fail = () => undefined;
        await f.q.replay(f.t.asTransport(), "self");
        expect(f.q.size("a")).to.equal(0);
        expect(f.metrics.get("dist.hinted.replayed")).to.equal(1);
      });
    }

    it("a failing Remove keeps the tombstones even when the Set of the same replay succeeded", async () => {
      const f = fixture();
      f.q.add(A, rec("s", "v", 1));
      f.q.add(A, tomb("t", 2));
      f.t.fail = (c) => (c.kind === "remove" ? new CacheError("UNAVAILABLE", "flaky") : undefined);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.q.size("a"), "the tombstone hint is kept").to.be.at.least(1);
      f.t.fail = () => undefined;
      f.t.sent.length = 0;
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.q.size("a")).to.equal(0);
      expect(f.t.sent.some((c) => c.kind === "remove" && c.records[0]!.key === "t")).to.equal(true);
    });

    it("replayFailed: false before any replay, true after a failed call or a refused hint, false again once a replay is delivered", async () => {
      const f = fixture();
      f.q.add(A, rec("k", "v", 1));
      f.q.add(B, rec("k", "v", 1));
      expect([f.q.replayFailed("a"), f.q.replayFailed("b"), f.q.replayFailed("nobody")]).to.deep.equal([false, false, false]);
      f.t.fail = (c) => (c.to === "a" ? new CacheError("UNAVAILABLE", "down") : undefined);
      await f.q.replay(f.t.asTransport(), "self");
      expect([f.q.replayFailed("a"), f.q.replayFailed("b")], "a's call failed, b's was delivered").to.deep.equal([true, false]);
      f.q.add(A, rec("k2", "v", 2));
      const refusing = { set: async (_to: PeerRef, _from: string, recs: readonly VersionedRecord[]) => recs.map(() => ({ kind: "refused" as const })) };
      f.t.fail = () => undefined;
      await f.q.replay(refusing as unknown as PeerTransport, "self");
      expect(f.q.replayFailed("a"), "the target refused the hints").to.equal(true);
      expect(f.q.size("a"), "refused hints are kept").to.equal(2);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.q.size("a")).to.equal(0);
      expect(f.q.replayFailed("a"), "delivered").to.equal(false);
    });

    it("a newer hint queued while the older one is being replayed is kept and replayed next", async () => {
      const f = fixture();
      f.q.add(A, rec("k", "old", 1));
      f.t.hold = true;
      const replay = f.q.replay(f.t.asTransport(), "self");
      await flush();
      f.q.add(A, rec("k", "new", 2));
      f.t.hold = false;
      f.t.release();
      await replay;
      expect(f.q.size("a")).to.equal(1);
      expect(f.metrics.get("dist.hinted.replayed"), "the replaced hint is not counted").to.equal(0);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent.map((c) => c.records[0]!.value)).to.deep.equal(["old", "new"]);
      expect(f.q.size("a")).to.equal(0);
      expect(f.metrics.get("dist.hinted.replayed")).to.equal(1);
    });

    it("one replay call at a time per target: a second replay while one is under way sends nothing more", async () => {
      const f = fixture();
      f.q.add(A, rec("k", "v", 1));
      f.t.hold = true;
      const first = f.q.replay(f.t.asTransport(), "self");
      await flush();
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent).to.have.length(1);
      f.t.release();
      await first;
      expect(f.q.size("a")).to.equal(0);
    });

    it(`replays at most ${PEER_BATCHING.hintReplay.items} hints per target per call`, async () => {
      const f = fixture();
      for (let i = 0; i < PEER_BATCHING.hintReplay.items + 10; i++) f.q.add(A, rec(`k${i}`, "v", 1));
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent.map((c) => c.records.length)).to.deep.equal([PEER_BATCHING.hintReplay.items]);
      expect(f.q.size("a")).to.equal(10);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.q.size("a")).to.equal(0);
    });
  });

  describe("TTL expiry", () => {
    it("drops hints older than the TTL, counts dist.hinted.expired and warns 'hint dropped after replay error' when replays had failed", async () => {
      const f = fixture({ ttlMs: 1_000 });
      f.q.add(A, rec("k1", "v", 1));
      f.q.add(A, rec("k2", "v", 1));
      f.t.fail = () => new CacheError("UNAVAILABLE", "down");
      await f.q.replay(f.t.asTransport(), "self");
      f.clock.advance(999);
      expect(f.q.expire()).to.equal(0);
      expect(f.q.size("a")).to.equal(2);
      f.clock.advance(1);
      expect(f.q.expire()).to.equal(2);
      expect(f.q.size("a")).to.equal(0);
      expect(f.metrics.get("dist.hinted.expired")).to.equal(2);
      expect(f.metrics.get("dist.hinted.bytes")).to.equal(0);
      const warns = f.logger.records.filter((r) => r.message === LOG.hintDropped);
      expect(warns).to.have.length(1);
      expect(warns[0]!.level).to.equal("warn");
      expect(warns[0]!.fields).to.include({ peer: "a", hints: 2 });
    });

    it("hints that expire without a failed replay are counted but not reported as dropped after replay error", () => {
      const f = fixture({ ttlMs: 1_000 });
      f.q.add(B, rec("k", "v", 1));
      f.clock.advance(1_000);
      expect(f.q.expire()).to.equal(1);
      expect(f.metrics.get("dist.hinted.expired")).to.equal(1);
      expect(f.logger.records.filter((r) => r.message === LOG.hintDropped)).to.deep.equal([]);
    });

    it("the TTL counts from when the newest record for the key was queued", () => {
      const f = fixture({ ttlMs: 1_000 });
      f.q.add(A, rec("k", "v1", 1));
      f.clock.advance(600);
      f.q.add(A, rec("k", "v2", 2));
      f.clock.advance(600);
      expect(f.q.expire()).to.equal(0);
      expect(f.q.size("a")).to.equal(1);
    });
  });

  describe("a hint's deadline (a migrated copy's: never sent after it)", () => {
    const migrations = () => {
      const f = fixture({ ttlMs: 30_000 });
      const q = new HintQueue({ clock: f.clock, metrics: f.metrics, logger: f.logger, limits: { ttlMs: 30_000, maxPerNode: 10_000, maxBytes: 1 << 26 }, names: MIGRATION_METRICS });
      return { ...f, q };
    };

    it("a replay at or after the deadline drops the hint unsent (dist.migration.expired), well within its TTL; one before it sends it", async () => {
      const f = migrations();
      f.q.add(A, rec("late", "v", 1), 1_000);
      f.q.add(A, rec("open", "v", 1));
      f.q.add(B, rec("due", "v", 1), 2_000);
      f.clock.advance(1_000);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent.flatMap((c) => c.records.map((r) => `${c.to}:${r.key}`)).sort()).to.deep.equal(["a:open", "b:due"]);
      expect(f.metrics.get("dist.migration.expired")).to.equal(1);
      expect(f.metrics.get("dist.migration.replayed")).to.equal(2);
      expect(f.q.size()).to.equal(0);
    });

    it("a hint past its deadline is dropped while the node drains too (the loop holds the TTL only)", async () => {
      const f = migrations();
      const loop = new HintReplayLoop({ queues: [f.q], transport: f.t.asTransport(), selfId: "self", timers: f.clock, intervalMs: 200, logger: f.logger, holdExpiry: () => true });
      f.q.add(A, rec("late", "v", 1), 500);
      f.clock.advance(60_000);
      f.q.add(A, rec("old", "v", 1));
      f.clock.advance(60_000);
      await loop.runReplayTick();
      expect(f.t.sent.flatMap((c) => c.records.map((r) => r.key)), "past its TTL, held while draining: sent; past its deadline: not").to.deep.equal(["old"]);
      expect(f.metrics.get("dist.migration.expired")).to.equal(1);
    });

    it("the hint keeps the earliest deadline its key was queued with, through a newer record and through an ignored older one", async () => {
      const f = migrations();
      f.q.add(A, rec("k", "v1", 1), 1_000);
      f.q.add(A, rec("k", "v2", 2));
      f.q.add(A, rec("j", "v2", 2));
      f.q.add(A, rec("j", "v1", 1), 1_000);
      f.clock.advance(1_000);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent).to.deep.equal([]);
      expect(f.metrics.get("dist.migration.expired")).to.equal(2);
    });

    it("peek (the drain's hand-off) leaves out hints due within the TTL: the receiver would keep them for a TTL of its own", () => {
      const f = migrations();
      f.q.add(A, rec("soon", "v", 1), 29_999);
      f.q.add(A, rec("later", "v", 1), 30_001);
      f.q.add(A, rec("open", "v", 1));
      expect(f.q.peek("a", 10, 1 << 20).map((r) => r.key)).to.deep.equal(["later", "open"]);
      f.clock.advance(2);
      expect(f.q.peek("a", 10, 1 << 20).map((r) => r.key)).to.deep.equal(["open"]);
      expect(f.q.size("a"), "peek removes nothing").to.equal(3);
    });
  });

  describe("caps and the bytes gauge", () => {
    it("the per-node cap drops new hints for a full target (dist.hinted.dropped) but not for other targets, nor newer versions of queued keys", () => {
      const f = fixture({ maxPerNode: 2 });
      expect(f.q.add(A, rec("k1", "v", 1))).to.equal(true);
      expect(f.q.add(A, rec("k2", "v", 1))).to.equal(true);
      expect(f.q.add(A, rec("k3", "v", 1))).to.equal(false);
      expect(f.metrics.get("dist.hinted.dropped")).to.equal(1);
      expect(f.q.add(B, rec("k3", "v", 1)), "another target has its own cap").to.equal(true);
      expect(f.q.add(A, rec("k1", "v-newer", 2)), "coalescing is not a new hint").to.equal(true);
      expect(f.q.size("a")).to.equal(2);
      expect(f.metrics.get("dist.hinted.dropped")).to.equal(1);
      expect(f.metrics.get("dist.hinted.global_dropped")).to.equal(0);
    });

    it("the byte cap covers all targets together (dist.hinted.global_dropped) and the gauge follows additions, replacements, replays and expiry", async () => {
      const probe = fixture();
      probe.q.add(A, rec("k1", "x".repeat(100), 1));
      const one = probe.q.bytes;
      expect(one).to.be.greaterThan(100);
      expect(probe.metrics.get("dist.hinted.bytes")).to.equal(one);

      const f = fixture({ maxBytes: 2 * one, ttlMs: 1_000 });
      expect(f.q.add(A, rec("k1", "x".repeat(100), 1))).to.equal(true);
      expect(f.q.add(B, rec("k2", "x".repeat(100), 1))).to.equal(true);
      expect(f.metrics.get("dist.hinted.bytes")).to.equal(2 * one);
      expect(f.q.add(B, rec("k3", "x".repeat(100), 1))).to.equal(false);
      expect(f.q.add(A, rec("k4", "", 1)), "even a small hint past the cap").to.equal(false);
      expect(f.metrics.get("dist.hinted.global_dropped")).to.equal(2);
      expect(f.metrics.get("dist.hinted.dropped")).to.equal(0);
      // A replacement of the same size fits; a larger one would not.
      expect(f.q.add(A, rec("k1", "y".repeat(100), 2))).to.equal(true);
      expect(f.q.add(A, rec("k1", "z".repeat(101), 3))).to.equal(false);
      expect(f.metrics.get("dist.hinted.global_dropped")).to.equal(3);
      expect(f.metrics.get("dist.hinted.bytes")).to.equal(2 * one);
      f.t.fail = (c) => (c.to === "b" ? new CacheError("UNAVAILABLE", "down") : undefined);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.metrics.get("dist.hinted.bytes")).to.equal(one);
      expect(f.q.bytes).to.equal(one);
      f.clock.advance(1_000);
      f.q.expire();
      expect(f.metrics.get("dist.hinted.bytes")).to.equal(0);
      expect(f.q.add(A, rec("k3", "x".repeat(100), 4)), "room again after the queue drained").to.equal(true);
    });

    it("a replacement that does not fit keeps the older queued hint", async () => {
      const probe = fixture();
      probe.q.add(A, rec("k", "small", 1));
      const f = fixture({ maxBytes: probe.q.bytes + 100 });
      expect(f.q.add(A, rec("k", "small", 1))).to.equal(true);
      expect(f.q.add(A, rec("k", "x".repeat(500), 2))).to.equal(false);
      await f.q.replay(f.t.asTransport(), "self");
      expect(f.t.sent[0]!.records[0]!.value).to.equal("small");
    });
  });

  describe("what the byte cap holds", () => {
    it("hints filled up to the byte cap hold no more heap than the cap (the count left out about 240 bytes of bookkeeping per hint: 3.3 times the cap)", () => {
      setFlagsFromString("--expose-gc");
      const gc = runInNewContext("gc") as () => void;
      const maxBytes = 16 * 2 ** 20;
      const f = fixture({ maxBytes });
      gc();
      const before = process.memoryUsage().heapUsed;
      let added = 0;
      for (let t = 0; added === t * 10_000; t++) {
        const peer = { id: `n${t}`, address: `10.0.0.1:${7000 + t}` };
        for (let i = 0; i < 10_000 && f.q.add(peer, rec(`k${t}-${i}`, Buffer.alloc(16, 97 + (i % 26)).toString("latin1"), 1_000 + i)); i++) added++;
      }
      gc();
      const held = process.memoryUsage().heapUsed - before;
      expect(f.q.size()).to.equal(added);
      expect(added).to.be.above(40_000);
      expect(held, `${added} hints, ${f.q.bytes} bytes counted`).to.be.at.most(maxBytes * 1.05);
    });

    it("the replica hint queue and the migration queue share one byte cap", () => {
      const probe = fixture();
      probe.q.add(A, rec("k1", "x".repeat(100), 1));
      const one = probe.q.bytes;
      const clock = new ManualClock();
      const metrics = new Metrics();
      const budget = new HintBytes(2 * one);
      const deps = { clock, metrics, logger: recordingLogger("debug"), limits: { ttlMs: 30_000, maxPerNode: 10_000, maxBytes: 2 * one }, budget };
      const hints = new HintQueue({ ...deps, names: HINTED_METRICS });
      const migrations = new HintQueue({ ...deps, names: MIGRATION_METRICS });
      expect(hints.add(A, rec("k1", "x".repeat(100), 1))).to.equal(true);
      expect(migrations.add(B, rec("k2", "x".repeat(100), 1))).to.equal(true);
      expect(hints.add(B, rec("k3", "x".repeat(100), 1)), "the cap is full with the migration's bytes").to.equal(false);
      expect(migrations.add(A, rec("k4", "x".repeat(100), 1))).to.equal(false);
      expect(metrics.get("dist.hinted.global_dropped")).to.equal(1);
      expect(metrics.get("dist.migration.dropped")).to.equal(1);
      expect([hints.bytes, migrations.bytes, budget.used]).to.deep.equal([one, one, 2 * one]);
      clock.advance(30_000);
      migrations.expire();
      expect(budget.used).to.equal(one);
      expect(hints.add(B, rec("k3", "x".repeat(100), 1)), "room again once the migration expired").to.equal(true);
    });

    it("a key counts two bytes per UTF-16 unit (a key outside Latin-1 is held as two-byte text)", () => {
      const f = fixture();
      f.q.add(A, rec("k1", "v", 1));
      const short = f.q.bytes;
      f.q.add(B, rec("k1\u00e9\u4e2d", "v", 1));
      expect(f.q.bytes - short).to.equal(short + 4);
    });
  });

  describe("HintReplayLoop", () => {
    it("start() logs 'hint replay loop started' and ticks every interval: expire, then replay", async () => {
      const f = fixture({ ttlMs: 1_000 });
      const loop = new HintReplayLoop({ queues: [f.q], transport: f.t.asTransport(), selfId: "self", timers: f.clock, intervalMs: 200, logger: f.logger, holdExpiry: () => false });
      loop.start();
      expect(f.logger.records.filter((r) => r.message === LOG.hintReplayLoopStarted)).to.have.length(1);
      f.q.add(A, rec("k", "v", 1));
      await f.clock.advanceAsync(199);
      expect(f.t.sent).to.have.length(0);
      await f.clock.advanceAsync(1);
      expect(f.t.sent).to.have.length(1);
      expect(f.q.size("a")).to.equal(0);
      loop.stop();
      f.q.add(A, rec("k2", "v", 1));
      await f.clock.advanceAsync(1_000);
      expect(f.t.sent, "no ticks after stop()").to.have.length(1);
    });

    it("runReplayTick expires hints past the TTL before replaying, so they are never sent", async () => {
      const f = fixture({ ttlMs: 1_000 });
      const loop = new HintReplayLoop({ queues: [f.q], transport: f.t.asTransport(), selfId: "self", timers: f.clock, intervalMs: 200, logger: f.logger, holdExpiry: () => false });
      f.q.add(A, rec("old", "v", 1));
      f.clock.advance(1_000);
      f.q.add(A, rec("fresh", "v", 1));
      await loop.runReplayTick();
      expect(f.t.sent.flatMap((c) => c.records.map((r) => r.key))).to.deep.equal(["fresh"]);
      expect(f.metrics.get("dist.hinted.expired")).to.equal(1);
      expect(f.metrics.get("dist.hinted.replayed")).to.equal(1);
    });
  });
});
