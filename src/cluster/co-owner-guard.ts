// The co-owner guard: the contact guard (contact-guard.ts) for the links to single peers. A node
// that sees a majority keeps its data, yet its links to some peers can stay down while the
// membership keeps those peers alive through relays (indirect probes). Deletes those peers take
// then miss this node: their pushes fail, their hints expire (SERVICE_HINT_TTL), and anti-entropy
// cannot reach them. Once they compact the tombstones (SERVICE_TOMBSTONE_TTL), nothing tells this
// node's old copy of such a key from one they never received, and after the links heal
// anti-entropy or read repair would bring the deleted key back.
//
// So a ring peer no direct probe has reached for half the tombstone TTL counts as cut off, and a
// pass drops (physically, no tombstone) this node's copies of the keys it can no longer reach a
// majority of the owners of (itself counted) and that are older than half the TTL: the delete of a
// newer copy cannot have been compacted yet. A key with a majority of reachable owners keeps its
// copy: a delete it missed reaches it from them, by anti-entropy, before they compact. The pass
// runs again every quarter of the TTL while a peer stays cut off, so every such copy goes before a
// tombstone of a delete it missed (laid down after the cut began) can be compacted.
import { WorkSlicer, type Clock, type TimerHandle, type Timers, type YieldToLoop } from "../core/clock.js";
import { SCAN_LIMITS } from "../core/limits.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import { isLiveAt, type ShardedStore } from "../store/index.js";
import type { ClusterView } from "./cluster-view.js";
import { hasMajority } from "./write/quorum.js";

export interface CoOwnerGuardDeps {
  readonly selfId: string;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly yieldToLoop: YieldToLoop;
  readonly view: Pick<ClusterView, "ring" | "ringPeers">;
  readonly store: ShardedStore;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly tombstoneTtlMs: number;
  /** How often the guard looks (the heartbeat). */
  readonly intervalMs: number;
  /** Records per slice of a pass (default SCAN_LIMITS.censusRecords). */
  readonly sliceRecords?: number;
}

/**
 * True when this node reaches a majority of a key's owners `ids` (itself counted), none of
 * `cut` counted; also true for a key this node does not own (the rebalancer moves those).
 */
export function reachesOwnerMajority(ids: readonly string[], selfId: string, cut: ReadonlySet<string>): boolean {
  if (!ids.includes(selfId)) return true;
  let reached = 0;
  for (const id of ids) if (id === selfId || !cut.has(id)) reached++;
  return hasMajority(reached, ids.length);
}

export class CoOwnerGuard {
  private timer: TimerHandle | undefined;
  /** Monotonic time of the last direct probe answer of each ring peer (or since it was first looked at). */
  private readonly lastAnswer = new Map<string, number>();
  private passCut: ReadonlySet<string> = new Set();
  private lastPassMonoMs = 0;
  private running: Promise<number> | undefined;

  constructor(private readonly deps: CoOwnerGuardDeps) {}

  /** A ring peer is cut off once no direct probe of it has answered for this long. */
  get cutAfterMs(): number {
    return Math.floor(this.deps.tombstoneTtlMs / 2);
  }

  start(): void {
    this.timer ??= this.deps.timers.every(this.deps.intervalMs, () => this.check());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** A direct probe of `peerId` answered (prober.ts). */
  noteAnswer(peerId: string): void {
    this.lastAnswer.set(peerId, this.deps.clock.monotonicMs());
  }

  /** The ring peers cut off now. */
  cutPeers(): Set<string> {
    const mono = this.deps.clock.monotonicMs();
    const ring = new Set(this.deps.view.ringPeers().map((p) => p.id));
    for (const id of this.lastAnswer.keys()) if (!ring.has(id)) this.lastAnswer.delete(id);
    const cut = new Set<string>();
    for (const id of ring) {
      const last = this.lastAnswer.get(id);
      if (last === undefined) this.lastAnswer.set(id, mono);
      else if (mono - last > this.cutAfterMs) cut.add(id);
    }
    return cut;
  }

  /** Looks at the links; starts a pass when a peer was newly cut off, or a quarter TTL after the last one. */
  check(): Promise<number> | undefined {
    const cut = this.cutPeers();
    this.deps.metrics.set("dist.contact.cut_peers", cut.size);
    if (cut.size === 0 || this.running) return this.running;
    const mono = this.deps.clock.monotonicMs();
    const grew = [...cut].some((id) => !this.passCut.has(id));
    if (!grew && mono - this.lastPassMonoMs < this.cutAfterMs / 2) return undefined;
    this.lastPassMonoMs = mono;
    this.passCut = cut;
    this.running = this.pass(cut).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Drops the copies older than half the TTL of the keys whose owners' majority is cut off; returns how many. */
  private async pass(cut: ReadonlySet<string>): Promise<number> {
    const { store, selfId, clock } = this.deps;
    // Versions are wall-clock milliseconds × 1000 plus a counter (version-clock.ts).
    const floor = (clock.nowMs() - this.cutAfterMs) * 1000;
    const slicer = new WorkSlicer(this.deps.yieldToLoop, this.deps.sliceRecords ?? SCAN_LIMITS.censusRecords);
    let dropped = 0;
    for (let shard = 0; shard < store.shardCount; shard++) {
      let slot = 0;
      while (slot >= 0) {
        await slicer.pause();
        const ring = this.deps.view.ring();
        const now = clock.nowMs();
        const victims: Array<{ key: string; version: number }> = [];
        slot = store.scanHeaders(shard, slot, (rec) => {
          if (slicer.spend()) return false;
          if (rec.version < floor && isLiveAt(rec, now) && !reachesOwnerMajority(ring.ownersOf(rec.key).ids, selfId, cut)) victims.push({ key: rec.key, version: rec.version });
          return true;
        });
        for (const v of victims) if (store.removeIfVersion(v.key, v.version)) dropped++;
      }
    }
    if (dropped > 0) this.deps.metrics.inc("dist.contact.cut_drops", dropped);
    this.deps.logger.warn(LOG.coOwnersCut, { peers: [...cut].sort(), cut_after_ms: this.cutAfterMs, items_dropped: dropped });
    return dropped;
  }
}
