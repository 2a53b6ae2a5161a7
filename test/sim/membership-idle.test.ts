// An idle, healthy cluster is quiet: ten seconds without writes move no incarnation, no
// membership version, no dist.rebalance.* or dist.migration.* metric, and log nothing above debug.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { membershipFingerprint, rebalanceCounters, recordMarks } from "./membership-fixtures.js";

const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_REBALANCE_INTERVAL: "250ms" };

describe("sim/membership: an idle cluster is quiet", () => {
  const cluster = simClusters();

  /** Advances 10 s and asserts nothing moved and nothing above debug was logged. */
  async function expectQuietFor10s(c: SimCluster): Promise<void> {
    const fingerprint = membershipFingerprint(c);
    const counters = rebalanceCounters(c);
    const marks = recordMarks(c);
    const calls = c.nodes.map((n) => n.node.peerCalls());
    await c.advance(10_000);
    expect(membershipFingerprint(c), "incarnations, states and membership versions").to.deep.equal(fingerprint);
    expect(rebalanceCounters(c), "dist.rebalance.* and dist.migration.*").to.deep.equal(counters);
    for (const n of c.nodes) {
      const loud = n.logger.records.slice(marks[n.id]).filter((r) => r.level !== "debug");
      expect(loud.map((r) => `${r.level} ${r.message}`), `${n.id} records above debug`).to.deep.equal([]);
    }
    expect(c.nodes.map((n) => n.node.peerCalls()), "no data-path peer calls").to.deep.equal(calls);
  }

  it(
    "3 nodes holding data, 10 s without writes: incarnations, membership version, rebalance counters unchanged, no record above debug",
    withSeed(261, async () => {
      const c = await cluster({ nodes: 3, seed: 261, env: ENV });
      await c.advance(1_000);
      for (let i = 0; i < 50; i++) await c.node(`n${(i % 3) + 1}`).cache.admitWrite().set(`idle-${i}`, fromUtf8("v"), 0, "quorum");
      await c.advance(2_000);
      await expectQuietFor10s(c);
      for (const n of c.nodes) for (const m of n.node.members.list()) expect(m.incarnation, `${n.id} sees ${m.id}`).to.equal(1);
    }),
  );

  it(
    "after a node joined and the rebalance finished, the cluster is quiet again: the scan does not run over unchanged keys",
    withSeed(262, async () => {
      const c = await cluster({ nodes: 3, seed: 262, env: ENV });
      await c.advance(1_000);
      for (let i = 0; i < 100; i++) await c.node("n1").cache.admitWrite().set(`idle-${i}`, fromUtf8("v"), 0, "all");
      c.join("n4", ENV);
      await c.advance(2_000);
      expect(c.nodes.reduce((s, n) => s + n.node.metrics.get("dist.rebalance.keys"), 0)).to.be.greaterThan(0);
      await expectQuietFor10s(c);
    }),
  );
});
