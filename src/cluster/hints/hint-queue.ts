// Hinted handoff: records a peer failed to receive (replica writes and deletes, and, in a second
// queue, failed rebalance migrations), kept per target node and replayed on a tick until they
// expire. Bounded by a per-node count cap and a byte cap over all nodes and both queues (one
// HintBytes); past a cap the new hint is dropped and counted. Hints for the same (target, key)
// coalesce (coalesceHint), so a hot key costs one hint, not one per write. A hint may also carry
// a deadline (a migrated copy's: rebalance/rebalancer.ts): it is never sent after it, drain or
// not, and is dropped at the first replay that finds it past.
import type { Clock } from "../../core/clock.js";
import { decodeCounter, encodeCounter, mergeCounters, sameCounter } from "../../core/counter-state.js";
import { HINT_OVERHEAD_BYTES, PEER_BATCHING } from "../../core/limits.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import { compareVersions, type VersionedRecord } from "../../store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport } from "../../transport/index.js";
import type { HintMetricNames } from "./hint-metrics.js";


/**
 * The bytes counted against SERVICE_HINT_MAX_BYTES, shared by the queues that draw on the one
 * cap (the replica hint queue and the migration queue): each had its own, so the two could hold
 * twice what the cap says.
 */
export class HintBytes {
  used = 0;
  constructor(readonly max: number) {}
}

/**
 * What replaces `queued` when `record` is queued for the same target and key, or undefined to
 * keep `queued`: the newer of the two by version, except for two live counters, whose hint is
 * the newer one carrying both copies' increments (core/counter-state.ts). Keeping the newer
 * counter alone dropped the older hint's increments for the target until anti-entropy, and for
 * good when this node went away first.
 */
function coalesceHint(record: VersionedRecord, queued: VersionedRecord): VersionedRecord | undefined {
  const newer = compareVersions(record.version, record.origin, queued.version, queued.origin) > 0;
  const mine = record.tombstone ? undefined : decodeCounter(record.value);
  const theirs = mine === undefined || queued.tombstone ? undefined : decodeCounter(queued.value);
  if (mine === undefined || theirs === undefined) return newer ? record : undefined;
  const merged = mergeCounters(mine, theirs);
  const top = newer ? record : queued;
  if (sameCounter(merged, newer ? mine : theirs)) return newer ? record : undefined;
  return { ...top, value: encodeCounter(merged) };
}

/**
 * What a hint is counted as: its key as two-byte text (the most a JS string of it takes), its
 * value (byte strings: one byte per unit) and HINT_OVERHEAD_BYTES of bookkeeping.
 */
function hintBytes(record: VersionedRecord): number {
  return 2 * record.key.length + record.value.length + HINT_OVERHEAD_BYTES;
}

export interface HintLimits {
  readonly ttlMs: number;
  readonly maxPerNode: number;
  readonly maxBytes: number;
}

interface Hint {
  record: VersionedRecord;
  bytes: number;
  /** Monotonic, as tombstones count their TTL: a wall clock stepped back cannot let a hint outlive one. */
  queuedAtMonoMs: number;
  failures: number;
  /** Moved to the back of its queue after a refusal: the queue is then no longer in queuedAtMonoMs order. */
  requeued: boolean;
  /** Never sent at or after this monotonic time (Infinity: no deadline but the TTL). */
  notAfterMonoMs: number;
}

/** What one target's queue holds (GET /dist/hints). */
export interface HintTargetSummary {
  readonly target: string;
  readonly count: number;
  readonly bytes: number;
  /** When the oldest queued hint was queued, Unix ms. */
  readonly oldestQueuedAtMs: number;
  /** The last replay call to the target failed, or the target refused hints. */
  readonly replayFailing: boolean;
}

interface TargetQueue {
  peer: PeerRef;
  hints: Map<string, Hint>;
  /** Bytes of this target's hints (the same measure as the byte cap). */
  bytes: number;
  /** Hints moved to the back after a refusal (see Hint.requeued). */
  requeued: number;
  replaying: boolean;
  /** The last replay call to the target failed (unreachable, timeout or an error answer). */
  lastReplayFailed: boolean;
}

