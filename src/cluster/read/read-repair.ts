// Read repair: after a QUORUM or ALL read, owners that answered with an older copy (or none)
// get the chosen record. By default each repair is sent at once. With batching on
// (SERVICE_READ_REPAIR_BATCH_SIZE > 0) repairs queue per (peer, key), keeping the newer record,
// and flush every SERVICE_READ_REPAIR_INTERVAL or when a peer's batch reaches the batch size.
// A clean stop drains the queue; a crash loses it (anti-entropy repairs later).
import type { TimerHandle, Timers } from "../../core/clock.js";
import { PEER_BATCHING } from "../../core/limits.js";
import { byteSize, chunkBy } from "../record-size.js";
import type { Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import { compareVersions, type VersionedRecord } from "../../store/index.js";
import type { PeerRef, PeerTransport } from "../../transport/index.js";

export interface ReadRepairDeps {
  readonly transport: PeerTransport;
  readonly selfId: string;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly timers: Timers;
  /** 0 = send each repair at once. */
  readonly batchSize: number;
  readonly intervalMs: number;
}

interface PeerQueue {
  peer: PeerRef;
  records: Map<string, VersionedRecord>;
}

export class ReadRepairer {
  private readonly queues = new Map<string, PeerQueue>();
  private timer: TimerHandle | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: ReadRepairDeps) {}

  get batching(): boolean {
    return this.deps.batchSize > 0;
  }

  /** Repairs queued, over every peer. */
  get queued(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.records.size;
    return n;
  }

  start(): void {
    if (this.batching && !this.timer) this.timer = this.deps.timers.every(this.deps.intervalMs, () => this.track(this.flush()));
  }

  /** Sends `record` to `peer`, now or through the batch queue. */
  repair(peer: PeerRef, record: VersionedRecord): void {
    if (!this.batching) {
      this.track(this.send(peer, [record]));
      return;
    }
    let q = this.queues.get(peer.id);
    if (!q) {
      q = { peer, records: new Map() };
      this.queues.set(peer.id, q);
    }
    const existing = q.records.get(record.key);
    if (existing) {
      if (compareVersions(record.version, record.origin, existing.version, existing.origin) <= 0) return;
      this.deps.metrics.inc("dist.read_repair.coalesced");
    } else {
      this.deps.metrics.inc("dist.read_repair.batched");
    }
    q.records.set(record.key, record);
    if (q.records.size >= this.deps.batchSize) this.track(this.flushPeer(q));
  }

  /** Sends every queued repair now. */
  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => this.flushPeer(q)));
  }

  /** Clean stop: stops the timer, sends the queue and waits for repairs under way. */
  async drain(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    await this.flush();
    await Promise.all([...this.inFlight]);
  }

  private flushPeer(q: PeerQueue): Promise<void> {
    const records = [...q.records.values()];
    q.records.clear();
    this.queues.delete(q.peer.id);
    return records.length > 0 ? this.send(q.peer, records) : Promise.resolve();
  }

  private async send(peer: PeerRef, records: VersionedRecord[]): Promise<void> {
    const { items, bytes } = PEER_BATCHING.repair;
    const sets = chunkBy(records.filter((r) => !r.tombstone), byteSize, items, bytes);
    const removes = chunkBy(records.filter((r) => r.tombstone), byteSize, items, bytes);
    try {
      for (const chunk of sets) await this.deps.transport.set(peer, this.deps.selfId, chunk);
      for (const chunk of removes) await this.deps.transport.remove(peer, this.deps.selfId, chunk);
      this.deps.metrics.inc("dist.read_repair", records.length);
    } catch (err) {
      // A lost repair is not an error of the read; anti-entropy converges the replica later.
      this.deps.logger.debug("read repair failed", { peer: peer.id, records: records.length, error: String(err) });
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }
}
