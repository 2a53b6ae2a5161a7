// Rebalance: when ring ownership changes, local records move to where the new ring says they
// belong. A scan compares each record's owners in the last settled ring with the new ring:
//   - this node no longer owns the key: the record migrates to the new primary, and the local
//     copy is released once the migration succeeded (at once, or after SERVICE_REMOVAL_GRACE);
//   - this node still owns it and is the first surviving old owner: new owners get their copy.
// The scan runs shard by shard over ticks, sending batches of SERVICE_REBALANCE_BATCH_SIZE
// records with at most SERVICE_REBALANCE_MAX_CONCURRENT batches in flight (a tick that finds the
// limit reached counts dist.rebalance.throttle). Failed migrations are queued for replay. With no
// ring change nothing is scanned, so an idle stable cluster moves no counter.
//
// A value this node no longer owns waits to move for at most half the tombstone TTL (holdMaxMs)
// once its own move failed (firstFailedMs, per copy): deletes of the key went to its new owners
// meanwhile, and once their tombstones are compacted a late copy would bring the key back. Past
// that the copy is dropped undelivered (dist.migration.abandoned), and its queued migrations are
// never sent (their deadline, hint-queue.ts). A copy whose move never failed is never dropped:
// counted from the scan's start, a healthy scale-out at the default pace (256 moves a second)
// dropped every copy it had not reached after 5 minutes, the only ones of their keys; counted
// from the node's first failure, one failed batch at a join did the same (two reviews). A scan
// that runs long is logged instead (rebalanceSlow): its late copies carry the risk the limit
// guards against.
import type { Clock, TimerHandle, Timers, YieldToLoop } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import type { HashRing } from "../../ring/index.js";
import { isLiveAt, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { PeerRef, PeerTransport } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { HintQueue } from "../hints/hint-queue.js";
import { PEER_BATCH_BYTES, SCAN_LIMITS } from "../../core/limits.js";
import { byteSize } from "../record-size.js";
import { isHeldCopy, planMove, type Move } from "./plan-move.js";


export interface RebalancerDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly view: ClusterView;
  readonly transport: PeerTransport;
  /** The migration queue (dist.migration.* metrics). */
  readonly migrations: HintQueue;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly intervalMs: number;
  readonly batchSize: number;
  readonly maxConcurrent: number;
  readonly removalGraceMs: number;
  /**
   * How long a value this node no longer owns may wait to move, ms: copyHoldMaxMs of
   * SERVICE_TOMBSTONE_TTL (half of it, 5 min by default). Past it the copy is dropped undelivered.
   */
  readonly holdMaxMs: number;
  /** Lets queued I/O run between the batches of one tick. */
  readonly yieldToLoop: YieldToLoop;
}

interface Scan {
  readonly from: HashRing;
  readonly to: HashRing;
  shard: number;
  slot: number;
  readonly startedMonotonicMs: number;
  moved: number;
  /** Moves that did not reach their target (queued for replay or dropped by a cap). */
  failures: number;
  /** Failed moves of values this node no longer owns (isHeldCopy). */
  heldFailures: number;
  /** Copies dropped undelivered because they waited longer than holdMaxMs. */
  abandoned: number;
  /** The scan ran longer than holdMaxMs and said so (LOG.rebalanceSlow). */
  slowLogged?: boolean;
}

/** Delay before a scan with failed moves runs again, in rebalance intervals (at least 1 s). */
const RETRY_INTERVALS = 8;

export class Rebalancer {
  private timer: TimerHandle | undefined;
  private settled: HashRing;
  private scan: Scan | undefined;
  private inFlight = 0;
  private ticking = false;
  /** When a scan that had failed moves may run again (monotonic ms); 0 = no retry pending. */
  private retryAtMs = 0;
  private readonly pendingReleases = new Set<string>();
  /** Per key of a value this node no longer owns: when its move first failed (monotonic ms). */
  private readonly firstFailedMs = new Map<string, number>();

  constructor(private readonly deps: RebalancerDeps) {
    this.settled = deps.view.ring();
  }

  /** True while a scan is running, batches are in flight or failed moves wait for a retry. */
  get busy(): boolean {
    return this.scan !== undefined || this.inFlight > 0 || this.retryAtMs !== 0 || this.deps.view.ring() !== this.settled;
  }

