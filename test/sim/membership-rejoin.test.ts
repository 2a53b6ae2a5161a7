// Coming back: self-refutation of a suspicion, partitions that heal before and after the dead
// window, and a crashed node that restarts with a fresh memory and rejoins through its seeds
// (peers accept its own claim) and catches up on the data it owns.
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { LOG } from "../../src/log/index.js";
import type { PeerMember } from "../../src/transport/index.js";
import { simClusters, withSeed, type SimCluster } from "../helpers/sim-cluster.js";
import { text } from "./data-path-fixtures.js";
import { addressOf, expectFullyAlive, peerRecords, recordMarks, stateOf, view } from "./membership-fixtures.js";

const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s" };
const ALL3 = ["n1", "n2", "n3"];
const ALL5 = ["n1", "n2", "n3", "n4", "n5"];

describe("sim/membership: refutation, healing and rejoining", () => {
  const cluster = simClusters();

  /** 3 nodes; n3 isolated for 2.5 s (suspected at incarnation 2 by n1 and n2, not pruned), then healed. */
  async function suspectedThenHealed(seed: number): Promise<SimCluster> {
    const c = await cluster({ nodes: 3, seed, env: ENV });
    await c.advance(3_000);
    c.chaos.isolate("n3");
    await c.advance(2_500);
    for (const id of ["n1", "n2"]) expect(c.node(id).members.get("n3"), id).to.include({ state: "suspect", incarnation: 2 });
    expect(c.node("n3").members.selfIncarnation).to.equal(1);
    c.chaos.heal();
    return c;
  }

  describe("self-refutation", () => {
    it(
      "a node suspected while isolated is seen alive again by every node after the heal, at an incarnation above the suspicion's",
      withSeed(211, async () => {
        const c = await suspectedThenHealed(211);
        await c.advance(3_000);
        expectFullyAlive(c, ALL3, ALL3);
        for (const id of ["n1", "n2"]) expect(c.node(id).members.get("n3")!.incarnation, id).to.be.greaterThan(2);
      }),
    );

    it(
      "after the heal the suspected node is alive everywhere again; any refutation it logged took an incarnation above the claim",
      withSeed(212, async () => {
        const c = await suspectedThenHealed(212);
        const mark = c.sim("n3").logger.records.length;
        await c.advance(5_000);
        expectFullyAlive(c, ALL3, ALL3);
        // Direct probes may restore n3 before a suspicion reaches it (a successful probe returns a
        // suspect to alive); when a claim did reach it, the refutation went above the claim.
        for (const r of c.sim("n3").logger.records.slice(mark).filter((x) => x.message === LOG.selfRefuted)) {
          expect(r.fields.incarnation as number).to.be.greaterThan(r.fields.claimed_incarnation as number);
        }
        for (const id of ["n1", "n2"]) expect(c.node(id).members.get("n3")!.state, id).to.equal("alive");
      }),
    );

    it(
      "a suspect claim gossiped to the suspected node over the peer transport is refuted above the claim, and every node then sees it alive at that incarnation",
      withSeed(213, async () => {
        const c = await suspectedThenHealed(213);
        const mark = c.sim("n3").logger.records.length;
        // What n1's gossiper would push: n1's member list, in which n3 is suspect at 2.
        const claims = c.node("n1").members.list() as PeerMember[];
        await c.network.transport().gossip({ id: "n3", address: addressOf("n3") }, "n1", claims);
        const refuted = c.sim("n3").logger.records.slice(mark).filter((r) => r.message === LOG.selfRefuted);
        expect(refuted.map((r) => r.level)).to.deep.equal(["info"]);
        expect(refuted[0]!.fields).to.include({ from: "n1", claimed_state: "suspect", claimed_incarnation: 2, incarnation: 3 });
        expect(c.node("n3").members.selfIncarnation).to.equal(3);
        expect(c.node("n3").members.get("n3")?.state).to.equal("alive");
        await c.advance(3_000);
        expectFullyAlive(c, ALL3, ALL3);
        for (const id of ["n1", "n2"]) expect(c.node(id).members.get("n3")!.incarnation, id).to.be.at.least(3);
      }),
    );
  });

  describe("partition and heal", () => {
    it(
      "a 2|3 partition shorter than the dead window: both sides suspect each other, keep the ring, and are all alive again a few heartbeats after the heal",
      withSeed(214, async () => {
        const c = await cluster({ nodes: 5, seed: 214, env: ENV });
        await c.advance(2_000);
        const owners = c.node("n1").cache.owners("some-key").ids;
        c.chaos.partition(["n1", "n2"], ["n3", "n4", "n5"]);
        await c.advance(3_000);
        expect(view(c, "n1")).to.deep.equal(["n1:alive", "n2:alive", "n3:suspect", "n4:suspect", "n5:suspect"]);
        expect(view(c, "n4")).to.deep.equal(["n1:suspect", "n2:suspect", "n3:alive", "n4:alive", "n5:alive"]);
        expect(c.node("n1").cache.owners("some-key").ids, "suspects keep their ring positions").to.deep.equal(owners);
        c.chaos.heal();
        await c.advance(3_000);
        expectFullyAlive(c, ALL5, ALL5);
        for (const n of c.nodes) {
          expect(n.node.metrics.get("dist.nodes.dead"), n.id).to.equal(0);
          expect(n.node.metrics.get("dist.rebalance.batches"), `${n.id}: the ring never changed`).to.equal(0);
        }
      }),
    );

    it(
      "a 2|3 partition longer than the dead window: each side prunes the other, and after the heal every node sees all five alive again",
      withSeed(215, async () => {
        const c = await cluster({ nodes: 5, seed: 215, env: ENV });
        await c.advance(2_000);
        c.chaos.partition(["n1", "n2"], ["n3", "n4", "n5"]);
        await c.advance(8_000);
        expect(view(c, "n1")).to.deep.equal(["n1:alive", "n2:alive"]);
        expect(view(c, "n3")).to.deep.equal(["n3:alive", "n4:alive", "n5:alive"]);
        c.chaos.heal();
        await c.advance(20_000);
        const views = Object.fromEntries(ALL5.map((id) => [id, view(c, id).join(" ")]));
        const want = ALL5.map((id) => `${id}:alive`).join(" ");
        expect(views, "after 20 s healed, no node ever hears of the other side again: pruned members are never re-added from hearsay and a node only knocks on its seeds when it has no alive peer at all").to.deep.equal(Object.fromEntries(ALL5.map((id) => [id, want])));
      }),
    );

    it(
      "a node isolated past the dead window rejoins every node after the heal, not only the seed it knocks on first",
      withSeed(216, async () => {
        const c = await cluster({ nodes: 3, seed: 216, env: ENV });
        await c.advance(2_000);
        c.chaos.isolate("n3");
        await c.advance(8_000);
        expect(stateOf(c, "n1", "n3")).to.equal("absent");
        expect(view(c, "n3")).to.deep.equal(["n3:alive"]);
        c.chaos.heal();
        await c.advance(20_000);
        const views = Object.fromEntries(ALL3.map((id) => [id, view(c, id).join(" ")]));
        const want = ALL3.map((id) => `${id}:alive`).join(" ");
        expect(views).to.deep.equal({ n1: want, n2: want, n3: want });
      }),
    );
  });

  describe("crash, prune and restart with a fresh memory", () => {
    it(
      "a crashed node is pruned; restarted with the same id it rejoins through its seeds (peers accept its own claim) and holds every key it owns",
      withSeed(217, async () => {
        const c = await cluster({ nodes: 4, seed: 217, env: ENV });
        await c.advance(1_000);
        const before = Array.from({ length: 60 }, (_, i) => `early-${i}`);
        for (const k of before) await c.node("n1").cache.admitWrite().set(k, fromUtf8(`v1-${k}`), 0, "all");
        c.crash("n3");
        await c.advance(8_000);
        for (const id of ["n1", "n2", "n4"]) expect(stateOf(c, id, "n3"), id).to.equal("absent");
        // Written while n3 is gone: in the 3-node ring, n3 owns none of them.
        const during = Array.from({ length: 60 }, (_, i) => `late-${i}`);
        for (const k of during) await c.node("n2").cache.admitWrite().set(k, fromUtf8(`v2-${k}`), 0, "quorum");
        for (const k of before.slice(0, 20)) await c.node("n4").cache.admitWrite().set(k, fromUtf8(`v2-${k}`), 0, "quorum");
        await c.advance(1_000);
        const marks = recordMarks(c);

        c.chaos.reconnect("n3");
        const fresh = await c.restart("n3");
        expect(fresh.node.store.items, "a fresh memory").to.equal(0);
        await c.advance(2_000);
        expectFullyAlive(c, ["n1", "n2", "n3", "n4"], ["n1", "n2", "n3", "n4"]);
        for (const id of ["n1", "n2", "n4"]) {
          expect(peerRecords(c, id, "n3", [LOG.peerAdded, LOG.peerSuspect, LOG.peerPruned], marks[id]), `${id} accepted n3's own claim`).to.deep.equal([`info ${LOG.peerAdded}`]);
          expect(c.node(id).members.knownCount(), id).to.equal(4);
        }
        // Caught up by the rebalance of the others, before anyone read through n3.
        const all = [...before, ...during];
        const latest = (k: string) => (k.startsWith("late-") || before.indexOf(k) < 20 ? `v2-${k}` : `v1-${k}`);
        const owned = all.filter((k) => c.node("n3").cache.owners(k).ids.includes("n3"));
        expect(owned.length).to.be.greaterThan(20);
        const missing = owned.filter((k) => text(c.node("n3").store.peek(k)?.value) !== latest(k));
        expect(missing, "keys n3 owns but does not hold with the latest value").to.deep.equal([]);
        expect(c.nodes.reduce((s, n) => s + n.node.metrics.get("dist.rebalance.keys"), 0)).to.be.greaterThan(0);
        // And every key is readable from the restarted node with its latest value.
        for (const k of all) expect(text((await c.node("n3").cache.get(k)).item?.value), k).to.equal(latest(k));
      }),
    );

    it(
      "a node restarted before it was pruned (still suspect elsewhere, at a higher incarnation than its fresh 1) is taken back alive from its own claim",
      withSeed(218, async () => {
        const c = await cluster({ nodes: 3, seed: 218, env: ENV });
        await c.advance(2_000);
        c.crash("n3");
        await c.advance(2_000);
        for (const id of ["n1", "n2"]) expect(c.node(id).members.get("n3"), id).to.include({ state: "suspect", incarnation: 2 });
        c.chaos.reconnect("n3");
        await c.restart("n3");
        expect(c.node("n3").members.selfIncarnation).to.equal(1);
        await c.advance(1_000);
        expectFullyAlive(c, ALL3, ALL3);
        for (const id of ["n1", "n2"]) expect(c.node(id).members.get("n3")!.incarnation, id).to.be.greaterThan(2);
      }),
    );
  });
});
