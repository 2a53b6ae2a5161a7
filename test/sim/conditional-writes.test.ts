// Conditional writes and touch over several real nodes on the in-memory network with a manual
// clock: one success per ETag, one If-None-Match winner, the owner-list check on replicas, no
// promotion when the primary is unreachable, and touches that never resurrect and survive the
// primary.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { CacheError } from "../../src/core/errors.js";
import { etagOf } from "../../src/core/etag.js";
import type { WriteResult } from "../../src/cluster/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { expectCacheError, keyWhere, ownersOf, rec, text } from "./data-path-fixtures.js";

type Outcome = WriteResult | CacheError;

function settled(ps: Array<Promise<WriteResult>>): Promise<Outcome[]> {
  return Promise.all(ps.map((p) => p.catch((e: unknown) => (e instanceof CacheError ? e : Promise.reject(e)))));
}

function tagOf(r: WriteResult): string {
  return etagOf(r.version, r.origin);
}

/** Runs `n` writes through the nodes of `c` in turn, all started before any is awaited. */
function viaEveryNode(c: SimCluster, n: number, write: (via: string, i: number) => Promise<WriteResult>): Promise<Outcome[]> {
  return settled(Array.from({ length: n }, (_, i) => write(c.nodes[i % c.nodes.length]!.id, i)));
}

