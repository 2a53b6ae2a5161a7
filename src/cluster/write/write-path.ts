// Where a client write goes. The key's primary coordinates it. Any other node forwards it to the
// primary and returns the primary's real outcome; an owner that forwards applies the primary's
// stamped record itself (forward-result.ts). When the forward fails and this node is a replica
// owner it promotes itself: it coordinates the write, and the old primary gets its copy as a hint.
// Conditional writes and touches go to the primary alone (conditional-writer.ts there) and are
// never promoted: when the primary cannot be reached they fail with UNAVAILABLE. An owner that
// forwards one sends its view of the key with it and applies the result itself when the primary
// counted it (its owner list equals the primary's; for a touch, it holds the item touched);
// otherwise the primary pushes the result to it. Increments are
// promoted like plain writes: the promoted owner adds to its own counter slot (counter-writer.ts);
// an increment with If-Match is conditional (the primary alone, never promoted). A lease fill
// goes to the primary alone too (the lease lives in its memory) and is never promoted.
import { CacheError, toCacheError } from "../../core/errors.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import type { RecordHeader, ShardedStore } from "../../store/index.js";
import { isConditional, neverDelivered, NotDeliveredError, primaryOnly, type ClientWrite, type WriteOutcome } from "../../transport/index.js";
import type { WriteResult } from "../cache-service.js";
import type { ClusterView } from "../cluster-view.js";
import type { ApplyVerdict, ReplicaApplier } from "../replica-applier.js";
import type { ConditionalWriter } from "./conditional-writer.js";
import type { CounterWriter } from "./counter-writer.js";
import type { Forwarder } from "./forwarder.js";
import { holdsResultOrLater, holdsValue, resultRecord, stampedRecord, withSenderView } from "./forward-result.js";
import { afterForwardFailure, primaryFailure, type ForwardDelivery } from "./promotion.js";
import type { CoordinateOptions, WriteCoordinator } from "./write-coordinator.js";
import { quotedKey } from "../../core/key-check.js";

export interface WritePathDeps {
  readonly selfId: string;
  readonly view: ClusterView;
  readonly coordinator: WriteCoordinator;
  readonly conditional: ConditionalWriter;
  readonly counters: CounterWriter;
  readonly forwarder: Forwarder;
  readonly applier: ReplicaApplier;
  /** This node's store: what a forwarding owner holds of a key it touches. */
  readonly store: ShardedStore;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /**
   * Whether what this node stores counts as an acknowledgement (QuorumVote.acknowledges). A
   * forwarding owner whose does not asks the primary to count it (senderApplies) only then: the
   * primary pushes to it instead, and its answer says it abstains (write-coordinator.ts, isAck).
   */
  readonly acknowledges?: () => boolean;
}

const PLAIN: CoordinateOptions = Object.freeze({ restamps: true });

/** A forward that did not succeed: the error, and how far it got. */
interface ForwardFailure {
  readonly failure: CacheError;
  readonly delivery: ForwardDelivery;
}

export class WritePath {
  constructor(private readonly deps: WritePathDeps) {}

  /**
   * Coordinates the write here or forwards it. Not async itself: the primary's own write is the
   * coordinator's promise as it is, without another promise around it (it may throw instead of
   * rejecting; the caller catches both).
   */
  write(write: ClientWrite, level: ConsistencyLevel): Promise<WriteResult> {
    this.deps.metrics.inc("dist.write.attempts");
    const owners = this.deps.view.ring().ownersOf(write.key);
    if (primaryOnly(write)) return this.writePrimaryOnly(write, owners, level);
    if (owners.primary === this.deps.selfId) return this.coordinateHere(write, owners, level);
    return this.writeElsewhere(write, owners, level);
  }

