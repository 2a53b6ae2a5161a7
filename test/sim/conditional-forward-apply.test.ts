// A forwarding owner applies the primary's result of a conditional write or touch itself when the
// primary counted it: its owner list of the key (sent with the write) equals the primary's, and
// for a touch it holds the item touched. The primary then does not push the write back to it.
// Otherwise the primary pushes to it like any owner, and the forwarder claims nothing.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { etagOf } from "../../src/core/etag.js";
import type { ForwardRequest, PeerEndpoint } from "../../src/transport/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { expectCacheError, keyWhere, ownersOf, rec, text } from "./data-path-fixtures.js";

/** Counts the pushed records (Set and Remove calls) a node receives, and the owner list each carried. */
function countPushes(c: SimCluster, id: string): { records: number; expected: Array<readonly string[] | undefined> } {
  const counter = { records: 0, expected: [] as Array<readonly string[] | undefined> };
  const endpoint = c.node(id).endpoint;
  const wrap = (f: PeerEndpoint["applySet"]): PeerEndpoint["applySet"] => (from, records, checks) => {
    counter.records += records.length;
    counter.expected.push(...(checks ?? records.map(() => undefined)));
    return f(from, records, checks);
  };
  c.network.register(c.sim(id).address, { ...endpoint, applySet: wrap(endpoint.applySet.bind(endpoint)), applyRemove: wrap(endpoint.applyRemove.bind(endpoint)) });
  return counter;
}

/** Lets `edit` change each forward request `id` receives before it handles it (what another ring view would send). */
function editForwards(c: SimCluster, id: string, edit: (req: ForwardRequest) => ForwardRequest): void {
  const endpoint = c.node(id).endpoint;
  c.network.register(c.sim(id).address, { ...endpoint, forward: (req) => endpoint.forward(edit(req)) });
}

/** A 3-node cluster past its settle window, so the primary trusts its own copy (no quorum read first). */
async function settledCluster(cluster: ReturnType<typeof simClusters>, seed: number): Promise<SimCluster> {
  const c = await cluster({ nodes: 3, seed, env: { SERVICE_HINT_TTL: "1s" } });
  await c.advance(3_000);
  return c;
}

