// The primary's side of conditional writes and touches (read-modify-write). Only the key's
// primary runs them, one at a time per key, holding the key until the write has the
// acknowledgements its consistency needs: the evaluation and the write are one step, so of
// several writes conditioned on one ETag exactly one succeeds while the owners agree on the ring.
//
// The condition is evaluated against this node's own record when it trusts it to be the newest;
// otherwise (no local record, the ring changed within the settle window, or an owner answered a
// conditional push of the key with a newer version) it reads a quorum of the owners first.
//
// An owner that forwarded the write and applies the result itself (`senderApplies`) is counted
// among the acknowledgements, and not pushed to, only when its owner list of the key, sent with
// the write, equals this node's (the check a pushed replica makes), and for a touch only when it
// holds the very item touched (a touch's result carries no value): senderCounts() decides.
// Otherwise it is pushed to like any other owner. A touch goes to the other owners without its
// value first; those that do not hold the item touched then get the full item (replica-pusher.ts).
import { badRequest } from "../../core/errors.js";
import type { Clock } from "../../core/clock.js";
import type { ConsistencyLevel } from "../../config/index.js";
import { sameOwnerList, type Owners } from "../../ring/index.js";
import type { ClientWrite } from "../../transport/index.js";
import type { WriteResult } from "../cache-service.js";
import { runLocked, type LockedPlan, type LockedState, type LockedWriteDeps } from "./locked-write.js";
import { isLiveAt, type VersionedRecord } from "../../store/index.js";
import { effectiveWrite, evaluatePrecondition, preconditionFailed } from "./precondition.js";

/** Keys remembered as doubtful at most (their next conditional write reads a quorum first). */
const DOUBTFUL_KEYS_MAX = 10_000;

export interface ConditionalWriterDeps extends LockedWriteDeps {
  readonly clock: Clock;
}

export class ConditionalWriter {
  /** Keys whose local record may not be the newest although the ring is settled. */
  private readonly doubtful = new Set<string>();

  constructor(private readonly deps: ConditionalWriterDeps) {}

  /**
   * Evaluates and applies a conditional write or touch of a key whose primary is this node.
   * 400 for ONE consistency; 412 PRECONDITION_FAILED (nothing changed) when the condition fails;
   * 404 for a touch of a key without a live item; else the write's result. `senderApplies`: the
   * owner that forwarded the write and would apply the result itself (see the file comment).
   */
  coordinate(write: ClientWrite, owners: Owners, level: ConsistencyLevel, senderApplies?: string): Promise<WriteResult> {
    if (level === "one") return Promise.reject(badRequest("conditional writes and touches need quorum or all consistency, not one"));
    const key = write.key;
    const plan: LockedPlan = {
      // This node's record when trusted to be the newest, else the newest among a quorum of owners.
      readAt: (held) => (held !== undefined && !this.deps.view.unsettled() && !this.doubtful.has(key) ? undefined : level),
      readMetric: "dist.write.precondition_reads",
      afterRead: () => this.doubtful.delete(key),
      write: (state) => this.decide(write, owners, level, state, senderApplies),
    };
    return runLocked(this.deps, key, owners, level, plan);
  }

  private decide(write: ClientWrite, owners: Owners, level: ConsistencyLevel, { need, newest, held }: LockedState, senderApplies: string | undefined): Promise<WriteResult> {
    const live = isLiveAt(newest, this.deps.clock.nowMs()) ? newest : undefined;
    const verdict = evaluatePrecondition(write.condition, live);
    if (!verdict.holds) {
      this.deps.metrics.inc("dist.write.precondition_failed");
      throw preconditionFailed(write.key, verdict.currentEtag);
    }
    const plain = effectiveWrite(write, live);
    // One object literal without spreads: a spread into it made V8 build each one on a slow path
    // (measured: about a third of a conditional write's cost on its primary, outside the store).
    return this.deps.coordinator.coordinate(plain, owners, level, {
      senderApplies: senderApplies !== undefined && senderCounts(write, owners, live) ? senderApplies : undefined,
      expectedOwners: owners,
      restamps: false,
      onStale: () => this.markDoubtful(write.key),
      need,
      heldVersion: held?.version ?? 0,
      touchBase: write.kind === "touch" ? live : undefined,
    });
  }

  private markDoubtful(key: string): void {
    if (this.doubtful.size >= DOUBTFUL_KEYS_MAX) {
      // Forget the oldest: its next conditional write trusts the local record again, which the
      // quorum write it then makes still checks (a stale owner answer marks it again).
      const oldest = this.doubtful.values().next();
      if (!oldest.done) this.doubtful.delete(oldest.value);
    }
    this.doubtful.add(key);
  }
}

/**
 * Whether the owner that forwarded `write` may be counted among its acknowledgements without a
 * push: its owner list of the key (sent with the write) is `owners`, in the same order, and for a
 * touch it holds `live`, the item touched, by version and origin. Pure.
 */
export function senderCounts(write: ClientWrite, owners: Owners, live: VersionedRecord | undefined): boolean {
  const view = write.sender;
  if (view === undefined || !sameOwnerList(view.owners, owners.ids)) return false;
  if (write.kind !== "touch") return true;
  return live !== undefined && view.baseVersion === live.version && view.baseOrigin === live.origin;
}
