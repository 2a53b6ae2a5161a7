// The heartbeat loop (SWIM failure detection). Every heartbeat each peer that is not dead is
// probed directly, in a seeded random order, with a timeout of half the heartbeat. A failed
// direct probe asks up to K random alive relays to probe the peer (indirect probe); if one
// reaches it the suspicion is refuted, otherwise the peer is marked suspect. A suspect that
// goes SERVICE_DEAD_AFTER without a successful probe is declared dead and pruned.
import type { Clock, TimerHandle, Timers } from "../core/clock.js";
import { CacheError } from "../core/errors.js";
import { withTimeout } from "../core/timeout.js";
import { sample, shuffle, type Random } from "../core/random.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import { answeredAsOther, type PeerRef, type PeerTransport } from "../transport/index.js";
import type { MemberTable } from "./member-table.js";

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
      const peers = shuffle(this.deps.random, this.deps.members.peers("alive", "suspect"));
      await Promise.all(peers.map((p) => this.probe({ id: p.id, address: p.address })));
      // one change for the observers, however many are pruned
      const { members } = this.deps;
      members.batch(() => {
        for (const id of members.overdueSuspects(this.deps.deadAfterMs)) members.prune(id);
      });
    } finally {
      this.running = false;
    }
  }

  /** Probes one peer directly, then indirectly on failure. */
  async probe(peer: PeerRef): Promise<void> {
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
    if (this.deps.indirectProbeK > 0 && (await this.probeIndirectly(peer))) {
      metrics.inc("dist.heartbeat.indirect_probe.refuted");
      this.deps.logger.warn(LOG.peerRefutedIndirect, { peer: peer.id });
      members.probeSucceeded(peer.id);
      return;
    }
    members.markSuspect(peer.id);
  }

  /** Asks up to K random alive relays to reach `peer`; true when one did. */
  private async probeIndirectly(peer: PeerRef): Promise<boolean> {
    const { members, transport, timers, metrics, random } = this.deps;
    const relays = sample(random, members.peers("alive").filter((m) => m.id !== peer.id), this.deps.indirectProbeK);
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