describe("sim/conditional writes: a forwarding owner applies the primary's result", () => {
  const cluster = simClusters();

  it(
    "a conditional PUT and DELETE through a replica owner: it holds the primary's record when the write returns, the primary pushes only to the third owner",
    withSeed(451, async () => {
      const c = await settledCluster(cluster, 451);
      const key = keyWhere(c, (o) => o.primary === "n2", "cfwd");
      const w = await c.node("n2").cache.admitWrite().set(key, fromUtf8("v0"), 0, "all");
      await c.settle();
      const toN1 = countPushes(c, "n1");
      const toN3 = countPushes(c, "n3");
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 60_000, "quorum", { ifMatch: [etagOf(w.version, w.origin)] });
      expect(r.origin).to.equal("n2");
      const held = c.node("n1").store.peek(key);
      expect(held).to.include({ version: r.version, origin: "n2", expiresAtMs: r.expiresAtMs, tombstone: false });
      expect(text(held?.value)).to.equal("v1");
      const d = await c.node("n1").cache.admitWrite().remove(key, "quorum", { ifMatch: [etagOf(r.version, r.origin)] });
      expect(c.node("n1").store.peek(key)).to.include({ tombstone: true, version: d.version, origin: "n2" });
      await c.settle();
      expect(toN1.records, "nothing pushed back to the forwarder").to.equal(0);
      expect(toN3.records, "the third owner gets both").to.equal(2);
      expect(toN3.expected, "with the primary's owner list").to.deep.equal([ownersOf(c, key).ids, ownersOf(c, key).ids]);
    }),
  );

  it(
    "QUORUM needs no third owner when the forwarder is counted (no hint for the forwarder); ALL still waits for the third and fails without it",
    withSeed(452, async () => {
      const c = await settledCluster(cluster, 452);
      const key = keyWhere(c, (o) => o.primary === "n2", "cfwdq");
      await c.node("n2").cache.admitWrite().set(key, fromUtf8("v0"), 0, "all");
      await c.settle();
      const toN1 = countPushes(c, "n1");
      c.chaos.isolate("n3");
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, "quorum", { ifMatch: "*" });
      expect(c.node("n1").store.peek(key)?.version).to.equal(r.version);
      await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("v2"), 0, "all", { ifMatch: "*" }), "QUORUM_FAILED");
      expect(c.node("n2").hints.size("n1"), "the forwarder was never pushed to").to.equal(0);
      expect(toN1.records, "nor is it pushed to directly").to.equal(0);
    }),
  );

  it(
    "a forwarder whose owner list differs from the primary's is not counted: the primary pushes to it with its own list, and at ALL a refusal there fails the write, which the forwarder never stored",
    withSeed(453, async () => {
      const c = await settledCluster(cluster, 453);
      const key = keyWhere(c, (o) => o.primary === "n2", "cfwdo");
      const w = await c.node("n2").cache.admitWrite().set(key, fromUtf8("v0"), 0, "all");
      await c.settle();
      // n1's view as n2 receives it: the same owners in another order (another ring).
      editForwards(c, "n2", (req) => ({ ...req, writes: req.writes.map((x) => (x.sender ? { ...x, sender: { ...x.sender, owners: [...x.sender.owners].reverse() } } : x)) }));
      const toN1 = countPushes(c, "n1");
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, "all", { ifMatch: [etagOf(w.version, w.origin)] });
      expect(toN1.records, "pushed to like any owner").to.equal(1);
      expect(toN1.expected).to.deep.equal([ownersOf(c, key).ids]);
      expect(c.node("n1").store.peek(key)?.version).to.equal(r.version);
      // Now n1 refuses the primary's owner list as well: the ALL write fails, and n1 holds the old version.
      const n1 = c.node("n1").endpoint;
      c.network.register(c.sim("n1").address, { ...n1, applySet: (from, records) => n1.applySet(from, records, records.map(() => ["n9", "n8", "n7"])) });
      await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("v2"), 0, "all", { ifMatch: [etagOf(r.version, r.origin)] }), "QUORUM_FAILED");
      expect(c.node("n1").store.peek(key)?.version).to.equal(r.version);
    }),
  );

  it(
    "a primary that does not count the forwarder (an older one ignores its view) pushes to it, and the forwarder does not apply the result itself",
    withSeed(454, async () => {
      const c = await settledCluster(cluster, 454);
      const key = keyWhere(c, (o) => o.primary === "n3", "cfwdx");
      await c.node("n3").cache.admitWrite().set(key, fromUtf8("v0"), 0, "all");
      await c.settle();
      editForwards(c, "n3", (req) => ({ ...req, writes: req.writes.map(({ sender: _ignored, ...x }) => x) }));
      // n1 refuses the pushes, so what it holds after the write is what it applied itself.
      let pushed = 0;
      const n1 = c.node("n1").endpoint;
      c.network.register(c.sim("n1").address, {
        ...n1,
        applySet: (from, records) => {
          pushed += records.length;
          return n1.applySet(from, records, records.map(() => ["n9", "n8", "n7"]));
        },
      });
      const before = c.node("n1").store.peek(key)?.version;
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 0, "quorum", { ifMatch: "*" });
      expect(r.version).to.be.greaterThan(before ?? 0);
      expect(c.node("n1").store.peek(key)?.version, "the forwarder did not apply a result it was not counted for").to.equal(before);
      await c.settle();
      expect(pushed, "the primary pushed to the forwarder").to.be.greaterThan(0);
    }),
  );

  it(
    "touch through an owner holding the item: counted, no push back, and it holds the value with the touched version and expiry",
    withSeed(455, async () => {
      const c = await settledCluster(cluster, 455);
      const key = keyWhere(c, (o) => o.primary === "n2", "ctouch");
      await c.node("n2").cache.admitWrite().set(key, fromUtf8("value"), 10_000, "all");
      await c.settle();
      const toN1 = countPushes(c, "n1");
      const t = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 60_000 }, "quorum");
      const held = c.node("n1").store.peek(key);
      expect(held).to.include({ version: t.version, origin: "n2", expiresAtMs: t.expiresAtMs, lastUpdatedMs: Math.floor(t.version / 1000) });
      expect(text(held?.value)).to.equal("value");
      await c.settle();
      expect(toN1.records).to.equal(0);
    }),
  );

  it(
    "touch through an owner without the item, or with another version of it: the primary pushes it the full item",
    withSeed(456, async () => {
      const c = await settledCluster(cluster, 456);
      const key = keyWhere(c, (o) => o.primary === "n2", "ctouchx");
      const w = await c.node("n2").cache.admitWrite().set(key, fromUtf8("value"), 10_000, "all");
      await c.settle();
      const toN1 = countPushes(c, "n1");
      expect(c.node("n1").store.removeLocal(key)).to.equal(true);
      const t1 = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 60_000 }, "all");
      expect(toN1.records).to.equal(1);
      expect(c.node("n1").store.peek(key)).to.include({ version: t1.version, expiresAtMs: t1.expiresAtMs });
      expect(text(c.node("n1").store.peek(key)?.value)).to.equal("value");
      // An older version of the item on n1 (it missed the first touch).
      expect(c.node("n1").store.removeLocal(key)).to.equal(true);
      c.node("n1").store.apply(rec(key, "value", w.version, w.origin, { expiresAtMs: w.expiresAtMs }));
      const t2 = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 90_000 }, "all");
      expect(toN1.records).to.equal(2);
      expect(c.node("n1").store.peek(key)).to.include({ version: t2.version, expiresAtMs: t2.expiresAtMs });
      expect(text(c.node("n1").store.peek(key)?.value)).to.equal("value");
    }),
  );

  it(
    "a counted forwarder that no longer holds the touched item when the result arrives answers 503 UNAVAILABLE, not 200",
    withSeed(457, async () => {
      const c = await settledCluster(cluster, 457);
      const key = keyWhere(c, (o) => o.primary === "n2", "ctouchgone");
      await c.node("n2").cache.admitWrite().set(key, fromUtf8("value"), 10_000, "all");
      await c.settle();
      // The item leaves n1 (evicted, say) while the touch is at the primary.
      editForwards(c, "n2", (req) => {
        c.node("n1").store.removeLocal(key);
        return req;
      });
      const e = await expectCacheError(c.node("n1").cache.admitWrite().touch(key, { ttlMs: 60_000 }, "quorum"), "UNAVAILABLE");
      expect(e.message).to.match(/could not store it/);
      expect(c.node("n1").store.peek(key)).to.equal(undefined);
    }),
  );

  it(
    "conditional pushes of several owner lists and a plain push to one owner share one Set call, each record with its own check",
    withSeed(459, async () => {
      const c = await settledCluster(cluster, 459);
      const a = keyWhere(c, (o) => o.primary === "n1" && o.ids[1] === "n2", "lane-a");
      const b = keyWhere(c, (o) => o.primary === "n1" && o.ids[1] === "n3", "lane-b");
      const plain = keyWhere(c, (o) => o.primary === "n1", "lane-p");
      const calls: Array<Map<string, readonly string[] | undefined>> = [];
      const n2 = c.node("n2").endpoint;
      c.network.register(c.sim("n2").address, {
        ...n2,
        applySet: (from, records, checks) => {
          calls.push(new Map(records.map((r, i) => [r.key, checks?.[i]])));
          return n2.applySet(from, records, checks);
        },
      });
      const w = c.node("n1").cache.admitWrite();
      await Promise.all([
        w.set(a, fromUtf8("a"), 0, "all", { ifNoneMatch: "*" }),
        w.set(b, fromUtf8("b"), 0, "all", { ifNoneMatch: "*" }),
        w.set(plain, fromUtf8("p"), 0, "all"),
      ]);
      expect(calls, "one call").to.have.length(1);
      expect(calls[0]).to.deep.equal(new Map([[a, ownersOf(c, a).ids], [b, ownersOf(c, b).ids], [plain, undefined]]));
      for (const key of [a, b, plain]) expect(c.node("n2").store.peek(key), key).to.not.equal(undefined);
    }),
  );

  it(
    "CAS through every node on a settled cluster: one 200 per ETag round, and every owner holds the winner",
    withSeed(458, async () => {
      const c = await settledCluster(cluster, 458);
      const key = keyWhere(c, (o) => o.primary === "n3", "cfwdcas");
      let current = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v0"), 0, "all");
      for (let round = 1; round <= 5; round++) {
        const tag = etagOf(current.version, current.origin);
        const outcomes = await Promise.allSettled(
          Array.from({ length: 9 }, (_, i) => c.node(`n${(i % 3) + 1}`).cache.admitWrite().set(key, fromUtf8(`r${round}-${i}`), 0, "quorum", { ifMatch: [tag] })),
        );
        const wins = outcomes.filter((o) => o.status === "fulfilled");
        expect(wins, `round ${round}`).to.have.length(1);
        current = (wins[0] as PromiseFulfilledResult<typeof current>).value;
        await c.settle();
        for (const id of ownersOf(c, key).ids) expect(c.node(id).store.peek(key)?.version, `${id} round ${round}`).to.equal(current.version);
      }
    }),
  );
});
