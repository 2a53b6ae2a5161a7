// Counters over several real nodes on the in-memory network with a manual clock: concurrent
// increments on a stable cluster are distinct and consecutive, a primary crash loses no
// acknowledged increment, increments on both sides of a partition sum after the heal, and
// If-Match makes an increment a conditional write (one 200 per ETag, 412 changes nothing).
import { expect } from "chai";
import { CacheError } from "../../src/core/errors.js";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { counterTotal, decodeCounter } from "../../src/core/counter-state.js";
import { etagOf } from "../../src/core/etag.js";
import type { WriteCondition } from "../../src/transport/index.js";
import type { VersionedRecord } from "../../src/store/index.js";
import type { WriteResult } from "../../src/cluster/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { expectCacheError, keyWhere, loseForwardAnswers, ownersOf, text } from "./data-path-fixtures.js";

type Outcome = WriteResult | CacheError;

/** Advances the clock until every promise settled (forward timeouts, promotions). */
async function drive(c: SimCluster, ps: Array<Promise<WriteResult>>): Promise<Outcome[]> {
  let done = false;
  const all = Promise.all(ps.map((p) => p.catch((e: unknown) => (e instanceof CacheError ? e : Promise.reject(e))))).finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await c.advance(100);
  return all;
}

function incr(c: SimCluster, via: string, key: string, delta = 1, consistency?: "one" | "quorum", condition?: WriteCondition) {
  return c.node(via).cache.admitWrite().incr(key, { delta, initial: 0, ttlMs: 0, ...(condition !== undefined ? { condition } : {}) }, consistency);
}

function tagOf(r: WriteResult): string {
  return etagOf(r.version, r.origin);
}

function heldValue(c: SimCluster, id: string, key: string): number | undefined {
  const rec = c.node(id).store.peek(key);
  const state = rec === undefined ? undefined : decodeCounter(rec.value);
  return state === undefined ? undefined : counterTotal(state);
}

/** An increment at any consistency (the helper above takes ONE and QUORUM). */
function incrAt(c: SimCluster, via: string, key: string, delta: number, consistency: "one" | "quorum" | "all") {
  return c.node(via).cache.admitWrite().incr(key, { delta, initial: 0, ttlMs: 0 }, consistency);
}

