// The peer-membership table end to end over the in-memory network: an isolated node goes suspect
// at the first failed heartbeat and is declared dead and pruned after SERVICE_DEAD_AFTER (records
// in order, dist.nodes.* metrics, ring positions kept while suspect); a cut direct path is
// refuted by an indirect probe through a relay; with K = 0 the same cut makes a suspect; manual
// removal logs only the removed record.
import { expect } from "chai";
import { LOG } from "../../src/log/index.js";
import { simClusters, withSeed } from "../helpers/sim-cluster.js";
import { expectFullyAlive, peerRecords, recordMarks, stateOf, view } from "./membership-fixtures.js";

const ENV = { SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "6s" };
const TABLE_RECORDS = [LOG.peerSuspect, LOG.peerRefutedIndirect, LOG.peerPruned, LOG.peerRemoved, LOG.peerAdded];

describe("sim/membership: failure detection (SWIM probes, suspicion, pruning)", () => {
  const cluster = simClusters();

  it(
    "an isolated node is suspect after one heartbeat, then dead and pruned SERVICE_DEAD_AFTER after its last good probe: warn suspect, warn pruned, info removed, in order",
    withSeed(201, async () => {
      const c = await cluster({ nodes: 3, seed: 201, env: ENV });
      await c.advance(3_000);
      expectFullyAlive(c, ["n1", "n2", "n3"], ["n1", "n2", "n3"]);
      const marks = recordMarks(c);
      const ringBefore = c.node("n1").members.ringMembers();

      c.chaos.isolate("n3");
      await c.advance(1_000);
      for (const id of ["n1", "n2"]) {
        expect(stateOf(c, id, "n3"), id).to.equal("suspect");
        expect(c.node(id).metrics.get("dist.nodes.suspect"), id).to.equal(1);
        expect(c.node(id).metrics.get("dist.members.alive"), id).to.equal(2);
      }
      expect(peerRecords(c, "n1", "n3", TABLE_RECORDS, marks.n1)).to.deep.equal([`warn ${LOG.peerSuspect}`]);
      expect(c.node("n1").metrics.get("dist.heartbeat.failure")).to.equal(1);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.failure"), "the relay n2 could not reach n3 either").to.equal(1);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.refuted")).to.equal(0);
      expect(c.node("n1").members.ringMembers(), "a suspect keeps its ring position").to.have.members(ringBefore);

      await c.advance(4_999);
      expect(stateOf(c, "n1", "n3"), "5.999 s after the last good probe").to.equal("suspect");
      expect(stateOf(c, "n2", "n3")).to.equal("suspect");
      await c.advance(1);
      for (const id of ["n1", "n2"]) {
        expect(stateOf(c, id, "n3"), `${id} pruned n3 at 6 s`).to.equal("absent");
        expect(view(c, id), id).to.deep.equal(["n1:alive", "n2:alive"]);
        expect(c.node(id).metrics.get("dist.nodes.dead"), id).to.equal(1);
        expect(c.node(id).metrics.get("dist.nodes.removed"), id).to.equal(1);
        expect(c.node(id).metrics.get("dist.nodes.suspect"), id).to.equal(0);
        expect(c.node(id).metrics.get("dist.membership.version"), id).to.equal(c.node(id).members.version);
        expect(c.node(id).members.knownCount(), `${id}: a pruned node still counts as known`).to.equal(3);
        expect(c.node(id).members.ringMembers(), `${id}: pruned, off the ring`).to.have.members(["n1", "n2"]);
      }
      expect(peerRecords(c, "n1", "n3", TABLE_RECORDS, marks.n1)).to.deep.equal([`warn ${LOG.peerSuspect}`, `warn ${LOG.peerPruned}`, `info ${LOG.peerRemoved}`]);
      // n2 may learn the suspicion from n1's gossip before its own probe fails; the death is its own.
      expect(peerRecords(c, "n2", "n3", TABLE_RECORDS, marks.n2).slice(-2)).to.deep.equal([`warn ${LOG.peerPruned}`, `info ${LOG.peerRemoved}`]);
      // The isolated node saw the same from its side.
      expect(view(c, "n3")).to.deep.equal(["n3:alive"]);
      expect(peerRecords(c, "n3", "n1", TABLE_RECORDS, marks.n3)).to.deep.equal([`warn ${LOG.peerSuspect}`, `warn ${LOG.peerPruned}`, `info ${LOG.peerRemoved}`]);
    }),
  );

  it(
    "a cut direct path (n1 cannot reach n3, n2 reaches both) is refuted by the indirect probe every heartbeat: warn 'peer probe refuted by indirect probe', nobody suspected or pruned",
    withSeed(202, async () => {
      const c = await cluster({ nodes: 3, seed: 202, env: ENV });
      await c.advance(2_000);
      const marks = recordMarks(c);
      const version = c.node("n2").members.version;
      c.chaos.partition(["n1"], ["n3"]);
      await c.advance(1_000);
      expect(peerRecords(c, "n1", "n3", TABLE_RECORDS, marks.n1)).to.deep.equal([`warn ${LOG.peerRefutedIndirect}`]);
      expect(peerRecords(c, "n3", "n1", TABLE_RECORDS, marks.n3)).to.deep.equal([`warn ${LOG.peerRefutedIndirect}`]);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.refuted")).to.equal(1);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.success")).to.equal(1);
      expect(c.node("n1").metrics.get("dist.heartbeat.failure")).to.equal(1);

      await c.advance(10_000);
      expectFullyAlive(c, ["n1", "n2", "n3"], ["n1", "n2", "n3"]);
      for (const id of ["n1", "n3"]) {
        expect(c.node(id).metrics.get("dist.heartbeat.indirect_probe.refuted"), `${id}: one refutation per heartbeat`).to.equal(11);
        expect(c.node(id).metrics.get("dist.heartbeat.failure"), id).to.equal(11);
        expect(c.node(id).metrics.get("dist.nodes.dead"), id).to.equal(0);
      }
      expect(peerRecords(c, "n1", "n3", [LOG.peerSuspect, LOG.peerPruned], marks.n1)).to.deep.equal([]);
      expect(c.node("n2").members.version, "n2 saw no membership change").to.equal(version);
      expect(c.node("n2").metrics.get("dist.heartbeat.failure")).to.equal(0);
    }),
  );

  it(
    "with SERVICE_INDIRECT_PROBE_K=0 the same cut makes n1 suspect n3 at once, without asking any relay",
    withSeed(203, async () => {
      const c = await cluster({ nodes: 3, seed: 203, env: { ...ENV, SERVICE_INDIRECT_PROBE_K: "0" } });
      await c.advance(2_000);
      const marks = recordMarks(c);
      c.chaos.partition(["n1"], ["n3"]);
      await c.advance(1_000);
      expect(peerRecords(c, "n1", "n3", TABLE_RECORDS, marks.n1)).to.deep.equal([`warn ${LOG.peerSuspect}`]);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.success")).to.equal(0);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.failure")).to.equal(0);
      expect(c.node("n1").metrics.get("dist.heartbeat.indirect_probe.refuted")).to.equal(0);
      expect(stateOf(c, "n2", "n3"), "n2 still probes n3 successfully").to.not.equal("absent");
    }),
  );

  it(
    "in a healthy cluster probe successes refresh last_seen every heartbeat but never move incarnations or the membership version",
    withSeed(204, async () => {
      const c = await cluster({ nodes: 4, seed: 204, env: ENV });
      await c.advance(2_000);
      const versions = c.nodes.map((n) => n.node.members.version);
      await c.advance(5_000);
      const now = c.clock.nowMs();
      for (const n of c.nodes) {
        for (const m of n.node.members.peers()) {
          expect(m, `${n.id} sees ${m.id}`).to.include({ state: "alive", incarnation: 1 });
          expect(now - m.lastSeenMs, `${n.id} heard from ${m.id} within a heartbeat`).to.be.lessThan(1_000);
        }
      }
      expect(c.nodes.map((n) => n.node.members.version)).to.deep.equal(versions);
    }),
  );

  it(
    "real changes (suspect, then alive again) bump the version and fire observers exactly once per bump, each seeing the committed version",
    withSeed(206, async () => {
      const c = await cluster({ nodes: 3, seed: 206, env: ENV });
      await c.advance(2_000);
      const seen = new Map<string, number[]>();
      const start = new Map<string, number>();
      for (const n of c.nodes) {
        const versions: number[] = [];
        seen.set(n.id, versions);
        start.set(n.id, n.node.members.version);
        n.node.members.onChange(() => versions.push(n.node.members.version));
      }
      c.chaos.isolate("n3");
      await c.advance(1_500);
      c.chaos.heal();
      await c.advance(3_000);
      expectFullyAlive(c, ["n1", "n2", "n3"], ["n1", "n2", "n3"]);
      for (const n of c.nodes) {
        const versions = seen.get(n.id)!;
        const from = start.get(n.id)!;
        expect(versions.length, `${n.id}: suspect and alive again at least`).to.be.at.least(2);
        expect(versions, `${n.id}: one call per bump, after the bump`).to.deep.equal(versions.map((_, i) => from + i + 1));
        expect(n.node.members.version, n.id).to.equal(from + versions.length);
      }
      expect(c.node("n1").members.get("n3")!.incarnation, "suspect (2), then alive (3)").to.equal(3);
    }),
  );

  it(
    "manual removal of a crashed peer logs only 'peer removed from membership': no pruned record follows, even past the dead window, and the known count drops",
    withSeed(205, async () => {
      const c = await cluster({ nodes: 3, seed: 205, env: ENV });
      await c.advance(2_000);
      const marks = recordMarks(c);
      c.crash("n3");
      expect(c.node("n1").members.remove("n3")).to.equal(true);
      expect(c.node("n2").members.remove("n3")).to.equal(true);
      for (const id of ["n1", "n2"]) {
        expect(c.node(id).members.knownCount(), id).to.equal(2);
        expect(c.node(id).members.ringMembers(), id).to.have.members(["n1", "n2"]);
      }
      await c.advance(10_000);
      for (const id of ["n1", "n2"]) {
        expect(peerRecords(c, id, "n3", TABLE_RECORDS, marks[id]), id).to.deep.equal([`info ${LOG.peerRemoved}`]);
        expect(c.node(id).metrics.get("dist.nodes.dead"), id).to.equal(0);
        expect(c.node(id).metrics.get("dist.nodes.removed"), id).to.equal(1);
        expect(view(c, id), id).to.deep.equal(["n1:alive", "n2:alive"]);
      }
    }),
  );

  it(
    "a manual removal sticks: hearsay from a peer that still lists the removed node (as suspect) does not bring it back, so no pruned record follows and the known count stays lowered",
    withSeed(207, async () => {
      const c = await cluster({ nodes: 3, seed: 207, env: ENV });
      await c.advance(2_000);
      c.crash("n3");
      await c.advance(1_000);
      expect(stateOf(c, "n2", "n3")).to.equal("suspect");
      const mark = c.sim("n1").logger.records.length;
      expect(c.node("n1").members.remove("n3")).to.equal(true);
      await c.advance(10_000);
      expect(peerRecords(c, "n1", "n3", TABLE_RECORDS, mark), "n1's records about n3 after the removal").to.deep.equal([`info ${LOG.peerRemoved}`]);
      expect(c.node("n1").members.knownCount(), "only a manual removal lowers the known count, and nothing raises it again").to.equal(2);
    }),
  );

  it(
    "a seed named with the wrong id (ghost@<n1's address>) is pruned, not kept alive by a relay that reached n1: the relay checks who answered",
    withSeed(207, async () => {
      const c = await cluster({ nodes: 1, seed: 207, env: ENV });
      c.join("n2", { SERVICE_SEEDS: "ghost@n1.sim:7946" });
      await c.advance(12_000);
      for (const id of ["n1", "n2"]) {
        expect(stateOf(c, id, "ghost"), `${id}: no node ever answered as ghost`).to.equal("absent");
        expect(view(c, id), id).to.deep.equal(["n1:alive", "n2:alive"]);
        expect(c.node(id).members.ringMembers(), `${id}: ghost holds no ring position`).to.have.members(["n1", "n2"]);
      }
      expect(c.node("n2").metrics.get("dist.heartbeat.indirect_probe.refuted"), "no relay vouched for ghost").to.equal(0);
      const warned = c.sim("n2").logger.records.filter((r) => r.message === LOG.peerAnsweredAsOther && r.fields.peer === "ghost");
      expect(warned.length, "the operator is told which seed is wrong").to.be.greaterThan(0);
      expect(warned[0]?.level).to.equal("warn");
      expect(warned[0]?.fields).to.include({ address: "n1.sim:7946", answered_as: "n1" });
    }),
  );
});