  /** A plain write or increment whose primary is another node: forwarded, or taken over by this owner. */
  private async writeElsewhere(write: ClientWrite, owners: Owners, level: ConsistencyLevel): Promise<WriteResult> {
    const ownsKey = owners.ids.includes(this.deps.selfId);
    // A suspect primary is tried last: an owner takes the write over at once, and another node
    // forwards to the first owner that is not suspect (it coordinates as a promoted replica).
    let target = owners.primary;
    if (this.deps.view.suspect(owners.primary)) {
      if (ownsKey) return this.promote(write, owners, level, new CacheError("UNAVAILABLE", `primary ${owners.primary} is suspect`));
      target = owners.ids.find((id) => !this.deps.view.suspect(id)) ?? owners.primary;
    }
    const forwarded = await this.forwardTo(target, write, owners, level);
    if (!("failure" in forwarded)) return forwarded;
    const { failure, delivery } = forwarded;
    if (afterForwardFailure(forwarded, ownsKey, write.kind === "incr") === "fail") {
      // The primary's real outcome goes back as it is; a transport failure says which primary
      // could not be reached, and whether the write may have been applied there.
      if (failure.code !== "UNAVAILABLE" || delivery === "answered") throw failure;
      throw new CacheError("UNAVAILABLE", `owner ${target} of key ${quotedKey(write.key)} is unreachable: ${failure.message}; ${whetherApplied(delivery)}`, { owners: [...owners.ids] }, { cause: failure });
    }
    return this.promote(write, owners, level, failure);
  }

  /**
   * A conditional write, touch or lease fill: the primary evaluates and applies it; any other
   * node forwards it to the primary (suspect or not) and never promotes itself.
   */
  private async writePrimaryOnly(write: ClientWrite, owners: Owners, level: ConsistencyLevel): Promise<WriteResult> {
    if (owners.primary === this.deps.selfId) return this.coordinateHere(write, owners, level);
    const forwarded = await this.forwardTo(owners.primary, write, owners, level);
    if (!("failure" in forwarded)) return forwarded;
    const { failure, delivery } = forwarded;
    if (delivery === "answered") throw failure;
    throw new CacheError(
      "UNAVAILABLE",
      `primary ${owners.primary} of key ${quotedKey(write.key)} is unreachable (${failure.message}); conditional writes, touches and lease fills are not taken over by another owner; ${whetherApplied(delivery)}`,
      { owners: [...owners.ids] },
      { cause: failure },
    );
  }

  /** This replica owner coordinates the write itself; the old primary gets its copy as a hint. */
  private promote(write: ClientWrite, owners: Owners, level: ConsistencyLevel, why: CacheError): Promise<WriteResult> {
    this.deps.metrics.inc("dist.write.forward_promotion");
    this.deps.logger.debug("write promoted: primary unreachable", { key: write.key, primary: owners.primary, error: why.message });
    return this.coordinateHere(write, owners, level, undefined, true);
  }

  /**
   * This owner applies the write: an increment to its own counter slot (its If-Match evaluated
   * under the key's lock), a conditional write or touch evaluated under the key's lock (the caller
   * checked that this node is the primary), else as stamped. `senderApplies`: the forwarding owner
   * that would apply the result itself (always counted for a plain write; for a conditional write
   * or touch as the conditional writer decides).
   */
  coordinateHere(write: ClientWrite, owners: Owners, level: ConsistencyLevel, senderApplies?: string, takenOver = false): Promise<WriteResult> {
    // An increment with If-Match is conditional too: the counter writer evaluates it under the lock.
    if (write.kind === "incr") return this.deps.counters.incr(write, owners, level, takenOver);
    if (isConditional(write)) return this.deps.conditional.coordinate(write, owners, level, senderApplies);
    return this.deps.coordinator.coordinate(write, owners, level, senderApplies === undefined ? PLAIN : { senderApplies, restamps: true });
  }

