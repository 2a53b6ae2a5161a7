// The frame of a read-modify-write on an owner of the key (conditional-writer.ts and
// counter-writer.ts): one at a time per key, admitted before any peer is asked, the owners read
// first when this node is unsure its copy is the newest, then one decision and one coordinated
// write. Between the last lookup of the key and the local apply inside coordinate() nothing
// awaits, so the write is stamped above exactly the record it was decided on.
import type { KeyLock } from "../../core/key-lock.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { CounterName, Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import type { ShardedStore, VersionedRecord } from "../../store/index.js";
import type { WriteResult } from "../cache-service.js";
import type { ClusterView } from "../cluster-view.js";
import type { WriteCoordinator } from "./write-coordinator.js";

export interface LockedWriteDeps {
  readonly store: ShardedStore;
  readonly view: ClusterView;
  readonly coordinator: WriteCoordinator;
  /** The newest record among a quorum of owners (Reader.newestRecord); repairs this node too. */
  readonly newestRecord: (key: string, owners: Owners, level: ConsistencyLevel) => Promise<VersionedRecord | undefined>;
  /** One read-modify-write per key at a time (shared by conditional writes and increments; bounded). */
  readonly locks: KeyLock;
  readonly metrics: Metrics;
}

/** What the locked write knows when it decides. */
export interface LockedState {
  /** The acknowledgements the write's consistency needs (WriteCoordinator.admit). */
  readonly need: number;
  /** The newest record of the key seen: among the owners read, else this node's own. */
  readonly newest: VersionedRecord | undefined;
  /** This node's record of the key now (after the read repaired it). */
  readonly held: VersionedRecord | undefined;
}

/** One writer's part of a locked write. */
export interface LockedPlan {
  /** A result to answer without writing, checked first under the lock (a remembered retry). */
  readonly early?: () => WriteResult | undefined;
  /** The consistency to read the owners at before deciding, or undefined to trust `held`. */
  readAt(held: VersionedRecord | undefined): ConsistencyLevel | undefined;
  /** The counter of those reads. */
  readonly readMetric: CounterName;
  /** Decides and coordinates the write (nothing may await before coordinate()). */
  write(state: LockedState): Promise<WriteResult>;
  /** Called once the owners were read. */
  readonly afterRead?: () => void;
}

/** Runs `plan` for `key` under the key's lock (see the file comment). */
export function runLocked(deps: LockedWriteDeps, key: string, owners: Owners, level: ConsistencyLevel, plan: LockedPlan): Promise<WriteResult> {
  return deps.locks.run(key, () => decide(deps, key, owners, level, plan));
}

/**
 * The locked part: without a read of the owners the write's own promise is the task's (no async
 * frame around it); a synchronous throw becomes the task's rejection in the lock.
 */
function decide(deps: LockedWriteDeps, key: string, owners: Owners, level: ConsistencyLevel, plan: LockedPlan): Promise<WriteResult> {
  const remembered = plan.early?.();
  if (remembered !== undefined) return Promise.resolve(remembered);
  // Refused up front (clock offset, minority side) before any peer is asked.
  const need = deps.coordinator.admit(level);
  const local = deps.store.peek(key);
  const readAt = plan.readAt(local);
  if (readAt === undefined) return plan.write({ need, newest: local, held: local });
  return readThenWrite(deps, key, owners, readAt, need, plan);
}

/** Reads the owners at `readAt`, then decides on the newest record seen. */
async function readThenWrite(deps: LockedWriteDeps, key: string, owners: Owners, readAt: ConsistencyLevel, need: number, plan: LockedPlan): Promise<WriteResult> {
  deps.metrics.inc(plan.readMetric);
  const newest = await deps.newestRecord(key, owners, readAt);
  plan.afterRead?.();
  return plan.write({ need, newest, held: deps.store.peek(key) });
}
