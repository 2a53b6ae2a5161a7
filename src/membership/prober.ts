// The heartbeat loop (SWIM failure detection). Every heartbeat each peer that is not dead is
// probed directly, in a seeded random order, with a timeout of half the heartbeat. A failed
// direct probe asks up to K random alive relays to probe the peer (indirect probe); if one
// reaches it the suspicion is refuted, otherwise the peer is marked suspect. A suspect that
// goes SERVICE_DEAD_AFTER without a successful probe is declared dead and pruned.
// A round of more than PROBE_SLICE peers starts its probes a slice at a time over the first half
// of the heartbeat (they all end by its end): started at once, 4,096 members (a peer allowed to
// gossip can add that many unreachable ones) held the loop for a second each round.
import { sleep, type Clock, type TimerHandle, type Timers } from "../core/clock.js";
import { CacheError } from "../core/errors.js";
import { withTimeout } from "../core/timeout.js";
import { sampleWhere, shuffle, type Random } from "../core/random.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import { answeredAsOther, type PeerRef, type PeerTransport } from "../transport/index.js";
import type { MemberTable } from "./member-table.js";
import type { Member } from "./transitions.js";

/** Probes started together; a larger round is spread over the first half of the heartbeat. */
export const PROBE_SLICE = 64;

export interface ProberDeps {
  readonly members: MemberTable;
  readonly transport: PeerTransport;
  readonly timers: Timers;
  readonly random: Random;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly heartbeatMs: number;
  readonly indirectProbeK: number;
  readonly deadAfterMs: number;
  /** Wall clock for the offset samples; with `offsets`, every direct probe answer is one. */
  readonly clock?: Clock;
  readonly offsets?: { sample(peerId: string, sentMs: number, answeredMs: number, peerUnixMs: number): void };
}

export class Prober {
  private timer: TimerHandle | undefined;
  private running = false;

  constructor(private readonly deps: ProberDeps) {}

  /** Probe timeout: half the heartbeat interval. */
  get probeTimeoutMs(): number {
    return Math.max(1, Math.floor(this.deps.heartbeatMs / 2));
  }

  start(): void {
    if (this.timer) return;
    this.timer = this.deps.timers.every(this.deps.heartbeatMs, () => void this.runHeartbeatTick());
    this.deps.logger.info(LOG.heartbeatLoopStarted, { interval_ms: this.deps.heartbeatMs, indirect_probe_k: this.deps.indirectProbeK });
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One round: probe every alive or suspect peer, then prune overdue suspects. */
  async runHeartbeatTick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const listed = this.deps.members.peers("alive", "suspect");
      // The relays are drawn from the members alive at the start of the round (one read of the
      // table, however many probes fail: with thousands of members, a read per failure held the
      // loop for seconds), and must still be alive when drawn.
      const relays = listed.filter((m) => m.state === "alive");
      const peers = shuffle(this.deps.random, listed);
      await this.probeInSlices(peers, relays);
      // one change for the observers, however many are pruned
      const { members } = this.deps;
      members.batch(() => {
        for (const id of members.overdueSuspects(this.deps.deadAfterMs)) members.prune(id);
      });
    } finally {
      this.running = false;
    }
  }

  /** Probes `peers` PROBE_SLICE at a time, the slices started evenly over the first half of the heartbeat. */
  private async probeInSlices(peers: readonly Member[], relays: readonly Member[]): Promise<void> {
    const slices = Math.ceil(peers.length / PROBE_SLICE);
    const gapMs = slices > 1 ? this.deps.heartbeatMs / 2 / slices : 0;
    const probes: Array<Promise<void>> = [];
    for (let i = 0; i < slices; i++) {
      if (i > 0) await sleep(this.deps.timers, gapMs);
      for (const p of peers.slice(i * PROBE_SLICE, (i + 1) * PROBE_SLICE)) probes.push(this.probe({ id: p.id, address: p.address }, relays));
    }
    await Promise.all(probes);
  }

  /** Probes one peer directly, then indirectly on failure through `relays` (default: the alive peers now). */
  async probe(peer: PeerRef, relays?: readonly Member[]): Promise<void> {
    const { members, transport, timers, metrics } = this.deps;
    try {
      const sentMs = this.deps.clock?.nowMs() ?? 0;
      const h = await withTimeout(timers, this.probeTimeoutMs, transport.health(peer), `probe of ${peer.id}`);
      const other = answeredAsOther(h.node, peer.id);
      if (other !== undefined) {
        // Said at each failed probe until the member is pruned (SERVICE_DEAD_AFTER), then never.
        this.deps.logger.warn(LOG.peerAnsweredAsOther, { peer: peer.id, address: peer.address, answered_as: other });
        throw new CacheError("UNAVAILABLE", `${peer.address} answered as ${other}, not ${peer.id}`);
      }
      if (this.deps.clock && this.deps.offsets) this.deps.offsets.sample(peer.id, sentMs, this.deps.clock.nowMs(), h.unixMs ?? 0);
      members.probeSucceeded(peer.id, h.incarnation);
      return;
    } catch {
      metrics.inc("dist.heartbeat.failure");
    }
    if (this.deps.indirectProbeK > 0 && (await this.probeIndirectly(peer, relays ?? members.peers("alive")))) {
      metrics.inc("dist.heartbeat.indirect_probe.refuted");
      this.deps.logger.warn(LOG.peerRefutedIndirect, { peer: peer.id });
      members.probeSucceeded(peer.id);
      return;
    }
    members.markSuspect(peer.id);
  }

  /** Asks up to K random relays of `candidates` that are still alive to reach `peer`; true when one did. */
  private async probeIndirectly(peer: PeerRef, candidates: readonly Member[]): Promise<boolean> {
    const { members, transport, timers, metrics, random } = this.deps;
    const stillAlive = (m: Member) => m.id !== peer.id && members.get(m.id)?.state === "alive";
    const relays = sampleWhere(random, candidates, this.deps.indirectProbeK, stillAlive);
    if (relays.length === 0) return false;
    const results = await Promise.all(
      relays.map(async (r) => {
        try {
          const res = await withTimeout(timers, this.probeTimeoutMs, transport.probe({ id: r.id, address: r.address }, peer.id), `indirect probe via ${r.id}`);
          metrics.inc(res.ok ? "dist.heartbeat.indirect_probe.success" : "dist.heartbeat.indirect_probe.failure");
          return res.ok;
        } catch {
          metrics.inc("dist.heartbeat.indirect_probe.failure");
          return false;
        }
      }),
    );
    return results.some((ok) => ok);
  }
}
