// A touch reaches the other owners without its value: an owner that holds the item touched (by
// version and origin) applies the new version and expiry on top of it; one that does not (no copy,
// another version) answers base-missing and gets the full item in a second push. A failed push
// becomes a hint of the full item. Every owner ends with the value and the touched version.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import type { PeerEndpoint, TouchPush } from "../../src/transport/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { keyWhere, ownersOf, rec, text } from "./data-path-fixtures.js";

/** Counts what `id` receives of `key`: records pushed in Set calls, and touches pushed without values. */
function countReceived(c: SimCluster, id: string, key: string): { records: number; touches: TouchPush[] } {
  const counter = { records: 0, touches: [] as TouchPush[] };
  const endpoint = c.node(id).endpoint;
  const applySet: PeerEndpoint["applySet"] = (from, records, checks) => {
    counter.records += records.filter((r) => r.key === key).length;
    return endpoint.applySet(from, records, checks);
  };
  const applyTouches: PeerEndpoint["applyTouches"] = (from, touches) => {
    counter.touches.push(...touches.filter((t) => t.key === key));
    return endpoint.applyTouches(from, touches);
  };
  c.network.register(c.sim(id).address, { ...endpoint, applySet, applyTouches });
  return counter;
}

/**
 * A 3-node cluster past its settle window (the hint TTL here), so the primary trusts its own copy
 * and reads no quorum (whose repair would push full items) before a touch.
 */
async function settledCluster(cluster: ReturnType<typeof simClusters>, seed: number): Promise<SimCluster> {
  const c = await cluster({ nodes: 3, seed, env: { SERVICE_HINT_TTL: "20s" } });
  await c.advance(21_000);
  return c;
}

/** Writes `value` at ALL (10 s TTL) under a key whose primary is n1, and lets every owner store it. */
async function heldByEveryOwner(c: SimCluster, prefix: string, value: string): Promise<{ key: string; written: { version: number; origin: string } }> {
  const key = keyWhere(c, (o) => o.primary === "n1", prefix);
  const written = await c.node("n1").cache.admitWrite().set(key, fromUtf8(value), 10_000, "all");
  await c.settle();
  return { key, written };
}

function expectTouched(c: SimCluster, key: string, t: { version: number; origin: string; expiresAtMs: number }, value: string): void {
  for (const id of ownersOf(c, key).ids) {
    const held = c.node(id).store.peek(key);
    expect(held, id).to.include({ version: t.version, origin: t.origin, expiresAtMs: t.expiresAtMs, tombstone: false });
    expect(text(held?.value), id).to.equal(value);
  }
}

