// Last-write-wins on the receive path and the ownership guard: records are pushed straight into
// a node's PeerEndpoint (applySet / applyRemove), exactly as a peer's replica write, hint replay
// or read repair delivers them.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { HashRing } from "../../src/ring/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { BASE_VERSION, expectCacheError, keyWhere, nonOwnersOf, rec, text, tomb } from "./data-path-fixtures.js";

/** The kinds of pushed-record outcomes, in order. */
const kinds = (outcomes: ReadonlyArray<{ readonly kind: string }>): string[] => outcomes.map((o) => o.kind);

describe("sim/data path: conflicts (LWW) and the ownership guard", () => {
  const cluster = simClusters();

  const V = BASE_VERSION;

  describe("last-write-wins on applySet / applyRemove", () => {
    it(
      "a higher version wins over a lower one, whatever the origins",
      withSeed(71, async () => {
        const c = await cluster({ nodes: 3, seed: 71, startLoops: false });
        const e = c.node("n1").endpoint;
        expect(kinds(e.applySet("n2", [rec("k", "v1", V + 10, "n3")]))).to.deep.equal(["applied"]);
        expect(kinds(e.applySet("n2", [rec("k", "v2", V + 11, "n9")]))).to.deep.equal(["applied"]);
        const held = c.node("n1").store.peek("k");
        expect(text(held?.value)).to.equal("v2");
        expect(held).to.include({ version: V + 11, origin: "n9" });
        expect(text((await c.node("n1").cache.get("k")).item?.value)).to.equal("v2");
        expect(c.node("n1").metrics.get("dist.version.conflicts")).to.equal(0);
      }),
    );

    it(
      "a downgrade (lower version, even with a smaller origin) is ignored and counted in dist.version.conflicts",
      withSeed(72, async () => {
        const c = await cluster({ nodes: 3, seed: 72, startLoops: false });
        const e = c.node("n2").endpoint;
        e.applySet("n1", [rec("k", "new", V + 20, "n3")]);
        expect(kinds(e.applySet("n1", [rec("k", "old", V + 19, "a")]))).to.deep.equal(["stale"]);
        expect(text(c.node("n2").store.peek("k")?.value)).to.equal("new");
        expect(c.node("n2").metrics.get("dist.version.conflicts")).to.equal(1);
      }),
    );

    it(
      "at equal versions the lexicographically smaller origin wins, in either arrival order",
      withSeed(73, async () => {
        const c = await cluster({ nodes: 3, seed: 73, startLoops: false });
        const a = c.node("n1").endpoint;
        const b = c.node("n2").endpoint;
        // n1 receives the larger origin first, n2 the smaller origin first.
        expect(kinds(a.applySet("x", [rec("tie", "from n3", V, "n3")]))).to.deep.equal(["applied"]);
        expect(kinds(a.applySet("x", [rec("tie", "from n2", V, "n2")]))).to.deep.equal(["applied"]);
        expect(kinds(b.applySet("x", [rec("tie", "from n2", V, "n2")]))).to.deep.equal(["applied"]);
        expect(kinds(b.applySet("x", [rec("tie", "from n3", V, "n3")]))).to.deep.equal(["stale"]);
        for (const id of ["n1", "n2"]) {
          expect(text(c.node(id).store.peek("tie")?.value), id).to.equal("from n2");
          expect(c.node(id).store.peek("tie")?.origin, id).to.equal("n2");
        }
        expect(c.node("n1").metrics.get("dist.version.conflicts")).to.equal(0);
        expect(c.node("n2").metrics.get("dist.version.conflicts")).to.equal(1);
      }),
    );

    it(
      "a duplicate delivery (same version and origin) changes nothing and is not a conflict, and is answered applied: the owner holds exactly that write",
      withSeed(74, async () => {
        const c = await cluster({ nodes: 3, seed: 74, startLoops: false });
        const e = c.node("n3").endpoint;
        expect(kinds(e.applySet("n1", [rec("dup", "once", V + 5, "n1")]))).to.deep.equal(["applied"]);
        expect(kinds(e.applySet("n1", [rec("dup", "once", V + 5, "n1")]))).to.deep.equal(["applied"]);
        expect(kinds(e.applyRemove("n1", [tomb("gone", V + 5, "n1")]))).to.deep.equal(["applied"]);
        expect(kinds(e.applyRemove("n1", [tomb("gone", V + 5, "n1")]))).to.deep.equal(["applied"]);
        expect(text(c.node("n3").store.peek("dup")?.value)).to.equal("once");
        expect(c.node("n3").metrics.get("dist.version.conflicts")).to.equal(0);
      }),
    );

    it(
      "a batch of pushed records is applied record by record, each with its own outcome, in order",
      withSeed(75, async () => {
        const c = await cluster({ nodes: 3, seed: 75, startLoops: false });
        const e = c.node("n1").endpoint;
        e.applySet("n2", [rec("b", "b-new", V + 9, "n2")]);
        const out = kinds(e.applySet("n2", [rec("a", "a1", V + 1, "n2"), rec("b", "b-old", V + 1, "n2"), rec("a", "a2", V + 2, "n2"), rec("a", "a0", V, "n2")]));
        expect(out).to.deep.equal(["applied", "stale", "applied", "stale"]);
        expect(text(c.node("n1").store.peek("a")?.value)).to.equal("a2");
        expect(text(c.node("n1").store.peek("b")?.value)).to.equal("b-new");
        expect(c.node("n1").metrics.get("dist.version.conflicts")).to.equal(2);
      }),
    );

    it(
      "a tombstone beats an older set: the key reads absent, and an older set arriving after the delete (a stale hint or repair) never resurrects it",
      withSeed(76, async () => {
        const c = await cluster({ nodes: 3, seed: 76, startLoops: false });
        const e = c.node("n1").endpoint;
        e.applySet("n2", [rec("t", "alive", V + 10, "n2")]);
        expect(kinds(e.applyRemove("n2", [tomb("t", V + 11, "n2")]))).to.deep.equal(["applied"]);
        expect((await c.node("n1").cache.get("t")).item).to.equal(undefined);
        expect(c.node("n1").store.peek("t")?.tombstone).to.equal(true);
        // Older than the tombstone, whether older or newer than the set it replaced.
        expect(kinds(e.applySet("n3", [rec("t", "stale hint", V + 10, "n1")]))).to.deep.equal(["stale"]);
        expect(kinds(e.applySet("n3", [rec("t", "stale repair", V + 5, "n3")]))).to.deep.equal(["stale"]);
        expect((await c.node("n1").cache.get("t")).item).to.equal(undefined);
        expect(c.node("n1").store.peek("t")?.tombstone).to.equal(true);
        expect(c.node("n1").metrics.get("dist.version.conflicts")).to.equal(2);
        expect((await c.node("n1").cache.listKeys("", 100)).keys).to.not.include("t");
      }),
    );

    it(
      "a tombstone older than the live value is ignored (a late delete cannot remove a newer write)",
      withSeed(77, async () => {
        const c = await cluster({ nodes: 3, seed: 77, startLoops: false });
        const e = c.node("n2").endpoint;
        e.applySet("n1", [rec("late", "newer write", V + 30, "n1")]);
        expect(kinds(e.applyRemove("n1", [tomb("late", V + 29, "n1")]))).to.deep.equal(["stale"]);
        expect(text((await c.node("n2").cache.get("late")).item?.value)).to.equal("newer write");
        expect(c.node("n2").metrics.get("dist.version.conflicts")).to.equal(1);
      }),
    );

    it(
      "a newer set after the delete revives the key",
      withSeed(78, async () => {
        const c = await cluster({ nodes: 3, seed: 78, startLoops: false });
        const e = c.node("n3").endpoint;
        e.applySet("n1", [rec("phoenix", "first", V + 1, "n1")]);
        e.applyRemove("n1", [tomb("phoenix", V + 2, "n1")]);
        expect(kinds(e.applySet("n1", [rec("phoenix", "second life", V + 3, "n1")]))).to.deep.equal(["applied"]);
        const got = await c.node("n3").cache.get("phoenix");
        expect(text(got.item?.value)).to.equal("second life");
        expect(got.item?.version).to.equal(V + 3);
      }),
    );

    it(
      "a client delete through the cluster is never undone by a stale set pushed afterwards to any owner",
      withSeed(79, async () => {
        const c = await cluster({ nodes: 3, seed: 79, startLoops: false });
        const key = keyWhere(c, () => true, "nores");
        const w = await c.node("n1").cache.admitWrite().set(key, fromUtf8("before"), 0, "all");
        await c.node("n2").cache.admitWrite().remove(key, "all");
        for (const n of c.nodes) {
          expect(kinds(n.node.endpoint.applySet("late", [rec(key, "before", w.version, w.origin)])), n.id).to.deep.equal(["stale"]);
        }
        for (const n of c.nodes) {
          for (const level of ["one", "quorum", "all"] as const) {
            expect((await n.node.cache.get(key, level)).item, `${n.id} ${level}`).to.equal(undefined);
          }
        }
      }),
    );

    it(
      "a client write after owners received a far-future version of the key is stamped above it (max(current + 1, clock)) and wins everywhere",
      withSeed(80, async () => {
        const c = await cluster({ nodes: 3, seed: 80, startLoops: false });
        const key = keyWhere(c, (o) => o.primary === "n1", "future");
        const future = V + 5_000_000_000;
        for (const n of c.nodes) n.node.endpoint.applySet("skewed", [rec(key, "from the future", future, "n9")]);
        const r = await c.node("n2").cache.admitWrite().set(key, fromUtf8("now"), 0, "all");
        expect(r.version).to.be.greaterThan(future);
        for (const n of c.nodes) expect(text(n.node.store.peek(key)?.value), n.id).to.equal("now");
        expect(c.nodes.map((n) => n.node.metrics.get("dist.version.conflicts"))).to.deep.equal([0, 0, 0]);
      }),
    );
  });

  describe("ownership guard", () => {
    it(
      "a set pushed to a node that does not own the key (5 nodes, replication 3) is dropped, reported 'refused' and counted in dist.write.apply_refused",
      withSeed(81, async () => {
        const c = await cluster({ nodes: 5, seed: 81, startLoops: false });
        const key = keyWhere(c, () => true, "guard");
        const outsider = nonOwnersOf(c, key)[0]!;
        const owner = c.node("n1").cache.owners(key).primary;
        expect(kinds(c.node(outsider).endpoint.applySet(owner, [rec(key, "intruder", V, owner)]))).to.deep.equal(["refused"]);
        expect(c.node(outsider).store.peek(key)).to.equal(undefined);
        expect(c.node(outsider).metrics.get("dist.write.apply_refused")).to.equal(1);
        expect(kinds(c.node(outsider).endpoint.applyRemove(owner, [tomb(key, V + 1, owner)]))).to.deep.equal(["refused"]);
        expect(c.node(outsider).store.peek(key)).to.equal(undefined);
        expect(c.node(outsider).metrics.get("dist.write.apply_refused")).to.equal(2);
        // The same push to an owner is applied and not refused.
        expect(kinds(c.node(owner).endpoint.applySet("x", [rec(key, "welcome", V, "x")]))).to.deep.equal(["applied"]);
        expect(c.node(owner).metrics.get("dist.write.apply_refused")).to.equal(0);
      }),
    );

    it(
      "a refusal is no acknowledgement: a coordinator whose ring view differs pushes to a node that refuses; ALL fails, QUORUM succeeds without a copy there, and the record stays hinted",
      withSeed(82, async () => {
        const c = await cluster({ nodes: 5, seed: 82, startLoops: false });
        const all = ["n1", "n2", "n3", "n4", "n5"];
        const full = HashRing.build(all, 3);
        // A key whose primary is n1 in both views, and whose owners after n1 forgets some node
        // X include a node D that, in the full ring, is not an owner.
        let found: { key: string; removed: string; refuser: string } | undefined;
        for (let i = 0; i < 20_000 && !found; i++) {
          const key = `view-${i}`;
          const owners = full.ownersOf(key).ids;
          if (owners[0] !== "n1") continue;
          const removed = owners[1]!;
          const narrowed = HashRing.build(all.filter((id) => id !== removed), 3).ownersOf(key).ids;
          const refuser = narrowed.find((id) => !owners.includes(id));
          if (narrowed[0] === "n1" && refuser) found = { key, removed, refuser };
        }
        expect(found, "a key with differing views").to.not.equal(undefined);
        const { key, removed, refuser } = found!;
        c.node("n1").members.remove(removed);
        expect(c.node("n1").cache.owners(key).ids).to.include(refuser);
        // A refusal is no acknowledgement: ALL (3 of 3) fails, QUORUM (2 of 3) is met by n1 and the other owner.
        await expectCacheError(c.node("n1").cache.admitWrite().set(key, fromUtf8("guarded"), 0, "all"), "QUORUM_FAILED");
        const r = await c.node("n1").cache.admitWrite().set(key, fromUtf8("guarded"), 0, "quorum");
        expect(r.origin).to.equal("n1");
        await c.settle();
        expect(c.node(refuser).store.peek(key)).to.equal(undefined);
        expect(c.node(refuser).metrics.get("dist.write.apply_refused")).to.equal(2);
        expect(c.node("n1").hints.size(refuser), "the refused record is kept as a hint (the views may converge)").to.equal(1);
      }),
    );
  });
});
