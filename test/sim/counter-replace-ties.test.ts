// A PUT or DELETE that replaces a counter, against merges of counter copies. A merge is stamped
// one unit above the copies it joins (counter-merge.ts). A replacing write stamped one unit above
// the copies it saw, or in the same millisecond as a copy it did not see, tied with or lost to such
// a merge, and an acknowledged DELETE or PUT lost to a merge of older copies: the counter came back
// on every owner (reviews; reproduced with links whose data calls fail while failure detection
// passes, so writes are promoted and hinted). A replacing write is now stamped in a later
// millisecond (VersionClock.nextInLaterMs). The reviews' owner-convergence case stays as a guard.
import { expect } from "chai";
import { CacheError } from "../../src/core/errors.js";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { counterTotal, decodeCounter } from "../../src/core/counter-state.js";
import type { WriteResult } from "../../src/cluster/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { drive, held, incrAt } from "./counter-replace-fixtures.js";
import { keyWhere, text } from "./data-path-fixtures.js";

describe("sim/counter replaced by a PUT or DELETE, against merges of counter copies", () => {
  const cluster = simClusters();

  it(
    "a DELETE acknowledged at QUORUM right after an increment stays deleted when an older hint merges into an owner's copy (the merge tied with the DELETE, one unit above the increment)",
    withSeed(4471, async () => {
      const c = await cluster({ nodes: 3, seed: 4471, env: { SERVICE_REPLICATION: "3", SERVICE_DEAD_AFTER: "600s", SERVICE_HINT_TTL: "600s", SERVICE_TOMBSTONE_TTL: "20m" } });
      await c.advance(2_000);
      const key = keyWhere(c, (o) => o.primary === "n3" && o.ids.length === 3, "tie");
      await drive(c, [incrAt(c, "n3", key, 1, "quorum")]);
      await c.advance(500);
      // n2's writes do not get through for a moment (probes and gossip do): an increment through
      // n2 is promoted there (its own slot); its hints for n1 and n3 wait.
      c.chaos.cutData("n2", "n3");
      c.chaos.cutData("n2", "n1");
      const [viaN2] = await drive(c, [incrAt(c, "n2", key, 1, "one")]);
      expect(viaN2, "the increment through n2").to.not.be.instanceOf(CacheError);
      await c.advance(500);
      // The client increments through the primary (n1 and n3 take it; n3's push to n2 fails),
      // and deletes as soon as it is acknowledged (n2 and n3 take it; n3's push to n1 fails).
      c.chaos.cutData("n3", "n2");
      let incremented = 0;
      const [deleted] = await drive(c, [
        incrAt(c, "n3", key, 1, "quorum").then((r: WriteResult) => {
          incremented = r.version;
          c.chaos.restoreData("n3", "n2");
          c.chaos.cutData("n3", "n1");
          return c.node("n3").cache.admitWrite().remove(key, "quorum");
        }),
      ]);
      expect(deleted, "the DELETE is acknowledged").to.not.be.instanceOf(CacheError);
      expect((deleted as WriteResult).version, "the DELETE is stamped in a later millisecond").to.be.at.least((Math.floor(incremented / 1000) + 1) * 1000);
      // n2's writes get through again: its old hint merges into n1's copy.
      c.chaos.restoreData("n2", "n1");
      c.chaos.restoreData("n2", "n3");
      await c.advance(1_000);
      for (let i = 0; i < 3; i++) await c.node("n2").loops.hints.runReplayTick();
      c.chaos.heal();
      await c.advance(120_000);
      const finals = ["n1", "n2", "n3"].map((id) => `${id}=${held(c, id, key)}`);
      for (const id of ["n1", "n2", "n3"]) {
        const rec = c.node(id).store.peek(key);
        expect(rec === undefined || rec.tombstone, finals.join(" ")).to.equal(true);
      }
      expect((await c.node("n2").cache.read(key, "quorum")).item, "a QUORUM read after the heal").to.equal(undefined);
    }),
  );

  /**
   * The primary n2 takes an increment alone; n3, cut off from n2, takes one over (acknowledged by
   * n3 and n1); n2's old hint merges into n1's copy; then `replace` runs through n2 in the same
   * millisecond. Returns the holdings after the heal, and what happened on the way.
   */
  async function replaceAfterTakeover(seed: number, replace: (c: SimCluster, key: string) => Promise<WriteResult>): Promise<{ c: SimCluster; key: string; log: string; finals: string }> {
    const c = await cluster({ nodes: 3, seed, env: { SERVICE_REPLICATION: "3", SERVICE_DEAD_AFTER: "600s", SERVICE_HINT_TTL: "600s", SERVICE_TOMBSTONE_TTL: "20m" } });
    await c.advance(2_000);
    const key = keyWhere(c, (o) => o.primary === "n2" && o.ids.length === 3, `tie-${seed}`);
    await drive(c, [incrAt(c, "n2", key, 1, "quorum")]);
    await c.advance(500);
    c.chaos.cutData("n2", "n1");
    c.chaos.cutData("n2", "n3");
    const [z] = await drive(c, [incrAt(c, "n2", key, 10, "one")]);
    expect(z).to.not.be.instanceOf(CacheError);
    await c.advance(500);
    c.chaos.cutData("n3", "n2");
    let log = "";
    const [replaced] = await drive(c, [
      incrAt(c, "n3", key, 100, "quorum").then(async (y) => {
        log += `increment acked ${y.counterValue} (${y.version},${y.origin}); `;
        c.chaos.restoreData("n2", "n1");
        await c.node("n2").loops.hints.runReplayTick();
        log += `n1 after the hint: ${held(c, "n1", key)}; `;
        c.chaos.cutData("n2", "n1");
        c.chaos.restoreData("n2", "n3");
        const d = await replace(c, key);
        log += `acked (${d.version},${d.origin}); `;
        return d;
      }),
    ]);
    expect(replaced, "the write is acknowledged").to.not.be.instanceOf(CacheError);
    c.chaos.heal();
    await c.advance(120_000);
    return { c, key, log, finals: ["n1", "n2", "n3"].map((id) => `${id}=${held(c, id, key)}`).join(" ") };
  }

  it(
    "a DELETE acknowledged at QUORUM, stamped in the same ms as an increment a replica took over, stays deleted when an owner merges an older copy into that increment",
    withSeed(5102, async () => {
      const { c, key, log, finals } = await replaceAfterTakeover(5102, (c, key) => c.node("n2").cache.admitWrite().remove(key, "quorum"));
      for (const id of ["n1", "n2", "n3"]) {
        const rec = c.node(id).store.peek(key);
        expect(rec === undefined || rec.tombstone, `${log}${finals}`).to.equal(true);
      }
      expect((await c.node("n2").cache.read(key, "quorum")).item, "a QUORUM read after the heal").to.equal(undefined);
    }),
  );

  it(
    "a plain PUT acknowledged at QUORUM, stamped in the same ms as an increment a replica took over, stays when an owner merges an older copy into that increment",
    withSeed(5103, async () => {
      const { c, key, log, finals } = await replaceAfterTakeover(5103, (c, key) => c.node("n2").cache.admitWrite().set(key, fromUtf8("plain"), 0, "quorum"));
      for (const id of ["n1", "n2", "n3"]) expect(text(c.node(id).store.peek(key)!.value), `${log}${finals}`).to.equal("plain");
    }),
  );

  for (const [seed, clockAhead] of [6101, 6102, 6103].flatMap((sd) => [[sd, false], [sd, true]] as const)) {
    it(
      `a DELETE acknowledged at QUORUM through a primary that never held the counter stays deleted after an older hint merges elsewhere (seed ${seed}${clockAhead ? ", the primary's clock a ms ahead after a DELETE of an absent key in the same ms" : ""}; it was stamped in the increments' millisecond)`,
      withSeed(seed, async () => {
        const c = await cluster({ nodes: 3, seed, env: { SERVICE_REPLICATION: "3", SERVICE_DEAD_AFTER: "600s", SERVICE_HINT_TTL: "600s", SERVICE_TOMBSTONE_TTL: "20m" } });
        await c.advance(2_000);
        const key = keyWhere(c, (o) => o.primary === "n2" && o.ids.length === 3, `nh-${seed}`);
        const other = keyWhere(c, (o) => o.primary === "n2" && o.ids.length === 3, `absent-${seed}`);
        // n1 cannot write to the primary n2: it takes increments over (n3 takes the first too).
        c.chaos.cutData("n1", "n2");
        const [a] = await drive(c, [incrAt(c, "n1", key, 1, "quorum")]);
        expect(a).to.not.be.instanceOf(CacheError);
        await c.advance(500);
        c.chaos.cutData("n1", "n3");
        const [b] = await drive(c, [incrAt(c, "n1", key, 1, "one")]);
        expect(b).to.not.be.instanceOf(CacheError);
        await c.advance(500);
        // n3 takes one alone; then the DELETE through n2 (which holds nothing) reaches n3 only.
        // With clockAhead, n2 first deletes an absent key in the same ms (a cache invalidation),
        // whose tombstone n3's clock observes: n3's increment is stamped in n2's later ms.
        c.chaos.cutData("n3", "n2");
        c.chaos.cutData("n3", "n1");
        let log = "";
        const [deleted] = await drive(c, [
          (clockAhead ? c.node("n2").cache.admitWrite().remove(other, "quorum") : Promise.resolve(undefined)).then(async () => {
            const r = await incrAt(c, "n3", key, 10, "one");
            log += `increment on n3 (${r.version},${r.origin}); n2 holds ${held(c, "n2", key)}; `;
            c.chaos.restoreData("n3", "n2");
            c.chaos.cutData("n2", "n1");
            return c.node("n2").cache.admitWrite().remove(key, "quorum");
          }),
        ]);
        expect(deleted, "the DELETE is acknowledged").to.not.be.instanceOf(CacheError);
        log += `DELETE acked (${(deleted as WriteResult).version},${(deleted as WriteResult).origin}); `;
        // n3's hint of its increment reaches n1 and merges into n1's copy; then everything heals.
        c.chaos.restoreData("n3", "n1");
        for (let i = 0; i < 3; i++) await c.node("n3").loops.hints.runReplayTick();
        c.chaos.heal();
        await c.advance(120_000);
        const finals = ["n1", "n2", "n3"].map((id) => `${id}=${held(c, id, key)}`).join(" ");
        for (const id of ["n1", "n2", "n3"]) {
          const rec = c.node(id).store.peek(key);
          expect(rec === undefined || rec.tombstone, `${log}${finals}`).to.equal(true);
        }
      }),
    );
  }

  it(
    "owners of a counter converge after a non-owner's QUORUM read stamped a merge (vb, n1) and a third owner holds more under (vb, n4)",
    withSeed(5101, async () => {
      const c = await cluster({ nodes: 4, seed: 5101, env: { SERVICE_REPLICATION: "3", SERVICE_DEAD_AFTER: "600s", SERVICE_HINT_TTL: "600s", SERVICE_TOMBSTONE_TTL: "20m" } });
      await c.advance(2_000);
      const key = keyWhere(c, (o) => o.primary === "n2" && o.ids.length === 3 && !o.ids.includes("n1"), "nc");
      const owners = c.node("n1").cache.owners(key).ids;
      await drive(c, [incrAt(c, "n2", key, 1, "quorum")]);
      await c.advance(500);
      // Every owner's outbound data calls fail: each one that takes an increment keeps it (and hints).
      for (const a of owners) for (const b of c.nodes.map((n) => n.id)) if (a !== b) c.chaos.cutData(a, b);
      const other = owners.find((id) => id !== "n2")!;
      const last = owners.find((id) => id !== "n2" && id !== other)!;
      const [r1] = await drive(c, [incrAt(c, last, key, 100, "one")]);
      await c.advance(500);
      const [r2] = await drive(c, [incrAt(c, "n2", key, 10, "one")]);
      await c.advance(500);
      const [r3] = await drive(c, [incrAt(c, other, key, 1000, "one")]);
      for (const r of [r1, r2, r3]) expect(r, "increment at ONE").to.not.be.instanceOf(CacheError);
      // A non-owner reads at QUORUM; it does not reach `last`.
      c.chaos.cutData("n1", last);
      const [read] = await drive(c, [Promise.resolve(c.node("n1").cache.read(key, "quorum"))]);
      expect(read).to.not.be.instanceOf(CacheError);
      await c.advance(1_000);
      c.chaos.heal();
      await c.advance(120_000);
      const finals = owners.map((id) => `${id}=${held(c, id, key)}`);
      const values = owners.map((id) => text((c.node(id).store.peek(key))!.value));
      for (const id of owners) {
        const one = c.node(id).store.peek(key)!;
        expect(counterTotal(decodeCounter(one.value)!), `${id}: ${finals.join(" ")}`).to.equal(1111);
      }
      expect(new Set(values).size).to.equal(1);
    }),
  );
});
