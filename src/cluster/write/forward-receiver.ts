// The receiving side of Forward: this node is (in its ring view) an owner of each write's key,
// normally its primary, and coordinates the write. Writes are started in request order, so
// later writes of the same key get later versions. Each write is admitted on arrival like a
// client write (DRAINING once the node drains). Conditional writes and touches are taken only
// by the key's primary in this node's ring view (conditional-writer.ts), else UNAVAILABLE; lease
// fills likewise, else CONFLICT (the lease is lost with the ring change).
import type { Clock } from "../../core/clock.js";
import { CacheError, toCacheError } from "../../core/errors.js";
import type { ConsistencyLevel } from "../../config/index.js";
import { isConditional, type ClientWrite, type ForwardRequest, type WriteOutcome } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { Lifecycle } from "../lifecycle.js";
import { leaseNotHeld } from "../lease/lease-table.js";
import { checkForwardedWrite } from "../peer-input.js";
import type { WritePath } from "./write-path.js";
import { quotedKey } from "../../core/key-check.js";

export interface ForwardReceiverDeps {
  readonly selfId: string;
  readonly clock: Clock;
  /** The sender gives up on a forward after this long (the peer timeout). */
  readonly deadlineMs: number;
  readonly lifecycle: Lifecycle;
  readonly view: ClusterView;
  readonly writes: Pick<WritePath, "coordinateHere">;
  readonly writeConsistency: ConsistencyLevel;
}

export class ForwardReceiver {
  constructor(private readonly deps: ForwardReceiverDeps) {}

  handle(req: ForwardRequest): Promise<WriteOutcome[]> {
    const level = req.consistency ?? this.deps.writeConsistency;
    const late = lateBy(req.sentAtMs ?? 0, this.deps.clock.nowMs(), this.deps.deadlineMs);
    return Promise.all(req.writes.map((w) => this.coordinate(w, level, req.senderApplies ? req.from : undefined, late)));
  }

  private async coordinate(w: ClientWrite, level: ConsistencyLevel, senderApplies: string | undefined, lateMs: number): Promise<WriteOutcome> {
    const { selfId } = this.deps;
    const owners = this.deps.view.ring().ownersOf(w.key);
    try {
      // The sender has given up on it (and may have promoted itself): applying it now, with a
      // fresh version, would overwrite writes acknowledged since.
      if (lateMs > 0) throw new CacheError("UNAVAILABLE", `forward arrived ${lateMs} ms after its deadline; not applied`);
      this.deps.lifecycle.admitWrite();
      checkForwardedWrite(w);
      // A lease lives on the primary that granted it: a fill reaching another node has lost it.
      if (w.leaseToken !== undefined && owners.primary !== selfId) throw leaseNotHeld(w.key);
      if (!owners.ids.includes(selfId)) {
        throw new CacheError("UNAVAILABLE", `node ${selfId} does not own key ${quotedKey(w.key)} in its ring view`);
      }
      if (isConditional(w) && owners.primary !== selfId) {
        throw new CacheError("UNAVAILABLE", `node ${selfId} is not the primary of key ${quotedKey(w.key)} in its ring view (${owners.primary} is); conditional writes are applied by the primary only`);
      }
      const r = await this.deps.lifecycle.track(this.deps.writes.coordinateHere(w, owners, level, senderApplies));
      return {
        key: w.key, applied: r.applied, bytes: r.bytes, owners: r.owners.ids, version: r.version, origin: r.origin, errorCode: "", errorMessage: "", expiresAtMs: r.expiresAtMs,
        ...(r.counterValue !== undefined ? { counterValue: r.counterValue } : {}),
        ...(r.senderCounted === true ? { senderCounted: true } : {}),
      };
    } catch (err) {
      const e = toCacheError(err);
      const etag = e.code === "PRECONDITION_FAILED" ? e.details?.current_etag : undefined;
      return {
        key: w.key, applied: false, bytes: 0, owners: owners.ids, version: 0, origin: "", errorCode: e.code, errorMessage: e.message, expiresAtMs: 0,
        ...(typeof etag === "string" ? { currentEtag: etag } : {}),
        ...(e.details !== undefined ? { errorDetails: e.details } : {}),
      };
    }
  }
}

/**
 * How far past its deadline a forward sent at `sentAtMs` (the sender's clock) arrives at `nowMs`
 * (this node's clock); 0 when in time or when the sender gave no time. Clock skew between the
 * nodes shifts the deadline by the skew.
 */
function lateBy(sentAtMs: number, nowMs: number, deadlineMs: number): number {
  if (sentAtMs <= 0) return 0;
  return Math.max(0, nowMs - sentAtMs - deadlineMs);
}
