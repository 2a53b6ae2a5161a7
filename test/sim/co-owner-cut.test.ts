// An owner cut off from the other owners of a key (its direct links to them down) while it still
// sees a majority through other nodes misses the deletes they take. Past the tombstone TTL nothing
// would tell its old copy from one they never received, so it drops such copies once the cut has
// lasted half the TTL (co-owner-guard.ts), and a deleted key stays deleted after the heal.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { keyWhere, text } from "./data-path-fixtures.js";

const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s", SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "5s", SERVICE_AUTO_SYNC_INTERVAL: "2s" };

/** Writes `key` at ALL through n1 and lets the pushes settle. */
async function writeAll(c: SimCluster, key: string, value: string): Promise<void> {
  await c.node("n1").cache.admitWrite().set(key, fromUtf8(value), 0, "all");
}

describe("sim/an owner cut off from its co-owners", () => {
  const cluster = simClusters();

  it(
    "a key deleted at QUORUM while one owner's links to the other two were down stays deleted after they heal past the TTL",
    withSeed(77, async () => {
      const c = await cluster({ nodes: 5, seed: 77, env: ENV });
      await c.advance(2_000);
      const key = "item-1";
      await writeAll(c, key, "v");
      await c.advance(1_000);
      const [a, b, other] = c.node("n1").cache.owners(key).ids as [string, string, string];
      // a still reaches the two non-owners: it sees a majority (3 of 5) throughout.
      c.chaos.partition([a], [b, other]);
      await c.advance(500);
      expect((await c.node(b).cache.admitWrite().remove(key, "quorum")).applied).to.equal(true);
      await c.advance(40_000); // the hint for a expires (5 s), b and the third owner compact (20 s)
      expect(c.node(a).metrics.get("dist.contact.resets"), "no reset: a saw a majority").to.equal(0);
      expect(c.node(a).store.peek(key), "a dropped its old copy").to.equal(undefined);
      expect(c.node(a).metrics.get("dist.contact.cut_drops")).to.be.greaterThan(0);
      c.chaos.heal();
      await c.advance(20_000);
      expect(text((await c.node(b).cache.get(key, "quorum")).item?.value), "QUORUM read after the heal").to.equal(undefined);
      for (const id of [a, b, other]) expect(c.node(id).store.peek(key), `${id} holds nothing of the deleted key`).to.equal(undefined);
    }),
  );

  it(
    "only the copies whose owners' majority is cut off go, and only once older than half the TTL; the other side and other keys keep theirs",
    withSeed(78, async () => {
      const c = await cluster({ nodes: 5, seed: 78, env: ENV });
      await c.advance(2_000);
      const a = "n1";
      const [b, o] = ["n2", "n3"];
      const cutOff = keyWhere(c, (w) => w.ids.includes(a) && w.ids.includes(b) && w.ids.includes(o), "both");
      const oneCut = keyWhere(c, (w) => w.ids.includes(a) && w.ids.includes(b) && !w.ids.includes(o), "one");
      await writeAll(c, cutOff, "old");
      await writeAll(c, oneCut, "old");
      await c.advance(1_000);
      c.chaos.partition([a], [b, o]);
      await c.advance(8_000);
      // Written on a during the cut, at ONE: a copy only a holds, newer than half the TTL at the first pass.
      const fresh = keyWhere(c, (w) => w.ids[0] === a && w.ids.includes(b) && w.ids.includes(o), "fresh");
      await c.node(a).cache.admitWrite().set(fresh, fromUtf8("new"), 0, "one");
      await c.advance(4_000); // the cut has lasted 12 s: past half the TTL (10 s), one pass ran
      expect(c.node(a).metrics.get("dist.contact.cut_peers"), "a sees b and o cut off").to.equal(2);
      expect(c.node(a).store.peek(cutOff), "a's old copy of a key whose other owners are both cut off").to.equal(undefined);
      expect(text(c.node(a).store.peek(fresh)?.value), "a copy newer than half the TTL stays at the first pass").to.equal("new");
      expect(text(c.node(a).store.peek(oneCut)?.value), "a still reaches a majority of this key's owners").to.equal("old");
      expect(text(c.node(b).store.peek(cutOff)?.value), "b reaches o: a majority of the owners").to.equal("old");
      expect(c.node(b).metrics.get("dist.contact.cut_drops"), "b dropped nothing").to.equal(0);
      await c.advance(12_000); // a later pass: the fresh copy is now older than half the TTL
      expect(c.node(a).store.peek(fresh), "dropped once older than half the TTL").to.equal(undefined);
      c.chaos.heal();
      await c.advance(10_000);
      expect(c.node(a).metrics.get("dist.contact.cut_peers"), "healed: no peer cut off").to.equal(0);
      expect(text(c.node(a).store.peek(cutOff)?.value), "a got the key back from its co-owners").to.equal("old");
    }),
  );
});
