// A forwarding owner applies the primary's stamped result itself: the primary does not push the
// write back to it and counts it as an acknowledgement. The forwarder holds the exact record
// (version, origin, expiry) when its client gets the answer; a non-owner never keeps a copy.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simCluster, withSeed } from "../helpers/sim-cluster.js";
import type { SimCluster } from "../helpers/sim-cluster.js";
import { PEER_VERSION_AHEAD_MAX_MS } from "../../src/core/limits.js";
import { expectCacheError, keyWhere, ownersOf } from "./data-path-fixtures.js";

/** Counts the pushed records (Set and Remove calls) a node receives. */
function countPushes(c: SimCluster, id: string): { records: number } {
  const counter = { records: 0 };
  const endpoint = c.node(id).endpoint as { applySet: (...a: never[]) => unknown; applyRemove: (...a: never[]) => unknown };
  for (const name of ["applySet", "applyRemove"] as const) {
    const original = endpoint[name].bind(endpoint) as (from: string, records: readonly unknown[]) => unknown;
    (endpoint as Record<string, unknown>)[name] = (from: string, records: readonly unknown[]) => {
      counter.records += records.length;
      return original(from, records);
    };
  }
  return counter;
}

/**
 * Makes `id` answer forwards as a primary whose clock is more than PEER_VERSION_AHEAD_MAX_MS ahead
 * of the others' (its versions are microseconds of its clock): the forwarder refuses its results.
 * `counted: false` also drops sender_counted, as an older primary answers.
 */
function primaryClockAhead(c: SimCluster, id: string, { counted }: { counted: boolean }): void {
  const endpoint = c.node(id).endpoint;
  const aheadUs = (PEER_VERSION_AHEAD_MAX_MS + 3_600_000) * 1000;
  c.network.register(c.sim(id).address, {
    ...endpoint,
    forward: async (req) =>
      (await endpoint.forward(req)).map(({ senderCounted, ...r }) => ({ ...r, version: r.version + aheadUs, ...(counted && senderCounted !== undefined ? { senderCounted } : {}) })),
  });
}

describe("sim/data path: a forwarding owner applies the primary's result", () => {
  it(
    "the forwarding replica holds the primary's record (version, origin, expiry) the moment the write returns",
    withSeed(401, async () => {
      const c = await simCluster({ nodes: 3, seed: 401, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n2");
      const pushedToN1 = countPushes(c, "n1");
      const pushedToN3 = countPushes(c, "n3");
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v1"), 60_000, "quorum");
      expect(r.origin).to.equal("n2");
      // No settle: the copy on n1 comes from n1 itself, not from a push.
      const held = c.node("n1").store.peek(key);
      expect(held).to.include({ value: "v1", version: r.version, origin: "n2", tombstone: false });
      expect(held?.expiresAtMs).to.equal(r.expiresAtMs);
      expect(r.expiresAtMs).to.be.greaterThan(0);
      await c.settle();
      expect(pushedToN1.records, "the primary never pushes the write back to the forwarder").to.equal(0);
      expect(pushedToN3.records, "the other owner gets its push").to.equal(1);
      await c.stop();
    }),
  );

  it(
    "QUORUM through a forwarding owner needs no third node: with the third owner unreachable the write still succeeds without a hint for the forwarder",
    withSeed(402, async () => {
      const c = await simCluster({ nodes: 3, seed: 402, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n2");
      c.chaos.isolate("n3");
      const pushedToN1 = countPushes(c, "n1");
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "quorum");
      expect(pushedToN1.records).to.equal(0);
      expect(r.applied).to.equal(true);
      await c.settle();
      expect(c.node("n2").hints.size("n1"), "no push (and so no hint) back to the forwarder").to.equal(0);
      expect(c.node("n2").hints.size("n3"), "the unreachable third owner is hinted").to.equal(1);
      expect(c.node("n1").store.peek(key)?.value).to.equal("v");
      await c.stop();
    }),
  );

  it(
    "a delete forwarded by an owner leaves the primary's tombstone on the forwarder",
    withSeed(403, async () => {
      const c = await simCluster({ nodes: 3, seed: 403, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n3");
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("x"), 0, "all");
      const pushedToN1 = countPushes(c, "n1");
      const d = await c.node("n1").cache.admitWrite().remove(key, "quorum");
      expect(d.applied).to.equal(true);
      await c.settle();
      expect(pushedToN1.records, "no tombstone pushed back to the forwarder").to.equal(0);
      expect(c.node("n1").store.peek(key)).to.include({ tombstone: true, version: d.version, origin: "n3" });
      await c.stop();
    }),
  );

  it(
    "a non-owner forwarding a write keeps no copy, and the primary pushes to every other owner",
    withSeed(404, async () => {
      const c = await simCluster({ nodes: 5, seed: 404, startLoops: false, env: { SERVICE_REPLICATION: "3" } });
      const key = keyWhere(c, (o) => !o.ids.includes("n1"));
      const { ids, primary } = ownersOf(c, key);
      const pushes = ids.filter((id) => id !== primary).map((id) => countPushes(c, id));
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "all");
      await c.settle();
      expect(pushes.map((p) => p.records)).to.deep.equal([1, 1]);
      expect(c.node("n1").store.peek(key)).to.equal(undefined);
      for (const id of ids) expect(c.node(id).store.peek(key)?.value, id).to.equal("v");
      await c.stop();
    }),
  );

  it(
    "a forwarding owner that refuses the primary's result answers 503 UNAVAILABLE, not 200: the primary counted it among the acknowledgements",
    withSeed(405, async () => {
      // The primary's clock is more than PEER_VERSION_AHEAD_MAX_MS ahead of n1's (its versions are
      // microseconds of its clock): n1 refuses the stamped record. The third owner is unreachable,
      // so the QUORUM of 2 was the primary and n1, and n1 holds nothing.
      const c = await simCluster({ nodes: 3, seed: 405, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n2");
      c.chaos.isolate("n3");
      primaryClockAhead(c, "n2", { counted: true });
      const e = await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "quorum"), "UNAVAILABLE");
      expect(e.message).to.match(/refused/);
      expect(c.node("n1").store.peek(key)).to.equal(undefined);
      await c.stop();
    }),
  );

  it(
    "a refused result the primary did not count (an older primary, or one whose ring does not list the forwarder) is no error: 200",
    withSeed(406, async () => {
      const c = await simCluster({ nodes: 3, seed: 406, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n2");
      // As an older primary answers: no sender_counted (it reached its quorum with n3's ack).
      primaryClockAhead(c, "n2", { counted: false });
      const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "quorum");
      expect(r.applied).to.equal(true);
      expect(c.node("n1").store.peek(key)).to.equal(undefined);
      await c.stop();
    }),
  );
});