export class HintQueue {
  private readonly targets = new Map<string, TargetQueue>();
  private totalBytes = 0;
  private readonly budget: HintBytes;

  constructor(
    private readonly deps: {
      clock: Clock;
      metrics: Metrics;
      logger: Logger;
      limits: HintLimits;
      names: HintMetricNames;
      /** The byte cap this queue shares with others (a cap of its own, limits.maxBytes, without). */
      budget?: HintBytes;
    },
  ) {
    this.budget = deps.budget ?? new HintBytes(deps.limits.maxBytes);
  }

  private readonly replayedListeners: Array<(peer: PeerRef, record: VersionedRecord) => void> = [];

  /**
   * Registers an observer of delivered hints (the rebalancer releases migrated copies there).
   * It runs after the hint left the queue, must not call back into the queue, and must return quickly.
   */
  onReplayed(listener: (peer: PeerRef, record: VersionedRecord) => void): void {
    this.replayedListeners.push(listener);
  }

  /** Queued hints for a target (or all targets). */
  size(targetId?: string): number {
    if (targetId !== undefined) return this.targets.get(targetId)?.hints.size ?? 0;
    let n = 0;
    for (const t of this.targets.values()) n += t.hints.size;
    return n;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /**
   * Queues `record` for `peer`; false when a cap dropped it. `notAfterMonoMs`: a monotonic time
   * at and after which the record must not be sent (a copy that waited too long to migrate);
   * a hint keeps the earliest deadline any of its records came with.
   */
  add(peer: PeerRef, incoming: VersionedRecord, notAfterMonoMs = Infinity): boolean {
    const { metrics, limits, names, clock } = this.deps;
    const budget = this.budget;
    let t = this.targets.get(peer.id);
    if (!t) {
      t = { peer, hints: new Map(), bytes: 0, requeued: 0, replaying: false, lastReplayFailed: false };
      this.targets.set(peer.id, t);
    }
    t.peer = peer;
    const existing = t.hints.get(incoming.key);
    const notAfter = Math.min(notAfterMonoMs, existing?.notAfterMonoMs ?? Infinity);
    const record = existing === undefined ? incoming : coalesceHint(incoming, existing.record);
    if (record === undefined) {
      // The queued record stays, with the earlier deadline.
      if (existing) existing.notAfterMonoMs = notAfter;
      return true;
    }
    const bytes = hintBytes(record);
    if (existing) {
      if (budget.used - existing.bytes + bytes > budget.max) {
        metrics.inc(names.globalDropped);
        return false;
      }
      this.drop(t, record.key, existing);
      this.count(t, bytes);
    } else {
      if (t.hints.size >= limits.maxPerNode) {
        metrics.inc(names.dropped);
        return false;
      }
      if (budget.used + bytes > budget.max) {
        metrics.inc(names.globalDropped);
        return false;
      }
      this.count(t, bytes);
    }
    t.hints.set(record.key, { record, bytes, queuedAtMonoMs: clock.monotonicMs(), failures: 0, requeued: false, notAfterMonoMs: notAfter });
    metrics.inc(names.queued);
    this.updateGauges();
    return true;
  }

  /** The targets that have hints queued. */
  targetPeers(): PeerRef[] {
    return [...this.targets.values()].filter((t) => t.hints.size > 0).map((t) => t.peer);
  }

  /** True when the last replay call to `targetId` failed or the target refused hints of it. */
  replayFailed(targetId: string): boolean {
    return this.targets.get(targetId)?.lastReplayFailed ?? false;
  }

  /**
   * Up to `maxItems` queued records for `targetId`, oldest first, within `maxBytes` (at least
   * one); they stay queued until handedOff() removes them. Hints under replay are included: the
   * version gate makes a double delivery harmless. Hints with a deadline closer than the TTL are
   * left out: the receiver of a hand-off queues them for a TTL of its own, past their deadline.
   */
  peek(targetId: string, maxItems: number, maxBytes: number): VersionedRecord[] {
    const out: VersionedRecord[] = [];
    let bytes = 0;
    const latest = this.deps.clock.monotonicMs() + this.deps.limits.ttlMs;
    for (const h of this.targets.get(targetId)?.hints.values() ?? []) {
      if (h.notAfterMonoMs <= latest) continue;
      if (out.length > 0 && (out.length >= maxItems || bytes + h.bytes > maxBytes)) break;
      out.push(h.record);
      bytes += h.bytes;
    }
    return out;
  }

  /**
   * Removes hints another node took over (a hand-off), each only while it is still the queued
   * hint (a newer one queued meanwhile stays). Returns how many left the queue.
   */
  handedOff(targetId: string, records: readonly VersionedRecord[]): number {
    const t = this.targets.get(targetId);
    if (!t) return 0;
    let n = 0;
    for (const rec of records) {
      const h = t.hints.get(rec.key);
      if (h === undefined || h.record !== rec) continue;
      this.drop(t, rec.key, h);
      n++;
    }
    this.deps.metrics.inc(this.deps.names.handedOff, n);
    if (t.hints.size === 0 && !t.replaying) this.targets.delete(targetId);
    this.updateGauges();
    return n;
  }

  /** Drops the hints of records stamped below `version` (a contact reset's floor: draining keeps hints past their TTL). */
  dropBefore(version: number): number {
    let n = 0;
    for (const [id, t] of this.targets) {
      for (const [key, h] of t.hints) {
        if (h.record.version >= version) continue;
        this.drop(t, key, h);
        n++;
      }
      if (t.hints.size === 0 && !t.replaying) this.targets.delete(id);
    }
    this.updateGauges();
    return n;
  }

  /**
   * Drops hints older than the TTL; returns how many. A target's queue is in queue-time order
   * unless a refused hint went to its back, so the pass stops at its first hint still young: it
   * looked at every hint on every replay tick (24 ms for 760,000 hints, five times a second).
   */
  expire(): number {
    const { clock, metrics, logger, limits, names } = this.deps;
    const now = clock.monotonicMs();
    let expired = 0;
    for (const [id, t] of this.targets) {
      let afterErrors = 0;
      for (const [key, h] of t.hints) {
        if (now - h.queuedAtMonoMs < limits.ttlMs) {
          if (t.requeued === 0) break;
          continue;
        }
        this.drop(t, key, h);
        expired++;
        if (h.failures > 0) afterErrors++;
        metrics.inc(names.expired);
      }
      if (afterErrors > 0) logger.warn(LOG.hintDropped, { peer: id, hints: afterErrors, queue: names.queued.split(".")[1] });
      if (t.hints.size === 0 && !t.replaying) this.targets.delete(id);
    }
    this.updateGauges();
    return expired;
  }

  /**
   * Replays up to PEER_BATCHING.hintReplay.items hints per target, one call under way per target. A success
   * removes the hints (unless a newer one replaced them meanwhile); any error keeps them.
   */
  async replay(transport: PeerTransport, selfId: string): Promise<void> {
    await Promise.all([...this.targets.values()].filter((t) => !t.replaying && t.hints.size > 0).map((t) => this.replayTarget(t, transport, selfId)));
  }

  private async replayTarget(t: TargetQueue, transport: PeerTransport, selfId: string): Promise<void> {
    t.replaying = true;
    const batch: Hint[] = [];
    let batchBytes = 0;
    const mono = this.deps.clock.monotonicMs();
    for (const [key, h] of t.hints) {
      if (mono >= h.notAfterMonoMs) {
        // Past its deadline: dropped unsent, while the node drains too (hint-replay-loop.ts holds the TTL only).
        this.drop(t, key, h);
        this.deps.metrics.inc(this.deps.names.expired);
        continue;
      }
      if (batch.length > 0 && (batch.length >= PEER_BATCHING.hintReplay.items || batchBytes + h.bytes > PEER_BATCHING.hintReplay.bytes)) break;
      batch.push(h);
      batchBytes += h.bytes;
    }
    const now = this.deps.clock.monotonicMs();
    if (this.deps.names.lastAgeNs && batch.length > 0) {
      this.deps.metrics.set(this.deps.names.lastAgeNs, (now - Math.min(...batch.map((h) => h.queuedAtMonoMs))) * 1e6);
    }
    const sets = batch.filter((h) => !h.record.tombstone);
    const removes = batch.filter((h) => h.record.tombstone);
    try {
      const outcomes = [
        ...(sets.length > 0 ? await transport.set(t.peer, selfId, sets.map((h) => h.record)) : []),
        ...(removes.length > 0 ? await transport.remove(t.peer, selfId, removes.map((h) => h.record)) : []),
      ];
      // A refused hint counts as a failed replay too: the target does not take it from here.
      let refused = false;
      [...sets, ...removes].forEach((h, i) => {
        if (!this.settle(t, h, outcomes[i])) refused = true;
      });
      t.lastReplayFailed = refused;
    } catch {
      t.lastReplayFailed = true;
      for (const h of batch) h.failures++;
    } finally {
      t.replaying = false;
      if (t.hints.size === 0) this.targets.delete(t.peer.id);
      this.updateGauges();
    }
  }

  /**
   * One replayed hint's answer. Delivered ("applied", or "stale": the target holds newer) leaves
   * the queue, unless a newer hint replaced it meanwhile; "refused" stays for a later replay.
   */
  private settle(t: TargetQueue, h: Hint, outcome: ApplyOutcome | undefined): boolean {
    if (outcome === undefined || outcome.kind === "refused") {
      h.failures++;
      this.deps.metrics.inc(this.deps.names.refused);
      // To the back of the queue, so the hints behind it get their turn.
      if (t.hints.get(h.record.key) === h) {
        t.hints.delete(h.record.key);
        t.hints.set(h.record.key, h);
        if (!h.requeued) {
          h.requeued = true;
          t.requeued++;
        }
      }
      return false;
    }
    if (t.hints.get(h.record.key) !== h) return true;
    this.drop(t, h.record.key, h);
    this.deps.metrics.inc(this.deps.names.replayed);
    for (const l of this.replayedListeners) l(t.peer, h.record);
    return true;
  }

  /**
   * Per target with hints queued: count, bytes, the oldest hint's queue time and whether replays
   * to it fail. O(targets) while no hint was requeued after a refusal (the queue is then in
   * queue-time order, oldest first); a target with requeued hints costs one pass over its queue,
   * at most SERVICE_HINT_MAX_PER_NODE hints.
   */
  summary(): HintTargetSummary[] {
    const out: HintTargetSummary[] = [];
    for (const [id, t] of this.targets) {
      if (t.hints.size === 0) continue;
      const oldestQueuedAtMs = this.deps.clock.nowMs() - (this.deps.clock.monotonicMs() - oldestQueuedAt(t));
      out.push({ target: id, count: t.hints.size, bytes: t.bytes, oldestQueuedAtMs, replayFailing: t.lastReplayFailed });
    }
    return out;
  }

  /** Counts the bytes of a hint joining `t`'s queue. */
  private count(t: TargetQueue, bytes: number): void {
    this.totalBytes += bytes;
    this.budget.used += bytes;
    t.bytes += bytes;
  }

  /** Removes one queued hint and its bytes from the counts. */
  private drop(t: TargetQueue, key: string, h: Hint): void {
    t.hints.delete(key);
    this.totalBytes -= h.bytes;
    this.budget.used -= h.bytes;
    t.bytes -= h.bytes;
    if (h.requeued) t.requeued--;
  }

  private updateGauges(): void {
    if (this.deps.names.bytes) this.deps.metrics.set(this.deps.names.bytes, this.totalBytes);
  }
}

/** The monotonic queue time of a target's oldest hint. */
function oldestQueuedAt(t: TargetQueue): number {
  let oldest = Infinity;
  for (const h of t.hints.values()) {
    if (h.queuedAtMonoMs < oldest) oldest = h.queuedAtMonoMs;
    // Without requeued hints the first one is the oldest.
    if (t.requeued === 0) break;
  }
  return oldest;
}