  start(): void {
    if (this.timer) return;
    this.timer = this.deps.timers.every(this.deps.intervalMs, () => void this.runRebalanceTick());
    this.deps.logger.info(LOG.rebalanceLoopStarted, { interval_ms: this.deps.intervalMs, batch_size: this.deps.batchSize, max_concurrent: this.deps.maxConcurrent });
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * One tick: continue (or start) the scan, sending batches while the concurrency allows. A tick
   * that finds the previous one still sending counts dist.rebalance.throttle and does nothing.
   */
  async runRebalanceTick(): Promise<void> {
    if (this.ticking || this.inFlight >= this.deps.maxConcurrent) {
      this.deps.metrics.inc("dist.rebalance.throttle");
      return;
    }
    const ring = this.deps.view.ring();
    const now = this.deps.clock.monotonicMs();
    if (!this.scan) {
      if (ring === this.settled && this.retryAtMs === 0) return;
      if (this.retryAtMs !== 0 && now < this.retryAtMs && ring === this.retryRing) return;
      this.retryAtMs = 0;
      this.scan = { from: this.settled, to: ring, shard: 0, slot: 0, startedMonotonicMs: now, moved: 0, failures: 0, heldFailures: 0, abandoned: 0 };
    } else if (this.scan.to !== ring) {
      // The ring moved again mid-scan: start over against the newest ring (migrations are idempotent).
      this.scan = { ...this.scan, to: ring, shard: 0, slot: 0 };
    }
    if (!this.scan.slowLogged && now - this.scan.startedMonotonicMs > this.deps.holdMaxMs) {
      this.scan.slowLogged = true;
      this.deps.logger.warn(LOG.rebalanceSlow, { running_ms: Math.round(now - this.scan.startedMonotonicMs), held_max_ms: this.deps.holdMaxMs, moved: this.scan.moved });
    }
    this.ticking = true;
    try {
      const scan: Scan = this.scan;
      const sends: Array<Promise<void>> = [];
      while (this.inFlight < this.deps.maxConcurrent && scan.shard < this.deps.store.shardCount) {
        // One batch per turn of the event loop: a tick collected up to SERVICE_REBALANCE_MAX_CONCURRENT
        // batches of up to SCAN_LIMITS.rebalanceRecordsPerBatch records each back to back (424 ms at
        // the settings' maxima with 200,000 records, a review found).
        if (sends.length > 0) await this.deps.yieldToLoop();
        if (this.scan !== scan || scan.to !== this.deps.view.ring()) break;
        const batch = this.collect(scan);
        // Nothing to move in this stretch: the scan goes on next tick (bounded work per tick).
        if (batch.length === 0) break;
        scan.moved += batch.length;
        sends.push(this.send(batch, scan));
      }
      await Promise.all(sends);
      if (scan.shard >= this.deps.store.shardCount && this.scan === scan) this.finish(scan);
    } finally {
      this.ticking = false;
    }
  }

  /** The ring a pending retry was scheduled for. */
  private retryRing: HashRing | undefined;

  /** Whether a record's copy here may be dropped: this node does not own the key any more. */
  releaseIfNotOwner(key: string, version: number): void {
    this.firstFailedMs.delete(key);
    if (this.deps.view.ring().isOwner(key, this.deps.selfId)) return;
    this.deps.store.removeIfVersion(key, version);
  }

  /**
   * Ends a scan. With every move delivered the new ring is settled; otherwise the records that
   * did not move are still here (a copy is released only after a successful move) and a new scan
   * against the same old ring runs after a delay, so nothing stays stranded on a non-owner.
   */
  private finish(scan: Scan): void {
    this.scan = undefined;
    // Every value this node no longer owns reached its owners or was dropped: the next one to
    // wait can only come from a later ring change.
    if (scan.heldFailures === 0) this.firstFailedMs.clear();
    if (scan.abandoned > 0) {
      this.deps.logger.warn(LOG.migrationAbandoned, { keys: scan.abandoned, held_max_ms: this.deps.holdMaxMs });
    }
    if (scan.failures > 0) {
      this.retryAtMs = this.deps.clock.monotonicMs() + Math.max(1000, RETRY_INTERVALS * this.deps.intervalMs);
      this.retryRing = scan.to;
    } else {
      this.settled = scan.to;
    }
    if (scan.moved > 0) this.deps.metrics.set("dist.rebalance.last_ns", Math.round((this.deps.clock.monotonicMs() - scan.startedMonotonicMs) * 1e6));
  }

  /** Walks the scan forward until one batch of moves is collected or the budget is spent. */
  private collect(scan: Scan): Move[] {
    const { store, selfId } = this.deps;
    const now = this.deps.clock.nowMs();
    const mono = this.deps.clock.monotonicMs();
    const moves: Move[] = [];
    const abandoned: VersionedRecord[] = [];
    let looked = 0;
    let bytes = 0;
    let budgetSpent = false;
    const full = () => budgetSpent || moves.length >= this.deps.batchSize || looked >= SCAN_LIMITS.rebalanceRecordsPerBatch;
    while (scan.shard < store.shardCount && !full()) {
      const resume = store.scanRecords(scan.shard, scan.slot, (rec) => {
        if (full()) return false;
        if (!rec.tombstone && !isLiveAt(rec, now)) {
          looked++;
          return true;
        }
        const move = planMove(rec, scan.from, scan.to, selfId);
        if (move && isHeldCopy(move) && this.moveDeadlineMs(rec.key) <= mono) {
          abandoned.push(rec);
        } else if (move) {
          // The budget is checked before a record joins the batch: a batch never passes
          // PEER_BATCH_BYTES unless it is one record alone (the record starts the next batch).
          const size = byteSize(rec);
          if (moves.length > 0 && bytes + size > PEER_BATCH_BYTES) {
            budgetSpent = true;
            return false;
          }
          moves.push(move);
          bytes += size;
        }
        looked++;
        return true;
      });
      if (resume < 0) {
        scan.shard++;
        scan.slot = 0;
      } else {
        scan.slot = resume;
      }
    }
    this.abandon(scan, abandoned);
    return moves;
  }

  /** When the value of `key` this node no longer owns must have moved by (monotonic ms); Infinity while its move never failed. */
  private moveDeadlineMs(key: string): number {
    const failed = this.firstFailedMs.get(key);
    return failed === undefined ? Infinity : failed + this.deps.holdMaxMs;
  }

  /** Drops copies that waited too long to move (after the store scan: not while it walks a shard). */
  private abandon(scan: Scan, records: readonly VersionedRecord[]): void {
    let n = 0;
    for (const rec of records) {
      this.firstFailedMs.delete(rec.key);
      if (this.deps.store.removeIfVersion(rec.key, rec.version)) n++;
    }
    scan.abandoned += n;
    this.deps.metrics.inc("dist.migration.abandoned", n);
  }

  private async send(batch: Move[], scan: Scan): Promise<void> {
    const { view, metrics } = this.deps;
    this.inFlight++;
    metrics.inc("dist.rebalance.batches");
    try {
      const byTarget = new Map<string, Move[]>();
      for (const m of batch) for (const t of m.targets) byTarget.set(t, [...(byTarget.get(t) ?? []), m]);
      const failed = new Set<Move>();
      await Promise.all(
        [...byTarget].map(async ([id, moves]) => {
          const peer = view.peer(id);
          if (!peer) {
            this.heldMoveFailed(moves);
            for (const m of moves) failed.add(m);
            return;
          }
          try {
            // A record is delivered when the target stored it or holds a newer one; a refused
            // record (the target does not own the key in its view yet) stays here and is retried.
            for (const m of await this.deliver(peer, moves)) failed.add(m);
          } catch (err) {
            this.queue(peer, moves, err);
            for (const m of moves) failed.add(m);
          }
        }),
      );
      metrics.inc("dist.rebalance.keys", batch.length - failed.size);
      scan.failures += failed.size;
      for (const m of failed) if (isHeldCopy(m)) scan.heldFailures++;
      for (const m of batch) if (m.release && !failed.has(m)) this.release(m.record);
    } finally {
      this.inFlight--;
    }
  }

  /** Sends `moves` to `peer`; returns the moves the target refused (queued for replay, counted). */
  private async deliver(peer: PeerRef, moves: Move[]): Promise<Move[]> {
    const { transport, selfId, metrics, migrations } = this.deps;
    const values = moves.filter((m) => !m.record.tombstone);
    const tombstones = moves.filter((m) => m.record.tombstone);
    const outcomes = [
      ...(values.length > 0 ? await transport.set(peer, selfId, values.map((m) => m.record)) : []),
      ...(tombstones.length > 0 ? await transport.remove(peer, selfId, tombstones.map((m) => m.record)) : []),
    ];
    const refused = [...values, ...tombstones].filter((_, i) => outcomes[i]?.kind !== "applied" && outcomes[i]?.kind !== "stale");
    this.heldMoveFailed(refused);
    for (const m of refused) {
      metrics.inc("dist.migration.refused");
      migrations.add(peer, m.record, this.notAfterMs(m));
    }
    return refused;
  }

  /** Moves of values this node no longer owns failed: each one's wait starts now, if it had not (moveDeadlineMs). */
  private heldMoveFailed(moves: readonly Move[]): void {
    const now = this.deps.clock.monotonicMs();
    for (const m of moves) if (isHeldCopy(m) && !this.firstFailedMs.has(m.record.key)) this.firstFailedMs.set(m.record.key, now);
  }

  private queue(peer: PeerRef, moves: Move[], err: unknown): void {
    this.heldMoveFailed(moves);
    let queued = 0;
    for (const m of moves) if (this.deps.migrations.add(peer, m.record, this.notAfterMs(m))) queued++;
    this.deps.logger.warn(LOG.migrationForwardFailed, {
      peer: peer.id,
      keys: moves.length,
      queued,
      dropped: moves.length - queued,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  /** The deadline a queued migration gets: moveDeadlineMs for a held copy, none otherwise. */
  private notAfterMs(m: Move): number {
    return isHeldCopy(m) ? this.moveDeadlineMs(m.record.key) : Infinity;
  }

  /** A queued migration was replayed: release the copy as a direct migration would. */
  releaseMigrated(rec: VersionedRecord): void {
    this.release(rec);
  }

  /** Drops the local copy of a migrated record, now or after the removal grace. */
  private release(rec: VersionedRecord): void {
    if (this.deps.removalGraceMs <= 0) {
      this.releaseIfNotOwner(rec.key, rec.version);
      return;
    }
    if (this.pendingReleases.has(rec.key)) return;
    this.pendingReleases.add(rec.key);
    this.deps.timers.after(this.deps.removalGraceMs, () => {
      this.pendingReleases.delete(rec.key);
      this.releaseIfNotOwner(rec.key, rec.version);
    });
  }
}
