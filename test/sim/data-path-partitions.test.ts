// Partitions of a 5-node cluster into {n1, n2} | {n3, n4, n5}. While the other side is merely
// unreachable a minority write reaches too few owners; once the minority has pruned the majority
// the majority check (strict majority of known nodes not dead) refuses QUORUM/ALL writes before
// they are applied anywhere, while ONE writes stay available. A manual removal lowers the count.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { expectCacheError, keyWhere, storedEverywhere, text } from "./data-path-fixtures.js";

const MINORITY = ["n1", "n2"];
const MAJORITY = ["n3", "n4", "n5"];

describe("sim/data path: partitions (5 nodes, {n1,n2} | {n3,n4,n5})", () => {
  const cluster = simClusters();

  async function partitioned(seed: number): Promise<SimCluster> {
    const c = await cluster({ nodes: 5, seed, startLoops: false });
    c.chaos.partition(MINORITY, MAJORITY);
    return c;
  }

  function prune(c: SimCluster, on: readonly string[], ids: readonly string[]): void {
    for (const at of on) {
      for (const id of ids) {
        c.node(at).members.markSuspect(id);
        expect(c.node(at).members.prune(id), `${at} prunes ${id}`).to.equal(true);
      }
    }
  }

  const onlyN1OfMinority = (ids: readonly string[]) => ids.includes("n1") && !ids.includes("n2");

  describe("before anyone is pruned (the other side merely unreachable)", () => {
    it(
      "a QUORUM write through the minority coordinator (n1 primary, replicas in the majority) fails with QUORUM_FAILED, applied only on n1",
      withSeed(121, async () => {
        const c = await partitioned(121);
        const key = keyWhere(c, (o) => o.primary === "n1" && onlyN1OfMinority(o.ids), "minq");
        const err = await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("m"), 0, "quorum"), "QUORUM_FAILED");
        expect(err.details).to.include({ acknowledged: 1, required: 2 });
        expect(c.node("n1").metrics.get("dist.write.quorum_failures")).to.equal(1);
        await c.settle();
        expect(storedEverywhere(c, key)).to.deep.equal({ n1: "m", n2: undefined, n3: undefined, n4: undefined, n5: undefined });
      }),
    );

    it(
      "a QUORUM write through a minority replica owner whose primary is across the partition is promoted but still fails with QUORUM_FAILED",
      withSeed(122, async () => {
        const c = await partitioned(122);
        const key = keyWhere(c, (o) => MAJORITY.includes(o.primary) && onlyN1OfMinority(o.ids), "minp");
        await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("p"), 0, "quorum"), "QUORUM_FAILED");
        expect(c.node("n1").metrics.get("dist.write.forward_promotion")).to.equal(1);
        for (const id of MAJORITY) expect(c.node(id).store.peek(key), id).to.equal(undefined);
      }),
    );

    it(
      "a write through the minority for a key owned only by majority nodes fails with UNAVAILABLE (not an owner, primary unreachable)",
      withSeed(123, async () => {
        const c = await partitioned(123);
        const key = keyWhere(c, (o) => o.ids.every((id) => MAJORITY.includes(id)), "minx");
        await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("x"), 0, "one"), "UNAVAILABLE");
        expect(storedEverywhere(c, key)).to.deep.equal({ n1: undefined, n2: undefined, n3: undefined, n4: undefined, n5: undefined });
      }),
    );

    it(
      "the majority side keeps accepting QUORUM writes for a key with two majority owners",
      withSeed(124, async () => {
        const c = await partitioned(124);
        const key = keyWhere(c, (o) => MAJORITY.includes(o.primary) && o.ids.filter((id) => MAJORITY.includes(id)).length >= 2, "majq");
        const r = await c.node("n3").cache.admitWrite().set(key, fromUtf8("maj"), 0, "quorum");
        expect(MAJORITY).to.include(r.origin);
      }),
    );

    it(
      "ONE writes through the minority stay available for keys it owns",
      withSeed(125, async () => {
        const c = await partitioned(125);
        const key = keyWhere(c, (o) => o.primary === "n1" && onlyN1OfMinority(o.ids), "mino");
        const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("one"), 0, "one");
        expect(r.origin).to.equal("n1");
        expect(text((await c.node("n1").cache.get(key, "one")).item?.value)).to.equal("one");
      }),
    );
  });

  describe("after the minority has pruned the majority", () => {
    it(
      "QUORUM and ALL writes through n1 and n2 are refused with QUORUM_FAILED and applied nowhere (a new key stays absent on every node)",
      withSeed(131, async () => {
        const c = await partitioned(131);
        prune(c, MINORITY, MAJORITY);
        expect(c.node("n1").members.knownCount()).to.equal(5);
        expect(c.node("n1").members.notDeadCount()).to.equal(2);
        for (const via of MINORITY) {
          for (const level of ["quorum", "all"] as const) {
            const key = `refused-${via}-${level}`;
            const err = await expectCacheError(c.node(via).cache.admitWrite().set(key, fromUtf8("no"), 0, level), "QUORUM_FAILED");
            expect(err.status).to.equal(503);
            await expectCacheError(c.node(via).cache.admitWrite().remove(key, level), "QUORUM_FAILED");
            await c.settle();
            expect(storedEverywhere(c, key), key).to.deep.equal({ n1: undefined, n2: undefined, n3: undefined, n4: undefined, n5: undefined });
          }
        }
        const failures = c.node("n1").metrics.get("dist.write.quorum_failures") + c.node("n2").metrics.get("dist.write.quorum_failures");
        expect(failures, "each refused write counted by its coordinator").to.be.at.least(8);
        expect(c.node("n1").hints.size() + c.node("n2").hints.size(), "nothing queued either").to.equal(0);
      }),
    );

    it(
      "the majority check also refuses an existing key: its value is left untouched on n1 and n2",
      withSeed(132, async () => {
        const c = await cluster({ nodes: 5, seed: 132, startLoops: false });
        const key = keyWhere(c, (o) => o.ids.includes("n1") && o.ids.includes("n2"), "kept");
        await c.node("n1").cache.admitWrite().set(key, fromUtf8("before"), 0, "all");
        c.chaos.partition(MINORITY, MAJORITY);
        prune(c, MINORITY, MAJORITY);
        await expectCacheError(c.node("n2").cache.admitWrite().set(key, fromUtf8("after"), 0, "quorum"), "QUORUM_FAILED");
        await expectCacheError(c.node("n1").cache.admitWrite().remove(key, "quorum"), "QUORUM_FAILED");
        await c.settle();
        expect(text(c.node("n1").store.peek(key)?.value)).to.equal("before");
        expect(text(c.node("n2").store.peek(key)?.value)).to.equal("before");
      }),
    );

    it(
      "ONE writes stay available on the minority and replicate between n1 and n2",
      withSeed(133, async () => {
        const c = await partitioned(133);
        prune(c, MINORITY, MAJORITY);
        const key = "one-after-prune";
        expect([...c.node("n1").cache.owners(key).ids].sort()).to.deep.equal(["n1", "n2"]);
        const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("still up"), 0, "one");
        expect(MINORITY).to.include(r.origin);
        await c.settle();
        expect(text(c.node("n1").store.peek(key)?.value)).to.equal("still up");
        expect(text(c.node("n2").store.peek(key)?.value)).to.equal("still up");
        const rm = await c.node("n2").cache.admitWrite().remove(key, "one");
        expect(rm.applied).to.equal(true);
      }),
    );

    it(
      "the majority side that pruned the minority keeps accepting QUORUM writes for every key (3 of 5 known nodes not dead)",
      withSeed(134, async () => {
        const c = await partitioned(134);
        prune(c, MAJORITY, MINORITY);
        for (let i = 0; i < 10; i++) {
          const key = `maj-${i}`;
          const r = await c.node("n3").cache.admitWrite().set(key, fromUtf8(`v${i}`), 0, "quorum");
          expect(MAJORITY).to.include(r.origin);
        }
      }),
    );

    it(
      "a manual removal lowers the known count: after n1 and n2 remove n3..n5, QUORUM writes through n1 succeed on n1 and n2",
      withSeed(135, async () => {
        const c = await partitioned(135);
        prune(c, MINORITY, MAJORITY);
        await expectCacheError(c.node("n1").cache.admitWrite().set("manual", fromUtf8("x"), 0, "quorum"), "QUORUM_FAILED");
        for (const at of MINORITY) for (const id of MAJORITY) c.node(at).members.remove(id);
        expect(c.node("n1").members.knownCount()).to.equal(2);
        const r = await c.node("n1").cache.admitWrite().set("manual", fromUtf8("accepted"), 0, "quorum");
        expect(MINORITY).to.include(r.origin);
        await c.settle();
        expect(text(c.node("n1").store.peek("manual")?.value)).to.equal("accepted");
        expect(text(c.node("n2").store.peek("manual")?.value)).to.equal("accepted");
        // ALL now needs R = min(3, 2) = 2 acknowledgements, which n1 and n2 give.
        await c.node("n2").cache.admitWrite().set("manual", fromUtf8("all"), 0, "all");
      }),
    );

    it(
      "a manual removal of unreachable, not yet pruned nodes lowers the known count too: QUORUM writes through n1 succeed",
      withSeed(137, async () => {
        const c = await partitioned(137);
        for (const at of MINORITY) for (const id of MAJORITY) expect(c.node(at).members.remove(id), `${at} removes ${id}`).to.equal(true);
        expect(c.node("n1").members.knownCount()).to.equal(2);
        const r = await c.node("n1").cache.admitWrite().set("manual-early", fromUtf8("accepted"), 0, "quorum");
        expect(MINORITY).to.include(r.origin);
      }),
    );

    it(
      "a partial manual removal restores the majority: with n3 and n4 removed (3 known, 2 not dead) QUORUM writes are accepted again",
      withSeed(136, async () => {
        const c = await partitioned(136);
        prune(c, MINORITY, MAJORITY);
        for (const at of MINORITY) for (const id of ["n3", "n4"]) c.node(at).members.remove(id);
        expect(c.node("n1").members.knownCount()).to.equal(3);
        await c.node("n1").cache.admitWrite().set("partial", fromUtf8("ok"), 0, "quorum");
        // R = min(3, 3) = 3 with only two owners on the ring: ALL cannot be met.
        await expectCacheError(c.node("n1").cache.admitWrite().set("partial", fromUtf8("all"), 0, "all"), "QUORUM_FAILED");
      }),
    );
  });

  it(
    "QUORUM and ALL reads on the minority side are refused like writes (it may have re-owned keys it never held, or missed deletes); ONE reads stay available",
    withSeed(134, async () => {
      const c = await cluster({ nodes: 5, seed: 134, startLoops: false });
      const key = keyWhere(c, (o) => o.ids.includes("n1") && o.ids.includes("n2"), "minority-read");
      await c.node("n3").cache.admitWrite().set(key, fromUtf8("before"), 0, "all");
      c.chaos.partition(MINORITY, MAJORITY);
      prune(c, MINORITY, MAJORITY);
      for (const level of ["quorum", "all"] as const) await expectCacheError(c.node("n1").cache.get(key, level), "QUORUM_FAILED");
      expect(text((await c.node("n1").cache.get(key, "one")).item?.value)).to.equal("before");
      expect(c.node("n1").metrics.get("dist.read.quorum_failures"), "both refusals counted").to.equal(2);
      expect(c.node("n1").metrics.get("dist.read.abstained_failures"), "no owner abstained: the node is on the minority side").to.equal(0);
    }),
  );

  it(
    "QUORUM reads are refused as soon as the majority is suspect, before it is declared dead (chaos seed 1001: the minority side read deleted values while its peers were only suspect)",
    withSeed(135, async () => {
      const c = await cluster({ nodes: 5, seed: 135, startLoops: false });
      const key = keyWhere(c, (o) => o.ids.includes("n1") && o.ids.includes("n2"), "suspect-read");
      await c.node("n3").cache.admitWrite().set(key, fromUtf8("before"), 0, "all");
      c.chaos.partition(MINORITY, MAJORITY);
      for (const at of MINORITY) for (const id of MAJORITY) c.node(at).members.markSuspect(id);
      await expectCacheError(c.node("n1").cache.get(key, "quorum"), "QUORUM_FAILED");
      expect(text((await c.node("n1").cache.get(key, "one")).item?.value)).to.equal("before");
    }),
  );
});
