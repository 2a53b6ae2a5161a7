// Batch operations (setMany / getMany / removeMany) through a node that is not the primary of
// the keys: one result per item in request order, same-key items applied in order, and a failing
// item reported in place without failing the batch.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { CacheError } from "../../src/core/errors.js";
import type { ReadResult, WriteResult } from "../../src/cluster/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { keysWhere, keyWhere, nonOwnersOf, text } from "./data-path-fixtures.js";

function ok<T>(r: T | CacheError, label: string): T {
  if (r instanceof CacheError) expect.fail(`${label}: unexpected ${r.code} ${r.message}`);
  return r;
}

describe("sim/data path: batch operations", () => {
  const cluster = simClusters();

  it(
    "setMany through a non-primary gives one result per item, in order, each coordinated by its key's primary",
    withSeed(151, async () => {
      const c = await cluster({ nodes: 5, seed: 151, startLoops: false });
      const keys = keysWhere(c, 6, (o) => o.primary !== "n1", "bs");
      const results = await c.node("n1").cache.admitWrite().setMany(keys.map((k, i) => ({ key: k, value: fromUtf8(`v${i}`), ttlMs: 0 })), "quorum");
      expect(results).to.have.length(keys.length);
      results.forEach((r, i) => {
        const w = ok<WriteResult>(r, keys[i]!);
        expect(w.key).to.equal(keys[i]);
        expect(w.origin).to.equal(w.owners.primary);
        expect(w.owners.ids).to.deep.equal(c.node("n1").cache.owners(keys[i]!).ids);
      });
      for (const [i, k] of keys.entries()) {
        for (const n of c.nodes) expect(text((await n.node.cache.get(k)).item?.value), `${k} on ${n.id}`).to.equal(`v${i}`);
      }
    }),
  );

  it(
    "same-key items in one setMany end with the last value, with increasing versions in item order",
    withSeed(152, async () => {
      const c = await cluster({ nodes: 3, seed: 152, startLoops: false });
      const key = keyWhere(c, (o) => o.primary === "n2", "same");
      const items = ["first", "second", "third"].map((v) => ({ key, value: fromUtf8(v), ttlMs: 0 }));
      const results = (await c.node("n1").cache.admitWrite().setMany(items, "all")).map((r, i) => ok<WriteResult>(r, `item ${i}`));
      expect(results[1]!.version).to.be.greaterThan(results[0]!.version);
      expect(results[2]!.version).to.be.greaterThan(results[1]!.version);
      await c.settle();
      for (const n of c.nodes) {
        expect(text(n.node.store.peek(key)?.value), n.id).to.equal("third");
        expect(n.node.store.peek(key)?.version, n.id).to.equal(results[2]!.version);
      }
    }),
  );

  it(
    "getMany and removeMany through a non-primary answer one result per item in order, missing and repeated keys included",
    withSeed(153, async () => {
      const c = await cluster({ nodes: 5, seed: 153, startLoops: false });
      const keys = keysWhere(c, 3, (o) => o.primary !== "n5", "br");
      await c.node("n5").cache.admitWrite().setMany(keys.map((k) => ({ key: k, value: fromUtf8(`val-${k}`), ttlMs: 0 })), "all");
      const got = await c.node("n5").cache.getMany([keys[2]!, "missing-key", keys[0]!], "quorum");
      expect(got).to.have.length(3);
      expect(text(ok<ReadResult>(got[0]!, "0").item?.value)).to.equal(`val-${keys[2]}`);
      expect(ok<ReadResult>(got[1]!, "1").item).to.equal(undefined);
      expect(text(ok<ReadResult>(got[2]!, "2").item?.value)).to.equal(`val-${keys[0]}`);
      const removed = await c.node("n5").cache.admitWrite().removeMany([keys[1]!, "missing-key", keys[1]!], "all");
      const rs = removed.map((r, i) => ok<WriteResult>(r, `rm ${i}`));
      expect(rs.map((r) => r.key)).to.deep.equal([keys[1], "missing-key", keys[1]]);
      expect(rs.map((r) => r.applied)).to.deep.equal([true, false, false]);
      expect(rs[0]!.bytes).to.equal(`val-${keys[1]}`.length);
      for (const n of c.nodes) expect((await n.node.cache.get(keys[1]!)).item, n.id).to.equal(undefined);
    }),
  );

  it(
    "a failing item does not fail the batch: items whose primary is down and which this node does not own get UNAVAILABLE in place",
    withSeed(154, async () => {
      const c = await cluster({ nodes: 5, seed: 154, startLoops: false });
      const doomed = keyWhere(c, (o) => o.primary === "n4" && !o.ids.includes("n1"), "bf-down");
      const fine = keysWhere(c, 2, (o) => !o.ids.includes("n4"), "bf-up");
      expect(nonOwnersOf(c, doomed)).to.include("n1");
      c.crash("n4");
      const results = await c.node("n1").cache.admitWrite().setMany(
        [
          { key: fine[0]!, value: fromUtf8("a"), ttlMs: 0 },
          { key: doomed, value: fromUtf8("b"), ttlMs: 0 },
          { key: fine[1]!, value: fromUtf8("c"), ttlMs: 0 },
        ],
        "quorum",
      );
      expect(results).to.have.length(3);
      expect(ok<WriteResult>(results[0]!, "0").key).to.equal(fine[0]);
      expect(results[1]).to.be.instanceOf(CacheError);
      expect((results[1] as CacheError).code).to.equal("UNAVAILABLE");
      expect(ok<WriteResult>(results[2]!, "2").key).to.equal(fine[1]);
      await c.settle();
      const got = await c.node("n1").cache.getMany([fine[1]!, fine[0]!]);
      expect(got.map((g) => text(ok<ReadResult>(g, "get").item?.value))).to.deep.equal(["c", "a"]);
    }),
  );
});
