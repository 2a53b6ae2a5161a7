// Sync receipts: which tombstones every peer already holds, so that none is compacted before.
//
// A delete reaches the other owners by push, else by hint, else by anti-entropy. A peer whose
// links to this node stay down (the membership may keep it alive through relays, and it may still
// see a majority, so neither the ring nor its contact guard changes) misses the push, and its
// hint expires after SERVICE_HINT_TTL. If this node then compacted the tombstone after
// SERVICE_TOMBSTONE_TTL, nothing would tell that peer's old copy from one never received, and
// after the heal anti-entropy or read repair would bring the deleted key back. So the tombstone
// stays until every peer on the ring has pulled it, under the tombstone byte budget as before.
//
// Each side keeps one map. A requester remembers, per peer, the `asOfMs` of the root answer that
// began its last completed sync with that peer (it then held that peer's record of every key both
// own, as of that time or newer), and reports it in its next root request. The answering side
// keeps the latest report per requester; tombstones that arrived here at or before the smallest
// report of the ring peers may go once their TTL has passed. A ring peer that has reported
// nothing yet holds everything back until it does; one from before the report field holds
// nothing back. With anti-entropy off on this node (SERVICE_AUTO_SYNC_INTERVAL=0) nothing is held.
import type { Clock } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import type { ClusterView } from "../cluster-view.js";

export interface SyncReceiptsDeps {
  readonly view: Pick<ClusterView, "ringPeers">;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly tombstoneTtlMs: number;
  /** False with anti-entropy off: no peer pulls, so nothing is held for them. */
  readonly enabled: boolean;
}

/** A requester from before the report field: holds nothing back. */
const NOT_REPORTING = Number.POSITIVE_INFINITY;

export class SyncReceipts {
  /** As requester: per answering peer, the asOfMs that began the last completed sync with it. */
  private readonly pulled = new Map<string, number>();
  /** As answerer: per requesting peer, the time (this node's clock) up to which it holds this node's records. */
  private readonly reported = new Map<string, number>();
  /** Peers that have held compaction back for longer than the TTL (warned once each). */
  private readonly warned = new Set<string>();

  /** Before this node started, no tombstone of its was held back (the gauge's lower bound). */
  private readonly startedMs: number;

  constructor(private readonly deps: SyncReceiptsDeps) {
    this.startedMs = deps.clock.nowMs();
  }

  /** What to report to `peerId` in the next root request (0: no completed sync with it yet). */
  pulledThrough(peerId: string): number {
    return this.pulled.get(peerId) ?? 0;
  }

  /** A sync with `peerId` that began with its root answer of `asOfMs` has completed. */
  notePulled(peerId: string, asOfMs: number): void {
    if (asOfMs > 0) this.pulled.set(peerId, asOfMs);
  }

  /** Up to when (this node's wall ms) `peerId` has reported holding this node's records: 0 for nothing yet. */
  reportedBy(peerId: string): number {
    return this.reported.get(peerId) ?? 0;
  }

  /** `peerId` asked for a root, reporting `pulledThroughMs` (undefined: a node from before the field). */
  noteReported(peerId: string, pulledThroughMs: number | undefined): void {
    // A report can only name a time this node handed out; a later one is not believed past now.
    this.reported.set(peerId, pulledThroughMs === undefined ? NOT_REPORTING : Math.min(pulledThroughMs, this.deps.clock.nowMs()));
  }

  /**
   * Tombstones that arrived here after this wall-clock time (ms) are kept past their TTL: some
   * ring peer has not pulled them yet. Infinity when nothing is held back.
   */
  holdAfterMs(): number {
    if (!this.deps.enabled) return Number.POSITIVE_INFINITY;
    const ring = new Set(this.deps.view.ringPeers().map((p) => p.id));
    this.forgetOutside(ring);
    let floor = Number.POSITIVE_INFINITY;
    let holder = "";
    for (const id of ring) {
      const t = this.reported.get(id) ?? 0;
      if (t < floor) [floor, holder] = [t, id];
    }
    this.observe(floor, holder);
    return floor;
  }

  /** Drops what is kept for peers no longer on the ring (a peer that comes back reports again). */
  private forgetOutside(ring: ReadonlySet<string>): void {
    for (const m of [this.pulled, this.reported]) for (const id of m.keys()) if (!ring.has(id)) m.delete(id);
    for (const id of this.warned) if (!ring.has(id)) this.warned.delete(id);
  }

  /** The gauge of how far compaction is held back past the TTL, and one warning per peer holding it back a TTL more. */
  private observe(floor: number, holder: string): void {
    const { clock, tombstoneTtlMs, metrics, logger } = this.deps;
    const due = clock.nowMs() - tombstoneTtlMs;
    const since = (t: number) => Math.max(t, this.startedMs);
    metrics.set("dist.tombstones.held_back_ns", Number.isFinite(floor) ? Math.max(0, due - since(floor)) * 1e6 : 0);
    for (const id of this.warned) if (since(this.reported.get(id) ?? 0) >= due - tombstoneTtlMs) this.warned.delete(id);
    if (holder === "" || since(floor) >= due - tombstoneTtlMs || this.warned.has(holder)) return;
    this.warned.add(holder);
    logger.warn(LOG.compactionHeldBack, { peer: holder, pulled_through_ms: floor, tombstone_ttl_ms: tombstoneTtlMs });
  }
}
