// Prober (SWIM failure detection) with a fake PeerTransport and a ManualClock: direct probes,
// indirect probes through at most K alive relays in a seeded order, the probe timeout (half the
// heartbeat), the log records and dist.heartbeat.* metrics of each outcome, and pruning of
// suspects past SERVICE_DEAD_AFTER.
import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { seededRandom } from "../../../src/core/random.js";
import { LOG, recordingLogger, type RecordingLogger } from "../../../src/log/index.js";
import { MemberTable, Prober } from "../../../src/membership/index.js";
import { PROBE_SLICE } from "../../../src/membership/prober.js";
import { Metrics } from "../../../src/observability/index.js";
import type { HealthInfo, PeerRef, PeerTransport, ProbeResult } from "../../../src/transport/index.js";
import { flush, ManualClock } from "../../helpers/manual-clock.js";

/** How a call behaves: answers, answers "not reached" (relays only), rejects, or never settles. */
type Behaviour = "ok" | "unreached" | "fail" | "hang";

/** A transport that answers health and indirect probes as the test says, and records calls. */
class FakeTransport {
  /** Direct probe behaviour per target id (default ok). */
  readonly direct = new Map<string, Behaviour>();
  /** Indirect probe behaviour per relay id (default ok). */
  readonly relay = new Map<string, Behaviour>();
  /** Node id a health answer claims (default: the probed id). */
  readonly answersAs = new Map<string, string>();
  readonly healthCalls: string[] = [];
  readonly probeCalls: Array<{ relay: string; target: string }> = [];

  health(to: PeerRef): Promise<HealthInfo> {
    this.healthCalls.push(to.id);
    return this.behave(this.direct.get(to.id) ?? "ok", () => ({ node: this.answersAs.get(to.id) ?? to.id, draining: false, incarnation: 1 }));
  }

  probe(relay: PeerRef, targetId: string): Promise<ProbeResult> {
    this.probeCalls.push({ relay: relay.id, target: targetId });
    const b = this.relay.get(relay.id) ?? "ok";
    if (b === "unreached") return Promise.resolve({ target: targetId, ok: false, error: "unreachable" });
    return this.behave(b, () => ({ target: targetId, ok: true, error: "" }));
  }

  private behave<T>(b: Behaviour, answer: () => T): Promise<T> {
    if (b === "hang") return new Promise<T>(() => undefined);
    if (b === "fail") return Promise.reject(new CacheError("UNAVAILABLE", "unreachable (fake)"));
    return Promise.resolve(answer());
  }

  asTransport(): PeerTransport {
    return this as unknown as PeerTransport;
  }
}

interface Fixture {
  readonly clock: ManualClock;
  readonly metrics: Metrics;
  readonly logger: RecordingLogger;
  readonly members: MemberTable;
  readonly transport: FakeTransport;
  readonly prober: Prober;
  records(peer?: string): string[];
}

function fixture(opts: { peers: readonly string[]; k?: number; seed?: number; heartbeatMs?: number; deadAfterMs?: number }): Fixture {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  const members = new MemberTable({ selfId: "me", selfAddress: "me:7946", clock, metrics, logger });
  for (const p of opts.peers) members.addPeer(p, `${p}:7946`);
  logger.records.length = 0;
  const transport = new FakeTransport();
  const heartbeatMs = opts.heartbeatMs ?? 1_000;
  const prober = new Prober({
    members,
    transport: transport.asTransport(),
    timers: clock,
    random: seededRandom(opts.seed ?? 1),
    metrics,
    logger,
    heartbeatMs,
    indirectProbeK: opts.k ?? 2,
    deadAfterMs: opts.deadAfterMs ?? 6 * heartbeatMs,
  });
  const records = (peer?: string) => logger.records.filter((r) => peer === undefined || r.fields.peer === peer).map((r) => `${r.level} ${r.message}`);
  return { clock, metrics, logger, members, transport, prober, records };
}

const ref = (id: string): PeerRef => ({ id, address: `${id}:7946` });

