// Stampede leases over several real nodes on the in-memory network with a manual clock: lease
// reads of a cold key through every node get one loader, the others the value of its fill; an
// unfilled lease passes on when it expires; a delete (or another write) before the fill makes the
// fill a conflict that stores nothing; leases live on the primary only (a non-primary receiver
// answers no lease, a fill reaching another node is a conflict, an unreachable primary means a
// plain miss).
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import type { CacheError } from "../../src/core/errors.js";
import type { LeaseResult } from "../../src/cluster/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { expectCacheError, keyWhere, ownersOf, text } from "./data-path-fixtures.js";

/** A lease read as the item route makes it: a read, and on a miss the lease. */
async function leaseRead(c: SimCluster, via: string, key: string, leaseMs: number, waitMs: number): Promise<LeaseResult> {
  const read = await c.node(via).cache.get(key);
  return read.item !== undefined ? read : c.node(via).cache.lease(key, { leaseMs, waitMs });
}

/** Tracks a promise so that a test can look at its outcome while it advances the clock. */
function track<T>(p: Promise<T>): { value?: T; error?: unknown; done: boolean } {
  const box: { value?: T; error?: unknown; done: boolean } = { done: false };
  p.then(
    (v) => Object.assign(box, { value: v, done: true }),
    (e: unknown) => Object.assign(box, { error: e, done: true }),
  );
  return box;
}

function fill(c: SimCluster, via: string, key: string, value: string, token: string) {
  return c.node(via).cache.admitWrite().set(key, fromUtf8(value), 0, undefined, undefined, token);
}