describe("sim/counters", () => {
  const cluster = simClusters();

  it(
    "a restarted primary adds to a new writer slot (a new boot id), beside its slot from before the restart",
    withSeed(907, async () => {
      const c = await cluster({ nodes: 3, seed: 907 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "restart-ctr");
      expect((await incrAt(c, "n1", key, 5, "quorum")).counterValue).to.equal(5);
      await c.settle();
      await c.restart("n1");
      await c.advance(20_000);
      const r = await incrAt(c, "n1", key, 1, "quorum");
      expect(r.counterValue).to.equal(6);
      await c.settle();
      const rec = c.node("n2").store.peek(key);
      const slots = Object.keys(decodeCounter(rec!.value)!.slots).filter((w) => w.startsWith("n1@"));
      expect(slots, "one slot per process of n1").to.have.length(2);
    }),
  );

  it(
    "30 concurrent +1 through every node of a stable cluster return 30 distinct consecutive values; every owner holds 30 and GET answers \"30\"",
    withSeed(171, async () => {
      const c = await cluster({ nodes: 3, seed: 171 });
      const key = keyWhere(c, () => true, "ctr");
      const outcomes = await drive(c, Array.from({ length: 30 }, (_, i) => incr(c, c.nodes[i % 3]!.id, key)));
      const values = outcomes.map((o) => (o instanceof CacheError ? o.message : o.counterValue)).sort((x, y) => Number(x) - Number(y));
      expect(values).to.deep.equal(Array.from({ length: 30 }, (_, i) => i + 1));
      await c.advance(1000);
      for (const id of ownersOf(c, key).ids) expect(heldValue(c, id, key), id).to.equal(30);
      const read = await c.node("n2").cache.get(key);
      expect(read.item?.value).to.equal("30");
    }),
  );

  it(
    "the primary crashes mid-run: replicas promote into their own slots; after it comes back acked <= final <= acked + indeterminate on every owner",
    withSeed(172, async () => {
      const c = await cluster({ nodes: 3, seed: 172 });
      const key = keyWhere(c, () => true, "ctr");
      const { primary, replicas } = ownersOf(c, key);
      const first = await drive(c, Array.from({ length: 10 }, () => incr(c, replicas[0]!, key)));
      c.crash(primary);
      const second = await drive(c, Array.from({ length: 10 }, (_, i) => incr(c, replicas[i % replicas.length]!, key, 1, "one")));
      const all = [...first, ...second];
      const acked = all.filter((o) => !(o instanceof CacheError)).length;
      const indeterminate = all.length - acked;
      expect(acked).to.be.greaterThan(10);
      c.revive(primary);
      await c.advance(120_000);
      for (const id of [primary, ...replicas]) {
        const v = heldValue(c, id, key) ?? 0;
        expect(v, id).to.be.within(acked, acked + indeterminate);
      }
      const finals = new Set([primary, ...replicas].map((id) => heldValue(c, id, key)));
      expect(finals.size, "owners converge").to.equal(1);
    }),
  );

  it(
    "a partition with increments on both sides: equal values may be returned, and after the heal every owner holds the sum",
    withSeed(173, async () => {
      const c = await cluster({ nodes: 3, seed: 173 });
      const key = keyWhere(c, (o) => o.ids.length === 3, "ctr");
      await drive(c, [incr(c, "n1", key, 100)]);
      await c.advance(1000);
      c.chaos.partition(["n1"], ["n2", "n3"]);
      const left = await drive(c, Array.from({ length: 5 }, () => incr(c, "n1", key, 1, "one")));
      const right = await drive(c, Array.from({ length: 7 }, () => incr(c, "n2", key, 1, "one")));
      expect([...left, ...right].filter((o) => o instanceof CacheError)).to.deep.equal([]);
      c.chaos.heal();
      await c.advance(120_000);
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), id).to.equal(112);
      expect((await c.node("n3").cache.get(key, "quorum")).item?.value).to.equal("112");
    }),
  );

  it(
    "If-Match on incr: 12 concurrent increments conditioned on one ETag through every node give exactly one 200; the rest are 412 with the winner's ETag and add nothing",
    withSeed(174, async () => {
      const c = await cluster({ nodes: 4, seed: 174 });
      const key = keyWhere(c, () => true, "cas-ctr");
      let current = (await drive(c, [incr(c, "n1", key, 5)]))[0] as WriteResult;
      for (let round = 1; round <= 3; round++) {
        const outcomes = await drive(c, Array.from({ length: 12 }, (_, i) => incr(c, c.nodes[i % 4]!.id, key, 1, undefined, { ifMatch: [tagOf(current)] })));
        const wins = outcomes.filter((o): o is WriteResult => !(o instanceof CacheError));
        expect(wins, `round ${round}`).to.have.length(1);
        expect(wins[0]!.counterValue).to.equal(5 + round);
        for (const e of outcomes.filter((o): o is CacheError => o instanceof CacheError)) {
          expect(e.code, e.message).to.equal("PRECONDITION_FAILED");
          expect(e.details).to.deep.equal({ current_etag: tagOf(wins[0]!) });
        }
        current = wins[0]!;
      }
      await c.advance(1000);
      for (const id of ownersOf(c, key).ids) expect(heldValue(c, id, key), id).to.equal(8);
    }),
  );

  it(
    "If-Match on incr: a stale ETag or * on an absent key is 412 and changes nothing; consistency one is 400; with the primary unreachable it is 503, never promoted",
    withSeed(175, async () => {
      const c = await cluster({ nodes: 3, seed: 175 });
      const key = keyWhere(c, (o) => o.primary === "n3", "cond-ctr");
      const first = (await drive(c, [incr(c, "n1", key, 1, "quorum")]))[0] as WriteResult;
      const second = (await drive(c, [incr(c, "n2", key, 1, "quorum", { ifMatch: "*" })]))[0] as WriteResult;
      expect(second.counterValue).to.equal(2);
      const stale = await expectCacheError(incr(c, "n1", key, 1, undefined, { ifMatch: [tagOf(first)] }), "PRECONDITION_FAILED");
      expect(stale.details).to.deep.equal({ current_etag: tagOf(second) });
      const absent = keyWhere(c, () => true, "absent-ctr");
      expect((await expectCacheError(incr(c, "n2", absent, 1, undefined, { ifMatch: "*" }), "PRECONDITION_FAILED")).details).to.deep.equal({});
      await expectCacheError(incr(c, "n1", key, 1, "one", { ifMatch: [tagOf(second)] }), "BAD_REQUEST");
      await c.advance(1000);
      for (const id of ownersOf(c, key).ids) expect(heldValue(c, id, key), id).to.equal(2);
      expect(c.node(ownersOf(c, absent).primary).store.peek(absent)).to.equal(undefined);
      c.crash("n3");
      const outcomes = await drive(c, [incr(c, "n1", key, 1, undefined, { ifMatch: [tagOf(second)] })]);
      expect((outcomes[0] as CacheError).code).to.equal("UNAVAILABLE");
      expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(0);
      expect(heldValue(c, "n1", key)).to.equal(2);
    }),
  );

  it(
    "bytes in the touch and DELETE answers of a counter are the size of its value as GET shows it (its decimal text), not of its encoded state",
    withSeed(176, async () => {
      const c = await cluster({ nodes: 3, seed: 176 });
      for (const via of ["n1", "n2", "n3"]) {
        const key = keyWhere(c, (o) => o.primary === via, `bytes-ctr-${via}`);
        await drive(c, [incr(c, via, key, 12_345)]);
        expect((await c.node(via).cache.get(key)).item?.value).to.equal("12345");
        for (const through of ["n1", "n2", "n3"]) {
          const t = await c.node(through).cache.admitWrite().touch(key, { ttlMs: 60_000 });
          expect(t.bytes, `touch through ${through}, primary ${via}`).to.equal(5);
        }
        const d = await c.node(via === "n1" ? "n2" : "n1").cache.admitWrite().remove(key);
        expect(d.bytes, `delete, primary ${via}`).to.equal(5);
      }
    }),
  );

  it(
    "a replica that forwarded an increment does not take it over when the primary answered 5xx after adding it (the primary's QUORUM_FAILED): one request is added once",
    withSeed(177, async () => {
      const c = await cluster({ nodes: 3, seed: 177 });
      const key = keyWhere(c, (o) => o.primary === "n1", "once-ctr");
      // n1 cannot reach n3, n2 reaches both: n1 adds the increment, pushes to n2, misses n3 and
      // answers QUORUM_FAILED at ALL; had n2 then coordinated it again into its own slot (it
      // reaches every owner), the counter would hold the increment twice.
      c.chaos.partition(["n1"], ["n3"]);
      const [outcome] = await drive(c, [c.node("n2").cache.admitWrite().incr(key, { delta: 5, initial: 0, ttlMs: 0 }, "all")]);
      expect((outcome as CacheError).code, "the primary's answer goes back: indeterminate").to.equal("QUORUM_FAILED");
      expect(c.node("n2").metrics.get("dist.write.forward_promotion")).to.equal(0);
      c.chaos.heal();
      await c.advance(20_000);
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), id).to.equal(5);
    }),
  );

  it(
    "a draining primary refuses an increment before adding it (DRAINING): the replica that forwarded it still takes it over",
    withSeed(178, async () => {
      const c = await cluster({ nodes: 3, seed: 178, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n1", "drain-ctr");
      const via = ownersOf(c, key).replicas[0]!;
      c.node("n1").drain("test");
      const r = await c.node(via).cache.admitWrite().incr(key, { delta: 4, initial: 0, ttlMs: 0 }, "quorum");
      expect(r.counterValue).to.equal(4);
      expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(1);
      expect(heldValue(c, "n1", key), "nothing was added on the draining primary").to.equal(undefined);
    }),
  );
  // Found by a review of the takeover rules (2026-11-30): each failed before its fix.
  it(
    "a replica that takes an increment over reads the owners first: added to its own copy, which missed an acknowledged PUT, it vanished when the PUT's generation met it",
    withSeed(901, async () => {
      const c = await cluster({ nodes: 3, seed: 901 });
      // Past the settle window; hints and anti-entropy then run only when this test says.
      await c.advance(60_000);
      for (const n of c.nodes) {
        n.node.loops.hints.stop();
        n.node.loops.antiEntropy.stop();
      }
      await c.advance(120_000);
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "stale-gen");
      expect(ownersOf(c, key).replicas.sort()).to.deep.equal(["n2", "n3"]);
      const first = await incrAt(c, "n1", key, 100, "quorum");
      expect(first.counterValue).to.equal(100);
      await c.settle();
      // PUT 500 acknowledged by n1 and n3; n2 misses it (its copy is a hint on n1).
      c.chaos.partition(["n2"], ["n1", "n3"]);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("500"), 0, "quorum");
      await c.settle();
      // n2 cannot reach its primary: it takes +1 over on the counter it holds (generation 0),
      // without reading the owners (it holds a copy and its ring is settled).
      c.chaos.partition(["n1"], ["n2"]);
      await c.advance(1000);
      const viaReplica = await incrAt(c, "n2", key, 1, "quorum");
      expect(c.node("n2").metrics.get("dist.write.forward_promotion")).to.equal(1);
      await c.settle();
      await c.advance(1000);
      const viaPrimary = await incrAt(c, "n1", key, 10, "quorum");
      expect(viaPrimary.counterValue).to.equal(510);
      await c.settle();
      c.chaos.heal();
      for (let round = 0; round < 3; round++) for (const n of c.nodes) await n.node.loops.hints.runReplayTick();
      await c.advance(1000);
      // Acknowledged in this order: PUT 500, +1, +10. The +1 answered 101 (the PUT ignored) and
      // then vanished: the PUT's generation (n1's +10) replaces generation 0 whole.
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), `${id} (the +1 answered ${viaReplica.counterValue})`).to.equal(511);
    }),
  );

  it(
    "a primary that refuses an increment before adding anything (its clock is off: 'send the write to another node') lets the replica take it over, as it does a PUT",
    withSeed(902, async () => {
      const c = await cluster({ nodes: 3, seed: 902 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "skew-ctr");
      const plainKey = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "skew-put");
      // n2 and n3 answer probes with clocks 5 s ahead: n1 finds itself 5 s behind the median and
      // refuses to stamp writes (clock-offsets.ts); n2 and n3 each see a median of 0.
      for (const id of ["n2", "n3"]) {
        const ep = c.node(id).endpoint;
        const health = ep.health.bind(ep);
        (ep as { health: typeof ep.health }).health = () => {
          const h = health();
          return h?.unixMs === undefined ? h : { ...h, unixMs: h.unixMs + 5_000 };
        };
      }
      await c.advance(15_000);
      expect(c.node("n1").metrics.get("dist.clock.offset_ns")).to.be.below(-4e9);
      const put = await c.node("n2").cache.admitWrite().set(plainKey, fromUtf8("v"), 0, "quorum");
      expect(put.origin, "a PUT is taken over by the replica").to.equal("n2");
      const [outcome] = await drive(c, [incrAt(c, "n2", key, 3, "quorum")]);
      expect(outcome instanceof CacheError ? `${outcome.code}: ${outcome.message}` : (outcome as WriteResult).counterValue, "the replica takes the increment over").to.equal(3);
      await c.advance(2_000);
      for (const id of ownersOf(c, key).ids) expect(heldValue(c, id, key), `${id}: added once`).to.equal(3);
    }),
  );

  it(
    "a primary on the minority side refuses before adding anything (QUORUM_FAILED naming the visible nodes): the replica that sees a majority takes the increment over",
    withSeed(903, async () => {
      const c = await cluster({ nodes: 5, seed: 903, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3 && o.ids.includes("n2"), "mino-ctr");
      const other = ownersOf(c, key).replicas.find((id) => id !== "n2")!;
      // n1 has lost n3, n4 and n5 (it sees 2 of 5); n2 reaches everyone.
      c.chaos.partition(["n1"], ["n3", "n4", "n5"]);
      for (const id of ["n3", "n4", "n5"]) {
        c.node("n1").members.markSuspect(id);
        c.node("n1").members.prune(id);
      }
      expect(c.node("n1").members.notDeadCount()).to.equal(2);
      const [outcome] = await drive(c, [incrAt(c, "n2", key, 7, "quorum")]);
      expect(outcome instanceof CacheError ? `${outcome.code}: ${outcome.message}` : (outcome as WriteResult).counterValue, "n2 and the third owner form a quorum").to.equal(7);
      for (const id of ["n2", other]) expect(heldValue(c, id, key), `${id}: added once`).to.equal(7);
      expect(heldValue(c, "n1", key) ?? 7, "n1 holds at most the replica's push").to.equal(7);
    }),
  );

  it(
    "Idempotency-Key: a retry after the primary's QUORUM_FAILED (it had added the increment) pushes the counter again instead of adding again, and answers the first value",
    withSeed(904, async () => {
      const c = await cluster({ nodes: 3, seed: 904 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "idem-ctr");
      c.chaos.partition(["n1"], ["n3"]);
      const [first] = await drive(c, [c.node("n1").cache.admitWrite().incr(key, { delta: 5, initial: 0, ttlMs: 0, idempotencyKey: "req-1" }, "all")]);
      expect((first as CacheError).code).to.equal("QUORUM_FAILED");
      c.chaos.heal();
      await c.advance(20_000);
      const [retry] = await drive(c, [c.node("n1").cache.admitWrite().incr(key, { delta: 5, initial: 0, ttlMs: 0, idempotencyKey: "req-1" }, "all")]);
      expect(retry).to.not.be.instanceOf(CacheError);
      expect((retry as WriteResult).counterValue, "the value the first call's add gave").to.equal(5);
      await c.advance(5_000);
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), `${id}: one Idempotency-Key, added once`).to.equal(5);
    }),
  );

  it(
    "an increment forward whose answer is lost after the primary added it (a timeout, a reset connection) is not taken over: the client gets 503 and the counter holds it once",
    withSeed(905, async () => {
      const c = await cluster({ nodes: 3, seed: 905 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "lost-answer-ctr");
      const via = ownersOf(c, key).replicas[0]!;
      // n1 adds +5 and pushes it; its answer never reaches the replica that forwarded it.
      const restore = loseForwardAnswers(c, "n1");
      const [outcome] = await drive(c, [incrAt(c, via, key, 5, "quorum")]);
      expect(outcome, "indeterminate: the forward may have been applied").to.be.instanceOf(CacheError);
      expect((outcome as CacheError).status).to.equal(503);
      expect((outcome as CacheError).message).to.include("may or may not have been applied");
      expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(0);
      restore();
      await c.advance(20_000);
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), `${id}: added once`).to.equal(5);
    }),
  );

  it(
    "a plain write whose forward answer is lost the same way is still taken over (SPEC: a replica promotes itself when the forward fails with ANY error), and every owner holds it",
    withSeed(908, async () => {
      const c = await cluster({ nodes: 3, seed: 908 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "lost-answer-set");
      const via = ownersOf(c, key).replicas[0]!;
      loseForwardAnswers(c, "n1");
      const [outcome] = await drive(c, [c.node(via).cache.admitWrite().set(key, fromUtf8("v1"), 0, "quorum")]);
      expect(outcome instanceof CacheError ? `${outcome.code}: ${outcome.message}` : outcome?.applied).to.equal(true);
      expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(1);
      for (const id of ["n1", "n2", "n3"]) expect(text(c.node(id).store.peek(key)?.value), id).to.equal("v1");
    }),
  );

  it(
    "an increment forward that never reached the primary (its address is gone) is still taken over by the replica",
    withSeed(906, async () => {
      const c = await cluster({ nodes: 3, seed: 906 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "gone-ctr");
      const via = ownersOf(c, key).replicas[0]!;
      c.network.unregister(c.sim("n1").address);
      const [outcome] = await drive(c, [incrAt(c, via, key, 5, "quorum")]);
      expect(outcome instanceof CacheError ? `${outcome.code}: ${outcome.message}` : outcome?.counterValue).to.equal(5);
      expect(c.node(via).metrics.get("dist.write.forward_promotion")).to.equal(1);
    }),
  );
  it(
    "later increments keep the counter's expiry, also when the version clock runs ahead of the wall clock (a peer's clock 900 ms ahead moved it ~0.8 s later per increment: 77 s over 100)",
    withSeed(4431, async () => {
      const c = await cluster({ nodes: 3, seed: 4431 });
      await c.advance(3_000);
      const n1 = c.node("n1");
      const key = keyWhere(c, (o) => o.primary === "n1", "creep");
      const other = keyWhere(c, (o) => o.ids.includes("n1"), "ahead");
      const [created] = await drive(c, [n1.cache.admitWrite().incr(key, { delta: 1, initial: 0, ttlMs: 10_000 }, "quorum")]);
      expect(created).to.not.be.instanceOf(CacheError);
      const expiresAt = n1.store.peek(key)?.expiresAtMs as number;
      expect(expiresAt).to.be.greaterThan(0);
      // A replica write stamped by a peer whose clock is 900 ms ahead (inside the guard's 1 s).
      const ahead = (c.clock.nowMs() + 900) * 1000;
      n1.endpoint.applySet("n2", [{ key: other, value: fromUtf8("v"), version: ahead, origin: "n2", lastUpdatedMs: Math.floor(ahead / 1000), expiresAtMs: 0, tombstone: false }]);
      for (let i = 0; i < 20; i++) {
        const [r] = await drive(c, [incr(c, "n1", key, 1, "quorum")]);
        expect(r, `increment ${i}`).to.not.be.instanceOf(CacheError);
      }
      expect(heldValue(c, "n1", key)).to.equal(21);
      for (const id of ["n1", "n2", "n3"]) if (ownersOf(c, key).ids.includes(id)) expect(c.node(id).store.peek(key)?.expiresAtMs, id).to.equal(expiresAt);
    }),
  );

  it(
    "an increment of a plain integer that has a TTL keeps its expiry unless it names a ttl (a rate-limit key became permanent)",
    withSeed(4432, async () => {
      const c = await cluster({ nodes: 3, seed: 4432 });
      await c.advance(3_000);
      const n1 = c.node("n1");
      const [kept, renamed] = [keyWhere(c, (o) => o.primary === "n1", "plain"), keyWhere(c, (o) => o.primary === "n1", "plain-ttl")];
      for (const key of [kept, renamed]) await n1.cache.admitWrite().set(key, fromUtf8("5"), 2_000, "quorum");
      const expiresAt = n1.store.peek(kept)?.expiresAtMs as number;
      const [a, b] = await drive(c, [incr(c, "n1", kept, 1, "quorum"), n1.cache.admitWrite().incr(renamed, { delta: 1, initial: 0, ttlMs: 60_000 }, "quorum")]);
      expect([a, b].map((r) => (r as WriteResult).counterValue)).to.deep.equal([6, 6]);
      expect(n1.store.peek(kept)?.expiresAtMs, "the plain value's expiry").to.equal(expiresAt);
      expect((n1.store.peek(renamed)?.expiresAtMs as number) - c.clock.nowMs(), "the ttl it names").to.be.greaterThan(50_000);
      await c.advance(3_000);
      expect(n1.store.peek(kept) === undefined || (n1.store.peek(kept)?.expiresAtMs as number) <= c.clock.nowMs(), "expired 2 s after the PUT").to.equal(true);
    }),
  );
  it(
    "a counter that both sides of a partition took past ±(2^53 − 1) reads exactly after the heal and takes an increment toward the range (every increment, -1 included, was 409 until a PUT)",
    withSeed(173, async () => {
      const c = await cluster({ nodes: 3, seed: 173 });
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "ovf");
      const H = 6_000_000_000_000_000;
      await drive(c, [incrAt(c, "n1", key, 0, "quorum")]);
      await c.advance(1_000);
      c.chaos.partition(["n1"], ["n2", "n3"]);
      const sides = await drive(c, [incrAt(c, "n1", key, H, "one"), incrAt(c, "n2", key, H, "one")]);
      expect(sides.every((r) => !(r instanceof CacheError)), "each side stays within the bound").to.equal(true);
      c.chaos.heal();
      await c.advance(120_000);
      const read = async () => text((await c.node("n3").cache.get(key, "quorum")).item?.value);
      expect(await read()).to.equal("12000000000000000");
      const [down] = await drive(c, [incrAt(c, "n1", key, -1, "quorum")]);
      expect(down, "toward the range").to.not.be.instanceOf(CacheError);
      expect(await read()).to.equal("11999999999999999");
      const [up] = await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      expect((up as CacheError).code, "away from it").to.equal("CONFLICT");
    }),
  );
  it(
    "Idempotency-Key across owners: a replica that took an increment over pushes its result with the counter, so a retry that reaches the primary once it is back answers it (it added again: the value showed 2)",
    withSeed(4441, async () => {
      const c = await cluster({ nodes: 3, seed: 4441, env: { SERVICE_HINT_REPLAY: "100ms" } });
      await c.advance(3_000);
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "idem-takeover");
      const ask = (via: string) => c.node(via).cache.admitWrite().incr(key, { delta: 1, initial: 0, ttlMs: 0, idempotencyKey: "retry-me" }, "quorum");
      c.crash("n1");
      const [first] = await drive(c, [ask("n2")]);
      expect(first, "taken over by n2").to.not.be.instanceOf(CacheError);
      expect([(first as WriteResult).counterValue, (first as WriteResult).appliedBy]).to.deep.equal([1, "n2"]);
      c.revive("n1");
      await c.advance(10_000); // n1 is back and gets the hinted counter, its result with it
      const [retry] = await drive(c, [ask("n3")]);
      expect(retry).to.not.be.instanceOf(CacheError);
      expect((retry as WriteResult).counterValue, "the first call's value").to.equal(1);
      await c.advance(5_000);
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), `${id}: added once`).to.equal(1);
    }),
  );

  it(
    "Idempotency-Key across owners: with the primary draining, a retry that another replica takes over answers the first replica's result",
    withSeed(4442, async () => {
      const c = await cluster({ nodes: 3, seed: 4442 });
      await c.advance(3_000);
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "idem-drain");
      const ask = (via: string) => c.node(via).cache.admitWrite().incr(key, { delta: 1, initial: 0, ttlMs: 0, idempotencyKey: "drain-retry" }, "quorum");
      c.node("n1").drain("test");
      const [first] = await drive(c, [ask("n2")]);
      expect(first).to.not.be.instanceOf(CacheError);
      const [retry] = await drive(c, [ask("n3")]);
      expect(retry).to.not.be.instanceOf(CacheError);
      expect((retry as WriteResult).counterValue, "the first call's value").to.equal((first as WriteResult).counterValue);
      await c.advance(5_000);
      for (const id of ["n2", "n3"]) expect(heldValue(c, id, key), `${id}: added once`).to.equal(1);
    }),
  );
  it(
    "a touch of a counter whose newest copy (by version) lacks the primary's latest increment keeps that increment (the owners' read merges it first), so the next add does not reuse its slot's seq (a review's suspicion, not reproduced)",
    withSeed(4451, async () => {
      const c = await cluster({ nodes: 3, seed: 4451 });
      await c.advance(3_000); // still inside the settle window: a touch reads the owners first
      const [n1, n2] = [c.node("n1"), c.node("n2")];
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "touch-ctr");
      for (let i = 0; i < 3; i++) await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      c.chaos.partition(["n1"], ["n2", "n3"]);
      const [one] = await drive(c, [incrAt(c, "n1", key, 1, "one")]);
      expect((one as WriteResult).counterValue, "acknowledged at ONE by n1").to.equal(4);
      // n2's copy (without it) under a newer version: a merge it made, stamped by a clock ahead.
      const older = n2.store.peek(key) as VersionedRecord;
      n2.store.apply({ ...older, version: older.version + 5_000_000, origin: "n2", lastUpdatedMs: Math.floor((older.version + 5_000_000) / 1000) });
      c.chaos.heal();
      const [touched] = await drive(c, [n1.cache.admitWrite().touch(key, { ttlMs: 600_000 }, "quorum")]);
      expect(touched).to.not.be.instanceOf(CacheError);
      const [next] = await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      expect((next as WriteResult).counterValue, "every acknowledged increment counted").to.equal(5);
      await c.advance(60_000);
      for (const id of ["n1", "n2", "n3"]) expect(heldValue(c, id, key), id).to.equal(5);
    }),
  );
  it(
    "a QUORUM read of a counter merges the owners' copies: a copy under a newer version that lacks an acknowledged increment does not hide it (the newest by version was answered)",
    withSeed(4461, async () => {
      const c = await cluster({ nodes: 3, seed: 4461 });
      await c.advance(3_000);
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "read-merge");
      for (let i = 0; i < 3; i++) await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      await c.advance(1_000);
      c.chaos.partition(["n1", "n2"], ["n3"]);
      const [acked] = await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      expect((acked as WriteResult).counterValue, "acknowledged by n1 and n2").to.equal(4);
      // n3's copy, without it, under a newer version (a merge it stamped with a clock ahead).
      const older = c.node("n3").store.peek(key) as VersionedRecord;
      const ahead = older.version + 5_000_000;
      c.node("n3").store.apply({ ...older, version: ahead, origin: "n3", lastUpdatedMs: Math.floor(ahead / 1000) });
      c.chaos.partition();
      for (const via of ["n3", "n2", "n1"]) {
        const read = await c.node(via).cache.read(key, "quorum");
        expect(text(read.item?.value), `QUORUM read through ${via}`).to.equal("4");
      }
    }),
  );

  it(
    "a DELETE of a counter acknowledged at QUORUM stays deleted when owners later merge older counter copies (a merge was stamped with the clock, above the delete)",
    withSeed(4471, async () => {
      // Hints that outlast the whole test, and tombstones twice as long (the most a hint may live).
      const c = await cluster({ nodes: 3, seed: 4471, env: { SERVICE_REPLICATION: "3", SERVICE_DEAD_AFTER: "600s", SERVICE_HINT_TTL: "600s", SERVICE_TOMBSTONE_TTL: "20m" } });
      await c.advance(2_000);
      const key = keyWhere(c, (o) => o.primary === "n1" && o.ids.length === 3, "merge-after-delete");
      await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      await c.advance(500);
      // n2 alone takes an increment (its own slot) and keeps hints of it for n1 and n3.
      c.chaos.partition(["n2"], ["n1", "n3"]);
      await drive(c, [incrAt(c, "n2", key, 1, "one")]);
      // The primary takes one more with n3.
      await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
      // n1 and n2 meet again and merge their copies; n3 is away.
      c.chaos.partition(["n1", "n2"], ["n3"]);
      await c.advance(2_000);
      const [deleted] = await drive(c, [c.node("n1").cache.admitWrite().remove(key, "quorum")]);
      expect(deleted, "the DELETE is acknowledged").to.not.be.instanceOf(CacheError);
      // n3 meets n2 first: n2's hint of its old increment merges into n3's old copy.
      c.chaos.partition(["n1"], ["n2", "n3"]);
      await c.advance(2_000);
      c.chaos.heal();
      await c.advance(120_000);
      for (const id of ["n1", "n2", "n3"]) {
        const rec = c.node(id).store.peek(key);
        expect(rec === undefined || rec.tombstone, `${id} holds ${rec === undefined ? "nothing" : text(rec.value)}`).to.equal(true);
      }
      expect((await c.node("n1").cache.read(key, "quorum")).item, "a QUORUM read after the heal").to.equal(undefined);
    }),
  );
});