describe("membership/prober", () => {
  it("a direct probe success refreshes last-seen only: no indirect probe, no failure metric, no record, no version bump", async () => {
    const f = fixture({ peers: ["a", "b"] });
    const version = f.members.version;
    f.clock.advance(700);
    await f.prober.probe(ref("a"));
    expect(f.members.get("a")).to.include({ state: "alive", incarnation: 1, lastSeenMs: f.clock.nowMs() });
    expect(f.transport.probeCalls).to.deep.equal([]);
    expect(f.metrics.get("dist.heartbeat.failure")).to.equal(0);
    expect(f.members.version).to.equal(version);
    expect(f.records()).to.deep.equal([]);
  });

  it("a failed direct probe refuted by an indirect probe: warn 'peer probe refuted by indirect probe', dist.heartbeat.indirect_probe.refuted and .success, the peer stays alive", async () => {
    const f = fixture({ peers: ["a", "b", "c"], k: 2 });
    f.transport.direct.set("a", "fail");
    f.transport.relay.set("b", "unreached");
    const version = f.members.version;
    await f.prober.probe(ref("a"));
    expect(f.records("a")).to.deep.equal([`warn ${LOG.peerRefutedIndirect}`]);
    expect(f.members.get("a")).to.include({ state: "alive", incarnation: 1 });
    expect(f.members.version).to.equal(version);
    expect(f.metrics.get("dist.heartbeat.failure")).to.equal(1);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.refuted")).to.equal(1);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.success")).to.equal(1);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.failure")).to.equal(1);
    expect(f.transport.probeCalls.map((p) => p.relay)).to.have.members(["b", "c"]);
    expect(f.transport.probeCalls.every((p) => p.target === "a")).to.equal(true);
  });

  it("a failed direct probe with every relay failing (an error or 'not reached'): the peer goes suspect with warn 'peer marked suspect (timeout)'", async () => {
    const f = fixture({ peers: ["a", "b", "c"], k: 2 });
    f.transport.direct.set("a", "fail");
    f.transport.relay.set("b", "unreached");
    f.transport.relay.set("c", "fail");
    await f.prober.probe(ref("a"));
    expect(f.members.get("a")).to.include({ state: "suspect", incarnation: 2 });
    expect(f.records("a")).to.deep.equal([`warn ${LOG.peerSuspect}`]);
    expect(f.metrics.get("dist.heartbeat.failure")).to.equal(1);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.failure")).to.equal(2);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.success")).to.equal(0);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.refuted")).to.equal(0);
    expect(f.metrics.get("dist.nodes.suspect")).to.equal(1);
  });

  it("K = 0 disables indirect probes: a failed direct probe makes the peer suspect without asking any relay", async () => {
    const f = fixture({ peers: ["a", "b", "c"], k: 0 });
    f.transport.direct.set("a", "fail");
    await f.prober.probe(ref("a"));
    expect(f.transport.probeCalls).to.deep.equal([]);
    expect(f.members.get("a")?.state).to.equal("suspect");
    expect(f.metrics.get("dist.heartbeat.indirect_probe.failure")).to.equal(0);
    expect(f.metrics.get("dist.heartbeat.indirect_probe.success")).to.equal(0);
  });

  it("with no alive relay available the peer goes suspect directly", async () => {
    const f = fixture({ peers: ["a"], k: 3 });
    f.transport.direct.set("a", "fail");
    await f.prober.probe(ref("a"));
    expect(f.transport.probeCalls).to.deep.equal([]);
    expect(f.members.get("a")?.state).to.equal("suspect");
  });

  it("an answer from a different node (the address now belongs to someone else) counts as a failed probe", async () => {
    const f = fixture({ peers: ["a"], k: 0 });
    f.transport.answersAs.set("a", "intruder");
    await f.prober.probe(ref("a"));
    expect(f.metrics.get("dist.heartbeat.failure")).to.equal(1);
    expect(f.members.get("a")?.state).to.equal("suspect");
  });

  describe("probe timeout: half the heartbeat", () => {
    it("is 500 ms for a 1 s heartbeat and 1500 ms for a 3 s heartbeat", () => {
      expect(fixture({ peers: [] }).prober.probeTimeoutMs).to.equal(500);
      expect(fixture({ peers: [], heartbeatMs: 3_000 }).prober.probeTimeoutMs).to.equal(1_500);
    });

    it("a direct probe that never answers fails after exactly half the heartbeat (K = 0)", async () => {
      const f = fixture({ peers: ["a"], k: 0 });
      f.transport.direct.set("a", "hang");
      let done = false;
      const p = f.prober.probe(ref("a")).then(() => (done = true));
      await f.clock.advanceAsync(499);
      expect(done).to.equal(false);
      expect(f.members.get("a")?.state).to.equal("alive");
      await f.clock.advanceAsync(1);
      await p;
      expect(f.members.get("a")?.state).to.equal("suspect");
      expect(f.metrics.get("dist.heartbeat.failure")).to.equal(1);
    });

    it("indirect probes time out after half the heartbeat too: suspect once direct and indirect timeouts have both passed", async () => {
      const f = fixture({ peers: ["a", "b"], k: 1 });
      f.transport.direct.set("a", "hang");
      f.transport.relay.set("b", "hang");
      const p = f.prober.probe(ref("a"));
      await f.clock.advanceAsync(500);
      expect(f.transport.probeCalls).to.deep.equal([{ relay: "b", target: "a" }]);
      await f.clock.advanceAsync(499);
      expect(f.members.get("a")?.state).to.equal("alive");
      await f.clock.advanceAsync(1);
      await p;
      expect(f.members.get("a")?.state).to.equal("suspect");
      expect(f.metrics.get("dist.heartbeat.indirect_probe.failure")).to.equal(1);
    });
  });

  describe("relay choice", () => {
    const peers = ["t", "a", "b", "c", "d", "s1", "s2"];

    async function relaysFor(seed: number, k: number): Promise<string[]> {
      const f = fixture({ peers, k, seed });
      f.members.markSuspect("s1");
      f.members.markSuspect("s2");
      f.transport.direct.set("t", "fail");
      f.transport.relay.set("a", "unreached");
      f.transport.relay.set("b", "unreached");
      f.transport.relay.set("c", "unreached");
      f.transport.relay.set("d", "unreached");
      await f.prober.probe(ref("t"));
      return f.transport.probeCalls.map((p) => p.relay);
    }

    it("asks at most K relays, all alive (never a suspect peer nor the target)", async () => {
      for (const seed of [1, 2, 3, 4, 5]) {
        const relays = await relaysFor(seed, 2);
        expect(relays, `seed=${seed}`).to.have.length(2);
        expect(new Set(relays).size, `seed=${seed}`).to.equal(2);
        for (const r of relays) expect(["a", "b", "c", "d"], `seed=${seed}`).to.include(r);
      }
    });

    it("with K above the number of alive peers asks every alive peer once", async () => {
      expect(await relaysFor(9, 16)).to.have.members(["a", "b", "c", "d"]);
    });

    it("the choice is reproducible from the seed", async () => {
      const seen = new Set<string>();
      for (const seed of [11, 12, 13, 14, 15, 16]) {
        const first = await relaysFor(seed, 2);
        expect(await relaysFor(seed, 2), `seed=${seed}`).to.deep.equal(first);
        seen.add(first.join(","));
      }
      expect(seen.size, "different seeds pick different relays").to.be.greaterThan(1);
    });
  });

  describe("heartbeat ticks", () => {
    it("a tick probes every alive and suspect peer once, in a seeded order", async () => {
      const orders: string[] = [];
      for (let i = 0; i < 2; i++) {
        const f = fixture({ peers: ["a", "b", "c", "d"], seed: 42 });
        f.members.markSuspect("c");
        await f.prober.runHeartbeatTick();
        expect(f.transport.healthCalls).to.have.members(["a", "b", "c", "d"]);
        orders.push(f.transport.healthCalls.join(","));
        expect(f.members.get("c")?.state, "a suspect that answers is alive again").to.equal("alive");
      }
      expect(orders[1]).to.equal(orders[0]);
    });

    it("a suspect without a successful probe for SERVICE_DEAD_AFTER is pruned: suspect, pruned, removed records in order", async () => {
      const f = fixture({ peers: ["a", "b"], k: 0, heartbeatMs: 1_000, deadAfterMs: 6_000 });
      f.prober.start();
      f.logger.records.length = 0;
      await f.clock.advanceAsync(1_000);
      expect(f.members.get("a")?.state).to.equal("alive");
      f.transport.direct.set("a", "fail");
      await f.clock.advanceAsync(1_000);
      expect(f.members.get("a")?.state, "suspect at the first failed heartbeat (t=2s)").to.equal("suspect");
      await f.clock.advanceAsync(4_000);
      expect(f.members.get("a")?.state, "t=6s: 5 s since the last good probe").to.equal("suspect");
      await f.clock.advanceAsync(1_000);
      await flush();
      expect(f.members.get("a"), "t=7s: 6 s since the last good probe").to.equal(undefined);
      expect(f.records("a")).to.deep.equal([`warn ${LOG.peerSuspect}`, `warn ${LOG.peerPruned}`, `info ${LOG.peerRemoved}`]);
      expect(f.metrics.get("dist.nodes.dead")).to.equal(1);
      expect(f.metrics.get("dist.nodes.removed")).to.equal(1);
      expect(f.metrics.get("dist.heartbeat.failure")).to.equal(6);
      expect(f.members.get("b")?.state).to.equal("alive");
      expect(f.members.knownCount()).to.equal(3);
      f.prober.stop();
    });

    it("start logs info 'heartbeat loop started' with the interval and K", () => {
      const f = fixture({ peers: [], k: 3 });
      f.prober.start();
      expect(f.records()).to.deep.equal([`info ${LOG.heartbeatLoopStarted}`]);
      expect(f.logger.records[0]!.fields).to.include({ interval_ms: 1_000, indirect_probe_k: 3 });
      f.prober.stop();
      expect(f.clock.pending).to.equal(0);
    });
  });
  it("a round of 2,000 failing peers starts its probes a slice at a time over half a heartbeat and reads the member list once, not once per failure (a peer allowed to gossip could add 4,096 unreachable members: each failure listed and sorted them all, seconds of one loop)", async () => {
    const peers = Array.from({ length: 2_000 }, (_, i) => `p${i}`);
    const f = fixture({ peers, k: 2 });
    for (const p of peers) f.transport.direct.set(p, "fail");
    for (const p of peers) f.transport.relay.set(p, "unreached");
    let listed = 0;
    const list = f.members.list.bind(f.members);
    f.members.list = () => {
      listed++;
      return list();
    };
    const round = f.prober.runHeartbeatTick();
    await f.clock.advanceAsync(0);
    expect(f.transport.healthCalls.length, "the first slice starts at once").to.equal(PROBE_SLICE);
    await f.clock.advanceAsync(250);
    expect(f.transport.healthCalls.length, "a quarter heartbeat in: about half the slices").to.be.within(peers.length / 2 - 2 * PROBE_SLICE, peers.length / 2 + 2 * PROBE_SLICE);
    await f.clock.advanceAsync(250);
    expect(f.transport.healthCalls.length, "every probe started in the first half of the heartbeat").to.equal(peers.length);
    await f.clock.advanceAsync(500);
    await round;
    expect(peers.filter((p) => f.members.get(p)?.state !== "suspect"), "every peer suspect").to.deep.equal([]);
    expect(listed, "member-list reads in the round").to.be.at.most(2);
    // Relays still alive when drawn: as the round marks peers suspect, fewer pass (drawn 8 times per relay at most).
    const perTarget = new Map<string, number>();
    for (const c of f.transport.probeCalls) perTarget.set(c.target, (perTarget.get(c.target) ?? 0) + 1);
    expect(Math.max(...perTarget.values()), "at most K relays per failed peer").to.equal(2);
    expect(f.transport.probeCalls.length, "most failures asked relays").to.be.greaterThan(peers.length);
    expect(f.transport.probeCalls.every((c) => c.relay !== c.target), "a peer is never its own relay").to.equal(true);
  });
});