  private async forwardTo(targetId: string, write: ClientWrite, owners: Owners, level: ConsistencyLevel): Promise<WriteResult | ForwardFailure> {
    const primary = this.deps.view.peer(targetId);
    if (!primary) return { failure: new NotDeliveredError(`owner ${targetId} is not a member`), delivery: "never" };
    // Only a touch needs what this node holds of the key: its header, looked up once.
    const held = write.kind === "touch" ? this.deps.store.peekHeader(write.key) : undefined;
    const applies = this.appliesResult(write, owners, held);
    const sent = applies && isConditional(write) ? withSenderView(write, owners, held) : write;
    let outcome: WriteOutcome;
    try {
      outcome = await this.deps.forwarder.forward(primary, sent, level, applies);
    } catch (err) {
      return { failure: toCacheError(err), delivery: neverDelivered(err) ? "never" : "maybe" };
    }
    if (outcome.errorCode !== "") return { failure: primaryFailure(outcome), delivery: "answered" };
    if (applies) this.applyResult(sent, outcome, targetId);
    const counter = write.kind === "incr" ? { counterValue: outcome.counterValue ?? 0, appliedBy: targetId } : {};
    return { key: write.key, applied: outcome.applied, bytes: outcome.bytes, owners, version: outcome.version, origin: outcome.origin, expiresAtMs: outcome.expiresAtMs, ...counter };
  }

  /**
   * Whether this owner applies the primary's result of `write` itself instead of having it pushed
   * back. Not for an increment (its result is a counter state this node does not have) nor a
   * lease fill (the primary alone takes it); a touch's result carries no value, so only an owner
   * holding a value offers to apply one.
   */
  private appliesResult(write: ClientWrite, owners: Owners, held: RecordHeader | undefined): boolean {
    if (write.kind === "incr" || write.leaseToken !== undefined || !owners.ids.includes(this.deps.selfId)) return false;
    if (this.deps.acknowledges?.() === false) return false;
    return write.kind !== "touch" || holdsValue(held);
  }

  /**
   * Stores the primary's result of `sent`: a plain write's always, a conditional write's or
   * touch's only when the primary counted this owner. When the primary counted it, it must be
   * held here before the client hears 200: a result this node refuses (a version
   * beyond its clock bound or below its reset floor) or cannot store (the touched item replaced
   * meanwhile) is an unknown outcome, 503. A plain write superseded here by a newer version
   * (stale) was applied and overwritten, as last-write-wins has it.
   */
  private applyResult(sent: ClientWrite, outcome: WriteOutcome, primary: string): void {
    const plain = !isConditional(sent);
    // The primary says whether it counted this owner (senderCounted). A plain write's result is
    // stored even when it did not (its ring no longer lists this owner, or an older primary that
    // never says), but only a counted owner's refusal breaks a promise.
    const counted = outcome.senderCounted === true;
    if (!plain && !counted) return;
    const rec = sent.kind === "touch" ? resultRecord(sent, outcome, this.deps.store.peek(sent.key)) : stampedRecord(sent, outcome);
    const verdict = rec === undefined ? undefined : this.deps.applier.apply(rec, "forward-result");
    if (verdict?.kind === "applied" || (plain && verdict?.kind === "stale") || !counted) return;
    if (!plain && holdsResultOrLater(this.deps.store.peekHeader(sent.key), outcome)) return;
    throw new CacheError(
      "UNAVAILABLE",
      `primary ${primary} applied the write of key ${quotedKey(sent.key)} counting this owner among its acknowledgements, but this owner could not store it (${whyNotStored(verdict)}); the write may or may not persist`,
    );
  }
}

/** What a client can know of a write whose forward failed without an answer. */
function whetherApplied(delivery: ForwardDelivery): string {
  return delivery === "never" ? "the write was not sent, so not applied" : "the write may or may not have been applied";
}

/** Why a counted forwarder does not hold the primary's result, from its apply verdict. */
function whyNotStored(verdict: ApplyVerdict | undefined): string {
  if (verdict?.kind === "invalid") return `it refused the record: ${verdict.error.message}`;
  if (verdict?.kind === "refused") return `it refused the record (${verdict.reason})`;
  return "it holds another version now";
}
