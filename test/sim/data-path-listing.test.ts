// The cluster-wide key listing (listKeys): the union of every node's live keys, deduplicated,
// sorted, capped by max; a peer whose listing fails is named in partialNodes.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";

describe("sim/data path: key listing across nodes", () => {
  const cluster = simClusters();

  const names = Array.from({ length: 40 }, (_, i) => `user:${String(i).padStart(2, "0")}`);

  async function filled(seed: number): Promise<SimCluster> {
    const c = await cluster({ nodes: 5, seed, startLoops: false });
    for (const [i, k] of names.entries()) await c.node(`n${(i % 5) + 1}`).cache.admitWrite().set(k, fromUtf8(k), 0, "all");
    await c.node("n3").cache.admitWrite().set("order:1", fromUtf8("o"), 0, "all");
    return c;
  }

  it(
    "every node returns the same sorted, deduplicated union of all keys, with no partial nodes",
    withSeed(141, async () => {
      const c = await filled(141);
      const expected = ["order:1", ...names];
      // No single node holds every key (5 nodes, replication 3).
      for (const n of c.nodes) expect(n.node.store.items, n.id).to.be.lessThan(expected.length);
      for (const n of c.nodes) {
        const l = await n.node.cache.listKeys("", 10_000);
        expect(l.keys, n.id).to.deep.equal(expected);
        expect(l.truncated, n.id).to.equal(false);
        expect(l.partialNodes, n.id).to.deep.equal([]);
      }
    }),
  );

  it(
    "a prefix and a glob filter the union",
    withSeed(142, async () => {
      const c = await filled(142);
      expect((await c.node("n2").cache.listKeys("order:", 10_000)).keys).to.deep.equal(["order:1"]);
      expect((await c.node("n4").cache.listKeys("user:?5", 10_000)).keys).to.deep.equal(["user:05", "user:15", "user:25", "user:35"]);
    }),
  );

  it(
    "max keeps the first keys in sort order and reports truncated",
    withSeed(143, async () => {
      const c = await filled(143);
      const l = await c.node("n5").cache.listKeys("user:", 3);
      expect(l.keys).to.deep.equal(["user:00", "user:01", "user:02"]);
      expect(l.truncated).to.equal(true);
    }),
  );

  it(
    "a crashed peer is named in partialNodes and the call still answers with the keys the others hold",
    withSeed(144, async () => {
      const c = await filled(144);
      c.crash("n4");
      const l = await c.node("n1").cache.listKeys("", 10_000);
      expect(l.partialNodes).to.deep.equal(["n4"]);
      // Every key has two more owners, so the union is still complete.
      expect(l.keys).to.deep.equal(["order:1", ...names]);
      c.crash("n5");
      expect((await c.node("n1").cache.listKeys("", 10_000)).partialNodes).to.deep.equal(["n4", "n5"]);
    }),
  );

  it(
    "a peer this node suspects is named in partialNodes without being asked (its listing would wait for the peer timeout)",
    withSeed(146, async () => {
      const c = await filled(146);
      c.crash("n4");
      c.node("n1").members.markSuspect("n4");
      const l = await c.node("n1").cache.listKeys("", 10_000);
      expect(l.partialNodes).to.deep.equal(["n4"]);
      expect(l.keys).to.deep.equal(["order:1", ...names]);
    }),
  );

  it(
    "deleted and expired keys are not listed on any node",
    withSeed(145, async () => {
      const c = await filled(145);
      await c.node("n2").cache.admitWrite().remove("user:07", "all");
      await c.node("n2").cache.admitWrite().set("temp:1", fromUtf8("t"), 1_000, "all");
      expect((await c.node("n5").cache.listKeys("temp:", 100)).keys).to.deep.equal(["temp:1"]);
      await c.advance(1_000);
      for (const n of c.nodes) {
        const l = await n.node.cache.listKeys("", 10_000);
        expect(l.keys, n.id).to.not.include("user:07");
        expect(l.keys, n.id).to.not.include("temp:1");
        expect(l.keys, n.id).to.have.length(40);
      }
    }),
  );
});
