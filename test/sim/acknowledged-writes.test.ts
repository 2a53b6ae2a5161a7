// An acknowledged write is the newest, and a refused record is never dropped (hardening §3).
// - Quorum counts only owners that stored the write (or hold exactly that version and origin):
//   a "stale" answer (the owner holds a newer version) makes the coordinator stamp above it and
//   push again; "refused" (not an owner in the receiver's view) does not count.
// - A migration is delivered only when the target applied the record or holds a newer one; a
//   refused record stays on the sender, is retried and counted, and is never released.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import type { PeerEndpoint } from "../../src/transport/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { keysWhere, keyWhere, storedEverywhere, text } from "./data-path-fixtures.js";

describe("sim/acknowledged writes: quorum counts owners that stored the write", () => {
  const cluster = simClusters();

  it(
    "a primary restarted empty stamps below what the replicas hold: they answer stale, it stamps above and pushes again, and the acknowledged value is the one every owner keeps",
    withSeed(501, async () => {
      const c = await cluster({ nodes: 3, seed: 501 });
      await c.advance(1_000);
      const key = keyWhere(c, (o) => o.primary === "n1", "restamp");
      // Three writes within one millisecond: versions T, T+1, T+2 on every owner.
      for (const v of ["old-1", "old-2", "old-3"]) await c.node("n1").cache.admitWrite().set(key, fromUtf8(v), 0, "all");
      const held = c.node("n2").store.peek(key)?.version as number;
      // The primary restarts with an empty store and a fresh version clock, at the same instant.
      await c.restart("n1");
      const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("new"), 0, "quorum");
      expect(w.version, "the acknowledged version is above what the replicas held").to.be.greaterThan(held);
      await c.settle();
      expect(storedEverywhere(c, key)).to.deep.equal({ n1: "new", n2: "new", n3: "new" });
      await c.advance(1_000); // n1's start-up catch-up: until it is done n1 does not count towards quorum reads
      expect(text((await c.node("n2").cache.get(key, "all")).item?.value)).to.equal("new");
    }),
  );

  it(
    "an owner that refuses a replica write (it is not an owner in its own view) does not count towards the quorum",
    withSeed(502, async () => {
      const c = await cluster({ nodes: 3, seed: 502 });
      await c.advance(1_000);
      const key = keyWhere(c, (o) => o.primary === "n1", "refused");
      // n2 and n3 answer every pushed record "refused", as a node whose ring view lags would.
      for (const id of ["n2", "n3"]) refuseEverything(c.network, c.sim(id).address, c.node(id).endpoint);
      let failure: unknown;
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "quorum").catch((e: unknown) => (failure = e));
      expect((failure as { code?: string }).code, "refused answers are no acknowledgements").to.equal("QUORUM_FAILED");
    }),
  );
});

describe("sim/acknowledged writes: migrations are delivered only when the target stored the record", () => {
  const cluster = simClusters();

  it(
    "a joining node that answers refused keeps the sender's copies: none is released, the refusals are counted and retried, and once it accepts every key arrives",
    withSeed(503, async () => {
      const env = { SERVICE_REPLICATION: "1", SERVICE_REBALANCE_BATCH_SIZE: "16", SERVICE_HINT_TTL: "60s" };
      const c = await cluster({ nodes: 2, seed: 503, env });
      await c.advance(1_000);
      const keys = keysWhere(c, 60, () => true, "mig");
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v-${k}`), 0, "one");
      const n3 = c.join("n3", env);
      const real = n3.node.endpoint;
      const release = refuseEverything(c.network, n3.address, real);
      await c.advance(3_000);
      const moving = keys.filter((k) => c.node("n1").cache.owners(k).primary === "n3");
      expect(moving.length, "some keys now belong to n3").to.be.greaterThan(5);
      const holders = (k: string) => ["n1", "n2", "n3"].filter((id) => c.node(id).store.peek(k) !== undefined);
      for (const k of moving) expect(holders(k), `${k} while n3 refuses`).to.not.deep.equal([]);
      const refused = ["n1", "n2"].reduce((n, id) => n + c.node(id).metrics.get("dist.migration.refused"), 0);
      expect(refused, "dist.migration.refused").to.be.greaterThan(0);
      release();
      await c.advance(10_000);
      for (const k of moving) expect(text(c.node("n3").store.peek(k)?.value), `${k} on n3 after it accepts`).to.equal(`v-${k}`);
      for (const k of moving) expect(text((await c.node("n2").cache.get(k, "one")).item?.value), k).to.equal(`v-${k}`);
    }),
  );
});

/**
 * Makes the node at `address` answer every pushed record "refused" until the returned function
 * is called (its ring view lags: it does not see itself as an owner yet).
 */
function refuseEverything(network: { register(address: string, e: PeerEndpoint): void }, address: string, real: PeerEndpoint): () => void {
  const refusing: PeerEndpoint = {
    ...real,
    applySet: (_from, records) => records.map(() => ({ kind: "refused", version: 0, origin: "" })),
    applyRemove: (_from, records) => records.map(() => ({ kind: "refused", version: 0, origin: "" })),
  };
  network.register(address, refusing);
  return () => network.register(address, real);
}

describe("sim/acknowledged writes: a forward that arrives after its deadline is not applied", () => {
  const cluster = simClusters();

  it(
    "a forward held up longer than the peer timeout (a partition) is refused unapplied, so it cannot overwrite writes acknowledged since; one in time is applied",
    withSeed(504, async () => {
      const c = await cluster({ nodes: 3, seed: 504 });
      await c.advance(1_000);
      const key = keyWhere(c, (o) => o.primary === "n2", "late-fwd");
      const acked = await c.node("n2").cache.admitWrite().set(key, fromUtf8("acknowledged later"), 0, "all");
      const now = c.clock.nowMs();
      const late = await c.node("n2").endpoint.forward({ from: "n1", consistency: "quorum", writes: [{ kind: "set", key, value: "sent earlier", ttlMs: 0 }], sentAtMs: now - 5_001 });
      expect(late[0]).to.include({ errorCode: "UNAVAILABLE", applied: false });
      await c.settle();
      expect(storedEverywhere(c, key), "the late forward changed nothing").to.deep.equal({ n1: "acknowledged later", n2: "acknowledged later", n3: "acknowledged later" });
      expect(c.node("n2").store.peek(key)?.version).to.equal(acked.version);
      const inTime = await c.node("n2").endpoint.forward({ from: "n1", consistency: "quorum", writes: [{ kind: "set", key, value: "in time", ttlMs: 0 }], sentAtMs: now - 4_000 });
      expect(inTime[0]).to.include({ errorCode: "", applied: true });
    }),
  );
});
