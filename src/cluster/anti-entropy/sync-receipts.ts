// Sync receipts: which tombstones every peer already holds, so that none is compacted before.
//
// A delete reaches the other owners by push, else by hint, else by anti-entropy. A peer whose
// links to this node stay down (the membership may keep it alive through relays, or have pruned
// it while it still sees a majority, so neither the ring nor its contact guard need change)
// misses the push, and its hint expires after SERVICE_HINT_TTL. If this node then compacted the
// tombstone after SERVICE_TOMBSTONE_TTL, nothing would tell that peer's old copy from one never
// received, and after the heal anti-entropy or read repair would bring the deleted key back. So
// the tombstone stays until every known peer (pruned ones included, until removed by hand or
// gone for good) has pulled it, under the tombstone byte budget as before.
//
// Each side keeps one map. Answering a root request, this node hands the requester an `asOfMs`
// (its wall clock then) and remembers, per requester, the last few it handed out with the
// monotonic time of each. A requester remembers the `asOfMs` that began its last completed sync
// with each peer and reports it in its next root request; the answering side believes a report
// only when it is one it handed that requester (not one from before a restart, nor a time it
// never named), and takes that one's monotonic time. Tombstones arrive on the monotonic clock
// too, so a wall clock stepped back cannot make a report look later than a tombstone it never
// saw. A tombstone that arrived before the smallest report of the known peers may go once its
// TTL has passed; a peer that has reported nothing yet holds everything back until it does; one
// from before the report field holds nothing back. With anti-entropy off on this node
// (SERVICE_AUTO_SYNC_INTERVAL=0) nothing is held.
import type { Clock } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";

export interface SyncReceiptsDeps {
  /** The peers a tombstone waits for: every known member but this node (pruned ones included). */
  readonly peers: () => readonly string[];
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly tombstoneTtlMs: number;
  /** False with anti-entropy off: no peer pulls, so nothing is held for them. */
  readonly enabled: boolean;
}

/** Handed-out times kept per requester: its report names the one that began its last completed sync. */
export const HANDED_OUT_KEPT = 16;

/** A requester from before the report field: holds nothing back. */
const NOT_REPORTING = Number.POSITIVE_INFINITY;

export class SyncReceipts {
  /** As requester: per answering peer, the asOfMs that began the last completed sync with it. */
  private readonly pulled = new Map<string, number>();
  /** As answerer: per requester, the asOfMs handed out last, oldest first, with their monotonic times. */
  private readonly handedOut = new Map<string, Array<{ asOfMs: number; monoMs: number }>>();
  /** As answerer: per requester, the monotonic time up to which it holds this node's records. */
  private readonly reported = new Map<string, number>();
  /** Peers that have held compaction back for longer than the TTL (warned once each). */
  private readonly warned = new Set<string>();
  private readonly startedMonoMs: number;

  constructor(private readonly deps: SyncReceiptsDeps) {
    this.startedMonoMs = deps.clock.monotonicMs();
  }

  /** What to report to `peerId` in the next root request (0: no completed sync with it yet). */
  pulledThrough(peerId: string): number {
    return this.pulled.get(peerId) ?? 0;
  }

  /** A sync with `peerId` that began with its root answer of `asOfMs` has completed. */
  notePulled(peerId: string, asOfMs: number): void {
    if (asOfMs > 0) this.pulled.set(peerId, asOfMs);
  }

  /** The `asOfMs` of a root answer to `peerId` now (this node's wall clock), remembered to check its report. */
  handOut(peerId: string): number {
    const asOfMs = this.deps.clock.nowMs();
    const list = this.handedOut.get(peerId) ?? [];
    // Two answers in one millisecond share the time: the earlier monotonic reading stands.
    if (list.at(-1)?.asOfMs !== asOfMs) list.push({ asOfMs, monoMs: this.deps.clock.monotonicMs() });
    if (list.length > HANDED_OUT_KEPT) list.shift();
    this.handedOut.set(peerId, list);
    return asOfMs;
  }

  /** `peerId` asked for a root, reporting `pulledThroughMs` (undefined: a node from before the field). */
  noteReported(peerId: string, pulledThroughMs: number | undefined): void {
    if (pulledThroughMs === undefined) {
      this.reported.set(peerId, NOT_REPORTING);
      return;
    }
    const handed = this.handedOut.get(peerId)?.find((h) => h.asOfMs === pulledThroughMs);
    // Not one this process handed out (0, a time from before a restart, or long gone): nothing pulled.
    this.reported.set(peerId, handed?.monoMs ?? 0);
  }

  /** Up to when (this node's monotonic ms) `peerId` holds this node's records: 0 for nothing yet. */
  reportedBy(peerId: string): number {
    return this.reported.get(peerId) ?? 0;
  }

  /**
   * Tombstones that arrived here at or after this monotonic time are kept past their TTL: some
   * known peer has not pulled them yet. Infinity when nothing is held back.
   */
  holdAfterMs(): number {
    if (!this.deps.enabled) return Number.POSITIVE_INFINITY;
    const peers = new Set(this.deps.peers());
    this.forgetOutside(peers);
    let floor = Number.POSITIVE_INFINITY;
    let holder = "";
    for (const id of peers) {
      const t = this.reported.get(id) ?? 0;
      if (t < floor) [floor, holder] = [t, id];
    }
    this.observe(floor, holder);
    return floor;
  }

  /** Drops what is kept for peers no longer known (removed by hand, or left; one that comes back reports again). */
  private forgetOutside(peers: ReadonlySet<string>): void {
    for (const m of [this.pulled, this.handedOut, this.reported]) for (const id of m.keys()) if (!peers.has(id)) m.delete(id);
    for (const id of this.warned) if (!peers.has(id)) this.warned.delete(id);
  }

  /** The gauge of how far compaction is held back past the TTL, and one warning per peer holding it back a TTL more. */
  private observe(floor: number, holder: string): void {
    const { clock, tombstoneTtlMs, metrics, logger } = this.deps;
    const due = clock.monotonicMs() - tombstoneTtlMs;
    const since = (t: number) => Math.max(t, this.startedMonoMs);
    metrics.set("dist.tombstones.held_back_ns", Number.isFinite(floor) ? Math.max(0, due - since(floor)) * 1e6 : 0);
    for (const id of this.warned) if (since(this.reported.get(id) ?? 0) >= due - tombstoneTtlMs) this.warned.delete(id);
    if (holder === "" || since(floor) >= due - tombstoneTtlMs || this.warned.has(holder)) return;
    this.warned.add(holder);
    logger.warn(LOG.compactionHeldBack, { peer: holder, held_back_ms: Math.round(due - since(floor)), tombstone_ttl_ms: tombstoneTtlMs });
  }
}
