// The key hand-off of a draining node: one pass over every record it holds (values and
// tombstones; expired values are skipped) that pushes each record to every owner the current
// ring names (this node is off its own ring while it drains). An owner that already holds the
// record, or a newer one, answers so without storing anything; an owner that lacks it stores it.
// Records an owner refused (it does not see itself as an owner yet) or could not receive go to
// the migration queue, which replays them (or, for an unreachable owner, hands them to a live
// one); records for an owner already known to be unreachable go there without a call. Records are sent in batches per owner, several batches at once, while the scan pauses
// between slices so requests keep being served.
import type { Clock, YieldToLoop } from "../../core/clock.js";
import { PEER_BATCH_BYTES, SCAN_LIMITS } from "../../core/limits.js";
import type { Metrics } from "../../observability/index.js";
import { isLiveAt, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { PeerRef, PeerTransport } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { HintQueue } from "../hints/hint-queue.js";
import { byteSize } from "../record-size.js";

/** Records per hand-off batch, and batches under way at once (all owners together). */
export const KEY_HANDOFF_LIMITS = Object.freeze({ items: 512, bytes: PEER_BATCH_BYTES, inFlight: 8 });

export interface KeyHandoffDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly view: Pick<ClusterView, "ring" | "peer">;
  readonly transport: PeerTransport;
  /** Refused and undelivered records wait here (dist.migration.*). */
  readonly migrations: HintQueue;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly yieldToLoop: YieldToLoop;
  /**
   * True when member `id` is alive and not draining. Records for other owners skip the network
   * and wait in the migration queue, from which the hint hand-off gives them to a live owner.
   */
  readonly reachable: (id: string) => boolean;
}

interface Batch {
  readonly peer: PeerRef;
  readonly records: VersionedRecord[];
  bytes: number;
}

export class KeyHandoff {
  private pass: Promise<void> | undefined;
  private total = 0;
  private scanned = 0;
  private finished = false;
  private ownerless = 0;
  private unqueued = 0;
  private sending = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: KeyHandoffDeps) {}

  /** True once a pass reached every record (and sent what it found). */
  get done(): boolean {
    return this.finished;
  }

  /** True while a pass runs. */
  get running(): boolean {
    return this.pass !== undefined;
  }

  /** Records the running pass has not reached yet; every held record before a pass. */
  get remaining(): number {
    if (this.finished) return 0;
    if (this.pass === undefined) return this.deps.store.items + this.deps.store.tombstones;
    return Math.max(0, this.total - this.scanned);
  }

  /** Records the last pass found no owner for (no other node holds a ring position). */
  get noOwner(): number {
    return this.ownerless;
  }

  /**
   * Records of the last pass that went to no owner and found no room in the migration queue (its
   * caps): held here only, so the pass is not done; a later pass sends them again.
   */
  get notQueued(): number {
    return this.unqueued;
  }

  /** Hand-off batches under way. */
  get callsInFlight(): number {
    return this.sending;
  }

  /** Runs one pass (or joins the running one). A pass that found ownerless or unqueued records is not done. */
  run(): Promise<void> {
    this.pass ??= this.runPass().finally(() => {
      this.pass = undefined;
    });
    return this.pass;
  }

  private async runPass(): Promise<void> {
    const { store } = this.deps;
    this.total = store.items + store.tombstones;
    this.scanned = 0;
    this.ownerless = 0;
    this.unqueued = 0;
    this.finished = false;
    const batches = new Map<string, Batch>();
    for (let shard = 0; shard < store.shardCount; shard++) {
      let slot = 0;
      while (slot >= 0) {
        const full: Batch[] = [];
        slot = this.scanSlice(shard, slot, batches, full);
        for (const b of full) await this.send(b);
        await this.deps.yieldToLoop();
      }
    }
    for (const b of batches.values()) await this.send(b);
    await Promise.all(this.inFlight);
    this.finished = this.ownerless === 0 && this.unqueued === 0;
  }

  /** Adds the records of one slice to their owners' batches; full batches go to `full`. */
  private scanSlice(shard: number, fromSlot: number, batches: Map<string, Batch>, full: Batch[]): number {
    const { store, view, selfId } = this.deps;
    const ring = view.ring();
    const now = this.deps.clock.nowMs();
    let looked = 0;
    return store.scanRecords(shard, fromSlot, (rec) => {
      if (looked >= SCAN_LIMITS.sliceRecords) return false;
      looked++;
      this.scanned++;
      if (!rec.tombstone && !isLiveAt(rec, now)) return true;
      const owners = ring.ownersOf(rec.key).ids.filter((id) => id !== selfId);
      if (owners.length === 0) {
        this.ownerless++;
        return true;
      }
      const size = byteSize(rec);
      // A record some reachable owner is sent may miss the queue of an unreachable one (its caps):
      // that owner catches up from the others. A record sent to none must be queued somewhere.
      let sent = false;
      let refused = false;
      for (const id of owners) {
        const peer = view.peer(id);
        if (!peer) continue;
        if (!this.deps.reachable(id)) {
          if (!this.deps.migrations.add(peer, rec)) refused = true;
          continue;
        }
        sent = true;
        let b = batches.get(id);
        if (b && (b.records.length >= KEY_HANDOFF_LIMITS.items || b.bytes + size > KEY_HANDOFF_LIMITS.bytes)) {
          full.push(b);
          b = undefined;
        }
        if (!b) {
          b = { peer, records: [], bytes: 0 };
          batches.set(id, b);
        }
        b.records.push(rec);
        b.bytes += size;
      }
      if (refused && !sent) this.unqueued++;
      return true;
    });
  }

  /** Starts sending one batch, waiting first while KEY_HANDOFF_LIMITS.inFlight batches are under way. */
  private async send(b: Batch): Promise<void> {
    while (this.inFlight.size >= KEY_HANDOFF_LIMITS.inFlight) await Promise.race(this.inFlight);
    const p = this.deliver(b).finally(() => {
      this.inFlight.delete(p);
    });
    this.inFlight.add(p);
  }

  /** Queues a record the owner did not get; counts it when the queue's caps refuse it. */
  private queue(peer: PeerRef, rec: VersionedRecord): void {
    if (!this.deps.migrations.add(peer, rec)) this.unqueued++;
  }

  /** Pushes one batch; refused and undelivered records join the migration queue. */
  private async deliver(b: Batch): Promise<void> {
    const { transport, selfId, metrics } = this.deps;
    const values = b.records.filter((r) => !r.tombstone);
    const tombstones = b.records.filter((r) => r.tombstone);
    this.sending++;
    metrics.inc("dist.rebalance.batches");
    try {
      const outcomes = [
        ...(values.length > 0 ? await transport.set(b.peer, selfId, values) : []),
        ...(tombstones.length > 0 ? await transport.remove(b.peer, selfId, tombstones) : []),
      ];
      let delivered = 0;
      [...values, ...tombstones].forEach((rec, i) => {
        const kind = outcomes[i]?.kind;
        if (kind === "applied" || kind === "stale") delivered++;
        else {
          metrics.inc("dist.migration.refused");
          this.queue(b.peer, rec);
        }
      });
      metrics.inc("dist.rebalance.keys", delivered);
    } catch {
      for (const rec of b.records) this.queue(b.peer, rec);
    } finally {
      this.sending--;
    }
  }
}