describe("sim/conditional writes and touch", () => {
  const cluster = simClusters();

  it(
    "12 concurrent PUTs conditioned on one ETag through every node: exactly one 200, the rest 412 with the winner's ETag, every owner holds the winner",
    withSeed(161, async () => {
      const c = await cluster({ nodes: 4, seed: 161 });
      const key = keyWhere(c, () => true, "cas");
      const first = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v0"), 0);
      for (let round = 1; round <= 3; round++) {
        const current = round === 1 ? tagOf(first) : tagOf((await c.node("n2").cache.admitWrite().set(key, fromUtf8(`base-${round}`), 0)));
        const outcomes = await viaEveryNode(c, 12, (via, i) => c.node(via).cache.admitWrite().set(key, fromUtf8(`r${round}-${i}`), 0, undefined, { ifMatch: [current] }));
        const wins = outcomes.filter((o): o is WriteResult => !(o instanceof CacheError));
        expect(wins, `round ${round}`).to.have.length(1);
        const losers = outcomes.filter((o): o is CacheError => o instanceof CacheError);
        for (const e of losers) {
          expect(e.code, e.message).to.equal("PRECONDITION_FAILED");
          expect(e.details).to.deep.equal({ current_etag: tagOf(wins[0]!) });
        }
        await c.settle();
        for (const id of ownersOf(c, key).ids) {
          const held = c.node(id).store.peek(key);
          expect(held?.version, id).to.equal(wins[0]!.version);
        }
      }
    }),
  );

  it(
    "If-None-Match * race of 9 writers through every node: one winner, the others 412; after a delete it may be created again",
    withSeed(162, async () => {
      const c = await cluster({ nodes: 3, seed: 162 });
      const key = keyWhere(c, () => true, "create");
      const race = () => viaEveryNode(c, 9, (via, i) => c.node(via).cache.admitWrite().set(key, fromUtf8(`w${i}`), 0, "all", { ifNoneMatch: "*" }));
      const first = await race();
      expect(first.filter((o) => !(o instanceof CacheError))).to.have.length(1);
      expect(first.filter((o) => o instanceof CacheError && o.code === "PRECONDITION_FAILED")).to.have.length(8);
      await c.node("n3").cache.admitWrite().remove(key);
      const second = await race();
      expect(second.filter((o) => !(o instanceof CacheError))).to.have.length(1);
    }),
  );

  it(
    "412 changes nothing: the key keeps its version everywhere; consistency one with a condition is 400; no condition goes through as before",
    withSeed(163, async () => {
      const c = await cluster({ nodes: 3, seed: 163 });
      const key = keyWhere(c, () => true, "nochange");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("kept"), 0);
      const e = await expectCacheError(c.node("n2").cache.admitWrite().set(key, fromUtf8("lost"), 0, undefined, { ifMatch: ['"nope"'] }), "PRECONDITION_FAILED");
      expect(e.details).to.deep.equal({ current_etag: tagOf(w) });
      await expectCacheError(c.node("n3").cache.admitWrite().remove(key, undefined, { ifMatch: [`W/${tagOf(w)}`] }), "PRECONDITION_FAILED");
      await expectCacheError(c.node("n2").cache.admitWrite().set(key, fromUtf8("x"), 0, "one", { ifMatch: [tagOf(w)] }), "BAD_REQUEST");
      await c.settle();
      for (const id of ["n1", "n2", "n3"]) expect(c.node(id).store.peek(key)?.version, id).to.equal(w.version);
      const del = await c.node("n3").cache.admitWrite().remove(key, undefined, { ifMatch: [tagOf(w)] });
      expect(del.applied).to.equal(true);
      const absent = await expectCacheError(c.node("n1").cache.admitWrite().remove(key, undefined, { ifMatch: "*" }), "PRECONDITION_FAILED");
      expect(absent.details).to.deep.equal({});
    }),
  );

  it(
    "a replica whose owner list of the key differs from the primary's refuses the conditional push (stored nowhere), and applies it with the same list",
    withSeed(164, async () => {
      const c = await cluster({ nodes: 3, seed: 164 });
      const key = keyWhere(c, () => true, "owners");
      const { ids, replicas } = ownersOf(c, key);
      const replica = c.node(replicas[0]!);
      const version = c.clock.nowMs() * 1000 + 7;
      const record = rec(key, "pushed", version, ids[0]!);
      const [refused] = replica.endpoint.applySet(ids[0]!, [record], [[...ids].reverse()]);
      expect(refused?.kind).to.equal("refused");
      expect(replica.store.peek(key)).to.equal(undefined);
      expect(replica.metrics.get("dist.write.apply_refused")).to.equal(1);
      const [tomb] = replica.endpoint.applyRemove(ids[0]!, [{ ...record, value: "", tombstone: true }], [["n1", "n9"]]);
      expect(tomb?.kind).to.equal("refused");
      const [applied] = replica.endpoint.applySet(ids[0]!, [record], [ids]);
      expect(applied?.kind).to.equal("applied");
      expect(text(replica.store.peek(key)?.value)).to.equal("pushed");
    }),
  );

  it(
    "a conditional write whose replicas all refuse the owner list gets 503 QUORUM_FAILED at ALL: the replicas store nothing",
    withSeed(165, async () => {
      const c = await cluster({ nodes: 3, seed: 165 });
      const key = keyWhere(c, (o) => o.primary === "n1", "refuse");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("base"), 0, "all");
      const before = c.node("n2").store.peek(key)?.version;
      // The replicas see another ring: their guard refuses the primary's owner list (only when the
      // primary sent one: a push without a list is applied as before).
      const seen: Array<readonly string[] | undefined> = [];
      for (const id of ["n2", "n3"]) {
        const endpoint = c.node(id).endpoint;
        const applySet = endpoint.applySet.bind(endpoint);
        c.network.register(c.sim(id).address, {
          ...endpoint,
          applySet: (from, records, checks) => {
            seen.push(...(checks ?? records.map(() => undefined)));
            return applySet(from, records, checks === undefined ? undefined : records.map(() => ["n9", "n8", "n7"]));
          },
        });
      }
      const current = etagOf(c.node("n1").store.peek(key)!.version, "n1");
      await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("new"), 0, "all", { ifMatch: [current] }), "QUORUM_FAILED");
      // The primary sent its own owner list to each replica.
      expect(seen).to.deep.equal([ownersOf(c, key).ids, ownersOf(c, key).ids]);
      expect(c.node("n2").store.peek(key)?.version).to.equal(before);
      expect(c.node("n3").store.peek(key)?.version).to.equal(before);
    }),
  );

  it(
    "with the primary unreachable a conditional write or touch through a replica is 503 UNAVAILABLE, never promoted, and changes nothing",
    withSeed(166, async () => {
      const c = await cluster({ nodes: 3, seed: 166 });
      const key = keyWhere(c, (o) => o.primary === "n3", "nopromo");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("base"), 0, "all");
      c.crash("n3");
      const e = await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("new"), 0, undefined, { ifMatch: [tagOf(w)] }), "UNAVAILABLE");
      expect(e.details).to.deep.include({ owners: ownersOf(c, key).ids });
      expect(e.message, "the forward never left: the client may know nothing changed").to.include("was not sent, so not applied");
      await expectCacheError(c.node("n2").cache.admitWrite().touch(key, { ttlMs: 60_000 }), "UNAVAILABLE");
      expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(0);
      expect(c.node("n2").metrics.get("dist.write.forward_promotion")).to.equal(0);
      for (const id of ["n1", "n2"]) expect(c.node(id).store.peek(key)?.version, id).to.equal(w.version);
      // An unconditional write is still promoted, as before.
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("plain"), 0);
      expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(1);
    }),
  );

  it(
    "touch: a new version with the same value and the new expiry on every owner; persist removes it; If-Match applies",
    withSeed(167, async () => {
      const c = await cluster({ nodes: 3, seed: 167 });
      const key = keyWhere(c, (o) => o.primary === "n2", "touch");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("value"), 10_000);
      await c.advance(1_000);
      const t = await c.node("n3").cache.admitWrite().touch(key, { ttlMs: 60_000 });
      expect(t.version).to.be.greaterThan(w.version);
      expect(t.bytes).to.equal(5);
      expect(t.expiresAtMs).to.equal(Math.floor(t.version / 1000) + 60_000);
      await c.settle();
      for (const id of ["n1", "n2", "n3"]) {
        const held = c.node(id).store.peek(key);
        expect(held?.expiresAtMs, id).to.equal(t.expiresAtMs);
        expect(text(held?.value), id).to.equal("value");
      }
      await expectCacheError(c.node("n1").cache.admitWrite().touch(key, { persist: true }, undefined, { ifMatch: [tagOf(w)] }), "PRECONDITION_FAILED");
      const p = await c.node("n1").cache.admitWrite().touch(key, { persist: true }, undefined, { ifMatch: [tagOf(t)] });
      expect(p.expiresAtMs).to.equal(0);
      await c.settle();
      expect(c.node("n3").store.peek(key)?.expiresAtMs).to.equal(0);
    }),
  );

  it(
    "touch after delete or expiry is 404 through every node and never resurrects the value",
    withSeed(168, async () => {
      const c = await cluster({ nodes: 3, seed: 168 });
      const key = keyWhere(c, () => true, "gone");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0);
      await c.node("n2").cache.admitWrite().remove(key);
      for (const via of ["n1", "n2", "n3"]) await expectCacheError(c.node(via).cache.admitWrite().touch(key, { ttlMs: 60_000 }), "NOT_FOUND");
      const never = keyWhere(c, () => true, "never");
      await expectCacheError(c.node("n2").cache.admitWrite().touch(never, { persist: true }), "NOT_FOUND");
      const short = keyWhere(c, () => true, "short");
      await c.node("n3").cache.admitWrite().set(short, fromUtf8("s"), 500);
      await c.advance(600);
      await expectCacheError(c.node("n1").cache.admitWrite().touch(short, { ttlMs: 60_000 }), "NOT_FOUND");
      await c.settle();
      for (const n of c.nodes) {
        expect(n.node.store.peek(key)?.tombstone, n.id).to.equal(true);
        expect((await n.node.cache.get(key, "all")).item, n.id).to.equal(undefined);
        expect(n.node.store.peek(never), n.id).to.equal(undefined);
        expect((await n.node.cache.get(short, "all")).item, n.id).to.equal(undefined);
      }
    }),
  );

  it(
    "a touch survives losing the primary: after it crashes a replica serves the value with the touched expiry",
    withSeed(169, async () => {
      const c = await cluster({ nodes: 3, seed: 169 });
      const key = keyWhere(c, (o) => o.primary === "n1", "survive");
      await c.node("n2").cache.admitWrite().set(key, fromUtf8("kept"), 2_000);
      const t = await c.node("n2").cache.admitWrite().touch(key, { ttlMs: 3_600_000 }, "all");
      c.crash("n1");
      await c.advance(5_000);
      for (const id of ["n2", "n3"]) {
        const r = await c.node(id).cache.get(key, "one");
        expect(text(r.item?.value), id).to.equal("kept");
        expect(r.item?.expiresAtMs, id).to.equal(t.expiresAtMs);
        expect(r.item?.version, id).to.equal(t.version);
      }
    }),
  );

  it(
    "a primary without a copy reads a quorum first: a conditional write on a key only the replicas hold sees their item",
    withSeed(170, async () => {
      const c = await cluster({ nodes: 3, seed: 170 });
      const key = keyWhere(c, (o) => o.primary === "n1", "cold");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("on replicas"), 0, "all");
      await c.restart("n1");
      expect(c.node("n1").store.peek(key)).to.equal(undefined);
      await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("x"), 0, undefined, { ifNoneMatch: "*" }), "PRECONDITION_FAILED");
      const ok = await c.node("n2").cache.admitWrite().set(key, fromUtf8("next"), 0, undefined, { ifMatch: [tagOf(w)] });
      expect(ok.version).to.be.greaterThan(w.version);
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.be.greaterThan(0);
    }),
  );

  /**
   * A 3-node cluster past its settle window (hint TTL 1 s: 10 rebalance intervals, 2.5 s), so the
   * primary trusts its own copy (each test checks dist.write.precondition_reads stays 0 first).
   */
  async function settledCluster(seed: number, env: Record<string, string> = {}): Promise<SimCluster> {
    const c = await cluster({ nodes: 3, seed, env: { SERVICE_HINT_TTL: "1s", ...env } });
    await c.advance(3_000);
    return c;
  }

  it(
    "on a settled cluster the primary trusts its own copy, and reads a quorum first when it has none: a key removed on the primary alone still meets its condition",
    withSeed(171, async () => {
      const c = await settledCluster(171);
      const key = keyWhere(c, (o) => o.primary === "n1", "gone-here");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, "all");
      const w2 = await c.node("n2").cache.admitWrite().set(key, fromUtf8("v2"), 0, undefined, { ifMatch: [tagOf(w)] });
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.equal(0);
      await c.settle();
      expect(c.node("n1").store.removeLocal(key)).to.equal(true);
      await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("x"), 0, undefined, { ifNoneMatch: "*" }), "PRECONDITION_FAILED");
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.equal(1);
      const ok = await c.node("n3").cache.admitWrite().set(key, fromUtf8("v3"), 0, undefined, { ifMatch: [tagOf(w2)] });
      expect(ok.version).to.be.greaterThan(w2.version);
    }),
  );

  it(
    "a stale answer to a conditional push marks the key: the primary's next conditional write of it reads a quorum first, the one after trusts its copy again",
    withSeed(172, async () => {
      const c = await settledCluster(172);
      const key = keyWhere(c, (o) => o.primary === "n1", "stale");
      const { replicas } = ownersOf(c, key);
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, "all");
      await c.settle();
      // One replica holds a newer version the primary has not seen (its clock ran ahead).
      c.node(replicas[0]!).store.apply(rec(key, "ahead", (c.clock.nowMs() + 60_000) * 1000, replicas[0]!));
      const w2 = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v2"), 0, "quorum", { ifMatch: [tagOf(w)] });
      await c.settle();
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.equal(0);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v3"), 0, "quorum", { ifMatch: "*" });
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.equal(1);
      await c.settle();
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v4"), 0, "quorum", { ifMatch: "*" });
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.equal(1);
      expect(w2.version).to.be.greaterThan(w.version);
    }),
  );

  it(
    "a default write consistency of ONE becomes QUORUM for conditional writes and touches: with both replicas unreachable they fail, a plain write succeeds",
    withSeed(173, async () => {
      const c = await settledCluster(173, { SERVICE_WRITE_CONSISTENCY: "one" });
      const key = keyWhere(c, (o) => o.primary === "n1", "level");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, "all");
      for (const id of ownersOf(c, key).replicas) c.crash(id);
      const e = await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("v2"), 0, undefined, { ifMatch: [tagOf(w)] }), "QUORUM_FAILED");
      expect(e.details).to.deep.include({ consistency: "quorum", required: 2 });
      await expectCacheError(c.node("n1").cache.admitWrite().touch(key, { ttlMs: 60_000 }), "QUORUM_FAILED");
      const plain = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v3"), 0);
      expect(plain.version).to.be.greaterThan(w.version);
    }),
  );
});
