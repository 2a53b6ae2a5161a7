// Edges of the sync receipts that hold tombstones until every known peer has pulled them
// (sync-receipts.ts), found by a review of the first version: a wall clock stepped back, an owner
// the others pruned, a delete in the millisecond of a receipt, a draining owner's migration queue,
// and a draining node (which holds tombstones back until it leaves).
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import type { PeerEndpoint } from "../../src/transport/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { keysWhere, text } from "./data-path-fixtures.js";
import { writeThenCutOwner } from "./tombstone-fixtures.js";

// One sync by hand per step: no anti-entropy loop of its own.
const SAME_MS_ENV = { SERVICE_REPLICATION: "2", SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_AUTO_SYNC_INTERVAL: "1h", SERVICE_AUTO_SYNC_MAX_FACTOR: "1" };
const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_AUTO_SYNC_INTERVAL: "2s", SERVICE_AUTO_SYNC_MAX_FACTOR: "1" };

describe("sim/tombstone receipts: edges", () => {
  const cluster = simClusters();

  for (const step of [0, -10_000])
  it(
    `wall clock stepped ${step} ms between the cut and the delete: the cut-off owner's old value does not come back after the heal`,
    withSeed(77, async () => {
      const c = await cluster({ nodes: 5, seed: 77, env: ENV });
      const key = "item-1";
      const [a, b, other] = await writeThenCutOwner(c, key, 5_000);
      c.clock.stepWall(step);
      expect((await c.node(b).cache.admitWrite().remove(key, "quorum")).applied).to.equal(true);
      await c.advance(40_000);
      expect(text(c.node(a).store.peek(key)?.value), "a kept the old value").to.equal("v");
      const held = [b, other].map((id) => `${id}:${c.node(id).store.peek(key)?.tombstone === true ? "T" : "-"}`).join(" ");
      c.chaos.heal();
      await c.advance(10_000);
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), `QUORUM read after the heal (tombstones before it: ${held})`).to.equal(undefined);
    }),
  );

  it(
    "an owner isolated for 10 s, then cut from the other two owners only for twice the TTL: the key deleted meanwhile stays deleted",
    withSeed(77, async () => {
      const c = await cluster({ nodes: 5, seed: 77, env: ENV });
      const key = "item-1";
      await c.advance(2_000);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "all");
      await c.advance(3_000);
      const [a, b, other] = c.node("n1").cache.owners(key).ids as [string, string, string];
      c.chaos.isolate(a);
      await c.advance(10_000);
      c.chaos.reconnect(a);
      c.chaos.partition([a], [b, other]);
      await c.advance(5_000);
      const stateOf = (viewer: string, id: string) => c.node(viewer).members.get(id)?.state ?? "pruned";
      const views = `${b} sees ${a}: ${stateOf(b, a)}; ${a} sees ${b}: ${stateOf(a, b)}; others see ${a}: ${c.nodes.filter((n) => ![a, b, other].includes(n.id)).map((n) => stateOf(n.id, a)).join(",")}`;
      const del = await c.node(b).cache.admitWrite().remove(key, "quorum");
      expect(del.applied, views).to.equal(true);
      await c.advance(40_000);
      expect(c.node(a).metrics.get("dist.contact.resets"), `no reset: ${a} saw a majority (${views})`).to.equal(0);
      const before = `${a}:${text(c.node(a).store.peek(key)?.value) ?? (c.node(a).store.peek(key)?.tombstone ? "T" : "-")} ` + [b, other].map((id) => `${id}:${c.node(id).store.peek(key)?.tombstone === true ? "T" : "-"}`).join(" ");
      c.chaos.heal();
      await c.advance(15_000);
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), `QUORUM read after the heal (before it: ${before}; ${views})`).to.equal(undefined);
    }),
  );

  for (const laterMs of [1, 0])
  it(
    `a delete applied on the answerer ${laterMs} ms after its root answer began, after the root: the requester's old value does not come back`,
    withSeed(11, async () => {
      const c = await cluster({ nodes: 3, seed: 11, env: SAME_MS_ENV });
      const key = "item-1";
      await c.advance(2_000);
      await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "all");
      await c.advance(1_000);
      const [a, b] = c.node("n1").cache.owners(key).ids as [string, string];
      const other = c.nodes.map((n) => n.id).find((id) => id !== a && id !== b) as string;
      const ref = (id: string) => ({ id, address: c.sim(id).address });

      // b answers a's root requests through this wrapper.
      const real = c.node(b).endpoint;
      let onRoot: "delete-after" | "lose-answer" | undefined;
      c.network.register(c.sim(b).address, new Proxy(real, {
        get(target, prop, recv) {
          if (prop !== "merkleRoot") return Reflect.get(target, prop, recv);
          return async (...args: Parameters<PeerEndpoint["merkleRoot"]>) => {
            const r = await target.merkleRoot(...args);
            if (args[0] === a && onRoot === "delete-after") {
              onRoot = undefined;
              c.clock.jump(laterMs);
              // Same millisecond (the sim clock does not move): a delete through b, whose push to a fails.
              expect((await c.node(b).cache.admitWrite().remove(key, "one")).applied).to.equal(true);
            } else if (args[0] === a && onRoot === "lose-answer") {
              onRoot = undefined;
              throw new Error("answer lost (link went down)");
            }
            return r;
          };
        },
      }));
      c.chaos.cutData(b, a); // b's pushes and hint replays to a fail; syncs pass

      expect((await c.node(a).merkle.syncer.syncWith(ref(b))).failed).to.equal(false);
      await c.advance(1_000);
      onRoot = "delete-after";
      const r1 = await c.node(a).merkle.syncer.syncWith(ref(b));
      expect(r1, "a's sync with b completed, clean").to.deep.equal({ pulled: 0, clean: true, failed: false });
      expect(c.node(b).store.peek(key)?.tombstone).to.equal(true);
      expect(text(c.node(a).store.peek(key)?.value)).to.equal("v");
      await c.advance(1_000);
      onRoot = "lose-answer"; // a's next root request (its receipt) gets through; the answer does not
      expect((await c.node(a).merkle.syncer.syncWith(ref(b))).failed).to.equal(true);
      c.chaos.partition([a], [b]); // a's links to b stay down; both still see a majority through the third node
      for (let i = 0; i < 12; i++) {
        await c.advance(2_000);
        await c.node(other).merkle.syncer.syncWith(ref(b)); // the third node reports as usual
      }
      const atB = c.node(b).store.peek(key)?.tombstone === true ? "T" : "-";
      c.chaos.heal();
      await c.node(b).merkle.syncer.syncWith(ref(a));
      await c.advance(1_000);
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), `QUORUM read after the heal (b before it: ${atB})`).to.equal(undefined);
    }),
  );

  it(
    "the cut-off owner of a deleted key drains: the node taking its place gets its old copy, and the key stays deleted",
    withSeed(77, async () => {
      const c = await cluster({ nodes: 5, seed: 77, env: ENV });
      const key = "item-1";
      const [o, b] = await writeThenCutOwner(c, key, 3_000);
      expect((await c.node(b).cache.admitWrite().remove(key, "quorum")).applied).to.equal(true);
      await c.advance(25_000); // past the TTL: the tombstones are held for o
      const state = (id: string) => (c.node(id).store.peek(key)?.tombstone ? "T" : (text(c.node(id).store.peek(key)?.value) ?? "-"));
      const snap = () => c.nodes.map((n) => `${n.id}:${state(n.id)}`).join(" ");
      const s1 = snap();
      expect(c.node(o).drain("review")).to.equal(true);
      await c.advance(15_000);
      const newOwners = c.node(b).cache.owners(key).ids;
      const s2 = snap();
      c.crash(o); // o's links all go down (the process keeps running, still draining)
      await c.advance(40_000);
      const s3 = snap() + ` (o queues: migrations ${JSON.stringify(c.node(o).migrations.summary())}, hints ${JSON.stringify(c.node(o).hints.summary())}, resets ${c.node(o).metrics.get("dist.contact.resets")})`;
      c.chaos.heal();
      const trace: string[] = [];
      for (let i = 0; i < 10; i++) {
        await c.advance(500);
        trace.push(snap());
      }
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), `QUORUM read; held for o: ${s1}; after the drain (owners ${newOwners.join(",")}): ${s2}; after o stopped: ${s3}; after the heal: ${trace.join(" | ")}`).to.equal(undefined);
    }),
  );

  it(
    "a draining node holds compaction back (its copies may still be handed off) until it has left",
    withSeed(79, async () => {
      const c = await cluster({ nodes: 4, seed: 79, env: ENV });
      await c.advance(2_000);
      const departed = c.node("n4").depart("test");
      await c.advance(1_000);
      const keys = keysWhere(c, 5, () => true, "gone");
      for (const k of keys) await c.node("n1").cache.admitWrite().set(k, fromUtf8("v"), 0, "all");
      for (const k of keys) await c.node("n2").cache.admitWrite().remove(k, "all");
      await c.advance(40_000);
      await departed;
      await c.advance(6_000);
      for (const id of ["n1", "n2", "n3"]) for (const k of keys) expect(c.node(id).store.peek(k), `${id} ${k}`).to.equal(undefined);
    }),
  );
  for (const step of [0, -60_000])
    it(
      `wall clock stepped ${step} ms: a queued hint of an old value is not replayed after the tombstones of a later delete were compacted`,
      withSeed(77, async () => {
        const c = await cluster({ nodes: 5, seed: 77, env: ENV });
        const key = "item-1";
        await c.advance(2_000);
        await c.node("n1").cache.admitWrite().set(key, fromUtf8("v0"), 0, "all");
        await c.advance(1_000);
        const [a, b, o] = c.node("n1").cache.owners(key).ids as [string, string, string];
        c.chaos.cutData(a, o); // a's pushes and hint replays to o fail; membership and syncs pass
        expect((await c.node(a).cache.admitWrite().set(key, fromUtf8("v"), 0, "quorum")).applied, "write v").to.equal(true);
        await c.advance(200);
        c.clock.stepWall(step); // hints used to age on the wall clock: this one would have lived 60 s more
        await c.advance(500);
        c.chaos.cutData(b, a);
        expect((await c.node(b).cache.admitWrite().remove(key, "quorum")).applied, "delete").to.equal(true);
        c.chaos.restoreData(b, a);
        await c.advance(45_000);
        const st = (id: string) => (c.node(id).store.peek(key)?.tombstone ? "T" : (text(c.node(id).store.peek(key)?.value) ?? "-"));
        const before = `${c.nodes.map((n) => `${n.id}:${st(n.id)}`).join(" ")}; hints at ${a}: ${JSON.stringify(c.node(a).hints.summary())}`;
        c.chaos.restoreData(a, o);
        await c.advance(10_000);
        expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), `QUORUM read (before the link came back: ${before})`).to.equal(undefined);
      }),
    );

  it(
    "ring views apart (s cut from x only, after an isolation: each pruned the other): a key s wrote in its own view, deleted through the others, stays deleted after the heal (s sends no receipts while it abstains)",
    withSeed(5, async () => {
      const c = await cluster({ nodes: 5, seed: 5, env: { ...ENV, SERVICE_REPLICATION: "2" } });
      const [s, x] = ["n1", "n2"];
      await c.advance(3_000);
      c.chaos.isolate(s); // everyone prunes s, s prunes everyone
      await c.advance(10_000);
      c.chaos.reconnect(s);
      c.chaos.partition([s], [x]); // s re-adds the others but never x (hearsay does not resurrect), x never s
      await c.advance(12_000);
      const stateOf = (viewer: string, id: string) => c.node(viewer).members.get(id)?.state ?? "pruned";
      const views = `${s} sees ${x}: ${stateOf(s, x)}; ${x} sees ${s}: ${stateOf(x, s)}; n3 sees ${x}: ${stateOf("n3", x)}`;
      // A key s owns in its view (without x) and, in the others' view, owned by x and b (not s).
      let k = "";
      for (let i = 0; i < 100_000 && k === ""; i++) {
        const cand = `z-${i}`;
        const mine = c.node(s).cache.owners(cand).ids;
        const theirs = c.node("n3").cache.owners(cand).ids;
        if (mine.includes(s) && theirs.includes(x) && !theirs.includes(s)) k = cand;
      }
      const b = c.node("n3").cache.owners(k).ids.find((id) => id !== x) as string;
      const st = (id: string) => (c.node(id).store.peek(k)?.tombstone ? "T" : (text(c.node(id).store.peek(k)?.value) ?? "-"));
      const snap = () => c.nodes.map((n) => `${n.id}:${st(n.id)}`).join(" ");
      c.chaos.cutData(s, b); // s's forward to b fails: s, a replica owner in its view, promotes itself
      // s abstains (its view disagrees: a bridge) and answers 503, but it stored the value: indeterminate.
      await c.node(s).cache.admitWrite().set(k, fromUtf8("v"), 0, "one").catch(() => undefined);
      expect(st(s), `write through ${s} (${views}; key ${k}, s owners ${c.node(s).cache.owners(k).ids}, b=${b})`).to.equal("v");
      c.chaos.restoreData(s, b);
      await c.advance(3_000);
      const s0 = snap();
      expect((await c.node(b).cache.admitWrite().remove(k, "one")).applied, "delete").to.equal(true);
      const trace: string[] = [];
      for (let i = 0; i < 8; i++) {
        await c.advance(5_000);
        trace.push(snap());
      }
      c.chaos.heal();
      for (let i = 0; i < 15; i++) {
        await c.advance(2_000);
        trace.push(snap());
      }
      const one = text((await c.node(b).cache.get(k, "one")).item?.value);
      const q = text((await c.node(b).cache.get(k, "quorum")).item?.value);
      expect({ one, q }, `key ${k} (owners after: ${c.node(b).cache.owners(k).ids}); ${views}; after write ${s0}; trace ${trace.join(" | ")}`).to.deep.equal({ one: undefined, q: undefined });
    }),
  );
});
