// Gossip and joining. Every SERVICE_GOSSIP_INTERVAL the full member list is pushed to one random
// alive peer, which merges it and answers with its own list (push-pull), so a change reaches
// every node in a few rounds. Joining is the same exchange with the seeds; a seed given as a
// bare address is first asked who it is (its id is learned from its health answer).
import type { TimerHandle, Timers } from "../core/clock.js";
import { isNodeId } from "../core/node-id.js";
import { randomInt, type Random } from "../core/random.js";
import { LOG, type Logger } from "../log/index.js";
import type { PeerMember, PeerRef, PeerTransport } from "../transport/index.js";
import type { MemberTable } from "./member-table.js";
import { withTimeout } from "../core/timeout.js";

export interface GossiperDeps {
  readonly members: MemberTable;
  readonly transport: PeerTransport;
  readonly timers: Timers;
  readonly random: Random;
  readonly logger: Logger;
  readonly intervalMs: number;
  /** Seeds from SERVICE_SEEDS; an empty id means a bare address. */
  readonly seeds: ReadonlyArray<{ readonly id: string; readonly address: string }>;
  readonly timeoutMs: number;
}

export class Gossiper {
  private timer: TimerHandle | undefined;
  private readonly unresolvedSeeds: Set<string>;
  private running = false;

  constructor(private readonly deps: GossiperDeps) {
    this.unresolvedSeeds = new Set(deps.seeds.filter((s) => s.id === "").map((s) => s.address));
  }

  start(): void {
    if (this.timer) return;
    void this.join();
    this.timer = this.deps.timers.every(this.deps.intervalMs, () => void this.runGossipTick());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Exchanges member lists with every seed (learning the ids of bare seeds). */
  async join(): Promise<void> {
    await this.resolveBareSeeds();
    await Promise.all(this.deps.seeds.filter((s) => s.id !== "").map((s) => this.exchange({ id: s.id, address: s.address }, false)));
  }

  /** One round: retry unresolved bare seeds, then push-pull with one random alive peer. */
  async runGossipTick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.resolveBareSeeds();
      const { members, random } = this.deps;
      // Suspects are included: a suspect must hear the claim about itself to refute it.
      const peers = members.peers("alive", "suspect");
      const p = peers[randomInt(random, peers.length)];
      // Also knock on one node this node has lost (pruned) or never reached (a seed): that is how
      // both sides of a healed partition, and restarted nodes, find each other again.
      const absent = [
        ...members.absentPeers(),
        ...this.deps.seeds.filter((s) => s.id !== "" && !members.get(s.id) && !members.isRemoved(s.id) && !members.absentPeers().some((a) => a.id === s.id)),
      ];
      const a = absent[randomInt(random, absent.length)];
      await Promise.all([
        p ? this.exchange({ id: p.id, address: p.address }, true) : Promise.resolve(),
        a ? this.exchange({ id: a.id, address: a.address }, false) : Promise.resolve(),
      ]);
    } finally {
      this.running = false;
    }
  }

  /**
   * Push-pull with one chosen peer now (a draining node asks each peer this way whether it saw
   * the drain, and a leaving node announces that it left). True when the peer answered.
   */
  pushTo(peer: PeerRef): Promise<boolean> {
    return this.exchange(peer, false);
  }

  /** Push-pull with one peer; answers are merged as gossip from that peer. */
  private async exchange(peer: PeerRef, logFailure: boolean): Promise<boolean> {
    const { members, transport, timers } = this.deps;
    try {
      const theirs = await withTimeout(timers, this.deps.timeoutMs, transport.gossip(peer, members.selfId, members.list() as PeerMember[]), `gossip to ${peer.id}`);
      members.merge(peer.id, theirs);
      return true;
    } catch (err) {
      if (logFailure) this.deps.logger.warn(LOG.gossipPushFailed, { peer: peer.id, error: err instanceof Error ? err.message : String(err) });
      return false;
    }
  }

  private async resolveBareSeeds(): Promise<void> {
    const { members, transport, timers } = this.deps;
    await Promise.all(
      [...this.unresolvedSeeds].map(async (address) => {
        try {
          const h = await withTimeout(timers, this.deps.timeoutMs, transport.health({ id: "", address }), `identity of seed ${address}`);
          if (!isNodeId(h.node) || h.node === members.selfId) return;
          this.unresolvedSeeds.delete(address);
          members.addPeer(h.node, address, h.incarnation);
          await this.exchange({ id: h.node, address }, false);
        } catch {
          // The seed is not up yet; the next round asks again.
        }
      }),
    );
  }
}