describe("sim/touch replication: metadata only to owners holding the item", () => {
  const cluster = simClusters();

  it(
    "a touch through the primary at ALL: both replicas get the touch without the value, no Set record, and hold the value with the new version and expiry",
    withSeed(471, async () => {
      const c = await settledCluster(cluster, 471);
      const value = "v".repeat(4096);
      const { key, written: w } = await heldByEveryOwner(c, "tmeta", value);
      const seen = { n2: countReceived(c, "n2", key), n3: countReceived(c, "n3", key) };
      const t = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 600_000 }, "all");
      await c.settle();
      for (const [id, got] of Object.entries(seen)) {
        expect(got.records, `${id}: no value pushed`).to.equal(0);
        expect(got.touches, id).to.deep.equal([
          { key, baseVersion: w.version, baseOrigin: w.origin, version: t.version, origin: "n1", expiresAtMs: t.expiresAtMs, lastUpdatedMs: Math.floor(t.version / 1000), owners: ownersOf(c, key).ids },
        ]);
        expect(c.node(id).metrics.get("dist.replica.touches_in_place"), id).to.equal(1);
      }
      expectTouched(c, key, t, value);
      expect(c.node("n1").metrics.get("dist.write.touch_pushes")).to.equal(2);
      expect(c.node("n1").metrics.get("dist.write.touch_full_pushes")).to.equal(0);
      // A persist travels the same way (expiry 0).
      const p = await c.node("n1").cache.admitWrite().touch(key, { persist: true }, "all");
      await c.settle();
      expect(seen.n2.records + seen.n3.records).to.equal(0);
      expectTouched(c, key, p, value);
      expect(p.expiresAtMs).to.equal(0);
    }),
  );

  it(
    "an owner without the item, and one holding an older version of it: base-missing, then the full item; both end with the touched item",
    withSeed(472, async () => {
      const c = await settledCluster(cluster, 472);
      const key = keyWhere(c, (o) => o.primary === "n1", "tfull");
      const old = await c.node("n1").cache.admitWrite().set(key, fromUtf8("old"), 0, "all");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("current"), 10_000, "all");
      await c.settle();
      // n2 lost the key (evicted, say); n3 holds the version before the last write (it missed it).
      expect(c.node("n2").store.removeLocal(key)).to.equal(true);
      expect(c.node("n3").store.removeLocal(key)).to.equal(true);
      c.node("n3").store.apply(rec(key, "old", old.version, old.origin));
      const seen = { n2: countReceived(c, "n2", key), n3: countReceived(c, "n3", key) };
      const t = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 600_000 }, "all");
      await c.settle();
      for (const [id, got] of Object.entries(seen)) {
        expect(got.touches.map((x) => x.baseVersion), id).to.deep.equal([w.version]);
        expect(got.records, `${id}: the full item after base-missing`).to.equal(1);
        expect(c.node(id).metrics.get("dist.replica.touches_in_place"), id).to.equal(0);
      }
      expect(c.node("n1").metrics.get("dist.write.touch_full_pushes")).to.equal(2);
      expect(c.node("n1").metrics.get("dist.write.precondition_reads")).to.equal(0);
      expectTouched(c, key, t, "current");
    }),
  );

  it(
    "a replica unreachable during a QUORUM touch gets the full item as a hint, and holds the touched item after it comes back",
    withSeed(473, async () => {
      const c = await settledCluster(cluster, 473);
      const { key } = await heldByEveryOwner(c, "thint", "hinted");
      c.chaos.isolate("n3");
      const t = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 600_000 }, "quorum");
      await c.settle();
      expect(c.node("n1").metrics.get("dist.hinted.queued")).to.equal(1);
      expect(c.node("n3").store.peek(key)?.version).to.be.lessThan(t.version);
      // n3 loses its copy too: only a hint of the full item (not a touch) can bring the value back.
      expect(c.node("n3").store.removeLocal(key)).to.equal(true);
      c.chaos.heal();
      await c.advance(10_000);
      expect(c.node("n1").metrics.get("dist.hinted.replayed")).to.be.at.least(1);
      expectTouched(c, key, t, "hinted");
    }),
  );

  it(
    "an owner that refuses a touch (its owner list differs) is hinted the full item; one that answers stale is not",
    withSeed(474, async () => {
      const c = await settledCluster(cluster, 474);
      const { key } = await heldByEveryOwner(c, "trefuse", "held");
      for (const [id, kind] of [["n2", "refused"], ["n3", "stale"]] as const) {
        const endpoint = c.node(id).endpoint;
        const applyTouches: PeerEndpoint["applyTouches"] = (_from, touches) => touches.map(() => ({ kind, version: kind === "stale" ? 2 ** 52 : 0, origin: kind === "stale" ? "n0" : "" }));
        c.network.register(c.sim(id).address, { ...endpoint, applyTouches });
      }
      // Neither answer acknowledges: the QUORUM touch fails, and what the primary queued is the point.
      const failed = await c.node("n1").cache.admitWrite().touch(key, { ttlMs: 600_000 }, "quorum").then(() => undefined, (err: unknown) => err);
      expect(failed).to.have.property("code", "QUORUM_FAILED");
      await c.settle();
      expect(c.node("n1").hints.size("n2"), "refused: hinted in full").to.equal(1);
      expect(c.node("n1").hints.size("n3"), "stale: the receiver holds newer").to.equal(0);
    }),
  );
});