describe("sim/stampede leases", () => {
  const cluster = simClusters();

  it(
    "60 concurrent lease reads of a cold key through every node: one loader; after its fill through another node all 59 get the value",
    withSeed(181, async () => {
      const c = await cluster({ nodes: 3, seed: 181 });
      const key = keyWhere(c, () => true, "cold");
      const reads = Array.from({ length: 60 }, (_, i) => track(leaseRead(c, c.nodes[i % 3]!.id, key, 10_000, 2_000)));
      await c.settle();
      const loaders = reads.filter((r) => r.done && r.value?.token !== undefined);
      expect(loaders).to.have.length(1);
      expect(reads.filter((r) => r.done)).to.have.length(1);
      const { primary } = ownersOf(c, key);
      const via = c.nodes.find((n) => n.id !== primary)!.id;
      const stored = await fill(c, via, key, "loaded once", loaders[0]!.value!.token!);
      expect(stored.applied).to.equal(true);
      await c.settle();
      const others = reads.filter((r) => r !== loaders[0]);
      expect(others.every((r) => r.done && text(r.value?.item?.value) === "loaded once")).to.equal(true);
      expect(c.node(primary).metrics.get("dist.lease.granted")).to.equal(1);
      expect(c.node(primary).metrics.get("dist.lease.filled")).to.equal(1);
      // Once filled, a lease read is a plain hit, and the key has no lease.
      expect(text((await leaseRead(c, via, key, 10_000, 0)).item?.value)).to.equal("loaded once");
      await expectCacheError(fill(c, via, key, "again", loaders[0]!.value!.token!), "CONFLICT");
    }),
  );

  it(
    "an unfilled lease expires: the first waiter takes it over with a new token, a later reader is held, and the old token's fill stores nothing",
    withSeed(182, async () => {
      const c = await cluster({ nodes: 3, seed: 182 });
      const key = keyWhere(c, () => true, "expire");
      const { primary, replicas } = ownersOf(c, key);
      const first = await leaseRead(c, replicas[0]!, key, 500, 0);
      expect(first.token).to.be.a("string");
      const waiter = track(leaseRead(c, replicas[1] ?? primary, key, 5_000, 3_000));
      await c.advance(499);
      expect(waiter.done).to.equal(false);
      await c.advance(1);
      expect(waiter.value?.token).to.be.a("string").and.not.equal(first.token);
      const late = await leaseRead(c, primary, key, 5_000, 0);
      expect(late.heldMs).to.equal(5_000);
      await expectCacheError(fill(c, primary, key, "too late", first.token!), "CONFLICT");
      for (const n of c.nodes) expect(n.node.store.peek(key), n.id).to.equal(undefined);
      await fill(c, replicas[0]!, key, "second loader", waiter.value!.token!);
      expect(text((await c.node(primary).cache.get(key, "all")).item?.value)).to.equal("second loader");
    }),
  );

  it(
    "a delete before the fill ends the lease: the fill is 409 CONFLICT and nothing is stored on any owner; a PUT before the fill likewise, and waiters get that PUT's value",
    withSeed(183, async () => {
      const c = await cluster({ nodes: 3, seed: 183 });
      const key = keyWhere(c, () => true, "deleted");
      const lease = await leaseRead(c, "n1", key, 10_000, 0);
      await c.node("n2").cache.admitWrite().remove(key);
      await expectCacheError(fill(c, "n3", key, "stale load", lease.token!), "CONFLICT");
      await c.settle();
      for (const n of c.nodes) expect(n.node.store.peek(key)?.tombstone ?? true, n.id).to.equal(true);

      const other = keyWhere(c, () => true, "overwritten");
      const lease2 = await leaseRead(c, "n2", other, 10_000, 0);
      const waiter = track(leaseRead(c, "n3", other, 10_000, 2_000));
      await c.settle();
      await c.node("n1").cache.admitWrite().set(other, fromUtf8("fresh"), 0);
      await c.settle();
      expect(text(waiter.value?.item?.value)).to.equal("fresh");
      await expectCacheError(fill(c, "n2", other, "stale load", lease2.token!), "CONFLICT");
      expect(text((await c.node("n1").cache.get(other, "all")).item?.value)).to.equal("fresh");
    }),
  );

  it(
    "leases live on the primary: a non-primary receiver answers no lease, a fill reaching a node that is not the primary is CONFLICT, an unreachable primary means a plain miss",
    withSeed(184, async () => {
      const c = await cluster({ nodes: 3, seed: 184 });
      const key = keyWhere(c, (o) => o.primary === "n3", "where");
      expect(await c.node("n1").endpoint.lease({ from: "n2", key, leaseMs: 1_000, waitMs: 0 })).to.deep.equal({ kind: "none" });
      const lease = await leaseRead(c, "n1", key, 10_000, 0);
      expect(lease.token).to.be.a("string");
      expect(c.node("n1").metrics.get("dist.lease.granted")).to.equal(0);
      const [outcome] = await c.node("n2").endpoint.forward({ from: "n1", consistency: undefined, writes: [{ kind: "set", key, value: fromUtf8("v"), ttlMs: 0, leaseToken: lease.token! }] });
      expect(outcome?.errorCode).to.equal("CONFLICT");
      expect(c.node("n2").store.peek(key)).to.equal(undefined);
      // A peer's lease request out of range is a 400.
      try {
        await c.node("n3").endpoint.lease({ from: "n1", key, leaseMs: 99, waitMs: 0 });
        expect.fail("a 99 ms lease must be refused");
      } catch (err) {
        expect((err as CacheError).code).to.equal("BAD_REQUEST");
      }
      c.crash("n3");
      const miss = track(leaseRead(c, "n1", key, 10_000, 2_000));
      for (let i = 0; i < 100 && !miss.done; i++) await c.advance(100);
      expect(miss.done).to.equal(true);
      expect([miss.value?.item, miss.value?.token, miss.value?.heldMs]).to.deep.equal([undefined, undefined, undefined]);
      const e = track(fill(c, "n1", key, "v", lease.token!));
      for (let i = 0; i < 100 && !e.done; i++) await c.advance(100);
      expect((e.error as CacheError).code).to.equal("UNAVAILABLE");
      expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(0);
    }),
  );

  it(
    "a holder whose load failed releases its lease through a node that is not the primary: the waiter through the third node takes a new lease at once; a second release, a release through a non-primary receiver and one to a crashed primary change nothing",
    withSeed(185, async () => {
      const c = await cluster({ nodes: 3, seed: 185 });
      const key = keyWhere(c, (o) => o.primary === "n3", "released");
      const lease = await leaseRead(c, "n1", key, 10_000, 0);
      const waiter = track(leaseRead(c, "n2", key, 10_000, 5_000));
      await c.advance(100);
      expect(waiter.done).to.equal(false);
      expect(await c.node("n1").cache.releaseLease(key, lease.token!)).to.equal(true);
      await c.settle();
      expect(waiter.value?.token, "a new lease at once, not after 10 s").to.be.a("string").and.not.equal(lease.token);
      expect(await c.node("n2").cache.releaseLease(key, lease.token!), "released already").to.equal(false);
      await expectCacheError(fill(c, "n1", key, "stale load", lease.token!), "CONFLICT");
      // A receiver that is not the primary holds no lease: it answers false, never forwards.
      expect(c.node("n1").endpoint.releaseLease({ from: "n2", key, token: waiter.value!.token! })).to.equal(false);
      await fill(c, "n2", key, "second loader", waiter.value!.token!);
      expect(text((await c.node("n3").cache.get(key, "all")).item?.value)).to.equal("second loader");
      expect(c.node("n3").metrics.get("dist.lease.released")).to.equal(1);
      try {
        c.node("n3").endpoint.releaseLease({ from: "n1", key, token: "" });
        expect.fail("an empty token must be refused");
      } catch (err) {
        expect((err as CacheError).code).to.equal("BAD_REQUEST");
      }
      const other = keyWhere(c, (o) => o.primary === "n3", "unreachable");
      const held = await leaseRead(c, "n1", other, 10_000, 0);
      c.crash("n3");
      const e = track(c.node("n1").cache.releaseLease(other, held.token!));
      for (let i = 0; i < 100 && !e.done; i++) await c.advance(100);
      expect((e.error as CacheError).code).to.equal("UNAVAILABLE");
    }),
  );
});
