// Counter increments on an owner of the key: normally its primary, or a replica owner that
// promoted itself while the primary was unreachable. Each node adds to its own slot (its node id
// plus boot id, so a restarted node never reuses a slot), one increment at a time per key, and
// pushes the whole counter state, which every owner merges (counter-merge.ts): increments are
// never lost to last-write-wins. The answer goes out once the write consistency has its
// acknowledgements; under the key's lock, so concurrent increments on a primary return
// distinct, consecutive values.
import { counterTotal, encodeCounter } from "../../core/counter-state.js";
import type { Clock } from "../../core/clock.js";
import type { KeyLock } from "../../core/key-lock.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import type { ShardedStore, VersionedRecord } from "../../store/index.js";
import type { ClientWrite } from "../../transport/index.js";
import type { WriteResult } from "../cache-service.js";
import type { ClusterView } from "../cluster-view.js";
import { counterStep } from "./counter-step.js";
import type { IdempotencyCache } from "./idempotency-cache.js";
import type { WriteCoordinator } from "./write-coordinator.js";

export interface CounterWriterDeps {
  readonly store: ShardedStore;
  readonly clock: Clock;
  readonly view: ClusterView;
  readonly coordinator: WriteCoordinator;
  /** The newest record among a quorum of owners (Reader.newestRecord); repairs this node too. */
  readonly newestRecord: (key: string, owners: Owners, level: ConsistencyLevel) => Promise<VersionedRecord | undefined>;
  /** One increment per key at a time (shared with the conditional writes: bounded). */
  readonly locks: KeyLock;
  readonly idempotency: IdempotencyCache;
  readonly metrics: Metrics;
  /** This node's slot: its node id, "@", its boot id. */
  readonly writerId: string;
  readonly selfId: string;
}

const UNCHECKED = Object.freeze({ onStale: () => undefined, ownerCheck: false });

export class CounterWriter {
  constructor(private readonly deps: CounterWriterDeps) {}

  /** Adds `write.delta` to the key's counter on this owner; the result carries the new value. */
  incr(write: ClientWrite, owners: Owners, level: ConsistencyLevel): Promise<WriteResult> {
    const idem = write.idempotencyKey;
    const remembered = idem === undefined ? undefined : this.deps.idempotency.get(write.key, idem);
    if (remembered !== undefined) return Promise.resolve(remembered);
    return this.deps.locks.run(write.key, () => this.underLock(write, owners, level));
  }

  private async underLock(write: ClientWrite, owners: Owners, level: ConsistencyLevel): Promise<WriteResult> {
    const { store, clock, coordinator, idempotency } = this.deps;
    const idem = write.idempotencyKey;
    const remembered = idem === undefined ? undefined : idempotency.get(write.key, idem);
    if (remembered !== undefined) return remembered;
    coordinator.admit(level);
    await this.readFirstWhenUnsure(write.key, owners, level);
    // From here to the local apply inside coordinate() nothing awaits: no merge slips in between.
    const rec = store.peek(write.key);
    const now = clock.nowMs();
    const step = counterStep(rec, now, this.deps.writerId, write.delta ?? 1, write.initial ?? 0);
    const ttlMs = step.created ? write.ttlMs : remainingTtlMs(rec, now);
    const value = counterTotal(step.state);
    const set: ClientWrite = { kind: "set", key: write.key, value: encodeCounter(step.state), ttlMs };
    const r = await coordinator.coordinate(set, owners, level, undefined, UNCHECKED);
    this.deps.metrics.inc("dist.incr.applied");
    const result: WriteResult = { ...r, counterValue: value, appliedBy: this.deps.selfId };
    if (idem !== undefined) idempotency.remember(write.key, idem, result);
    return result;
  }

  /**
   * Without a local record the owners are read at QUORUM first; with one, right after a ring
   * change, at the write's own consistency (none for ONE, so a partition side keeps counting).
   */
  private async readFirstWhenUnsure(key: string, owners: Owners, level: ConsistencyLevel): Promise<void> {
    if (owners.ids.length <= 1) return;
    const held = this.deps.store.peek(key) !== undefined;
    if (held && (!this.deps.view.unsettled() || level === "one")) return;
    this.deps.metrics.inc("dist.incr.quorum_reads");
    await this.deps.newestRecord(key, owners, held ? level : "quorum");
  }
}

/** The expiry a counter keeps across an increment, as a TTL from now; 0 = none. */
function remainingTtlMs(rec: VersionedRecord | undefined, nowMs: number): number {
  if (rec === undefined || rec.expiresAtMs === 0) return 0;
  return Math.max(1, rec.expiresAtMs - nowMs);
}
