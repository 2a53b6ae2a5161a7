// Coordinates a client write on an owner of the key (its primary, or a replica that promoted
// itself): stamps the version, applies locally through the version gate, fans out to the other
// owners in parallel and answers once the write consistency has its acknowledgements.
//
// An acknowledgement is an owner that stored the write or already held exactly that version and
// origin. An owner that holds a newer version (a primary that restarted empty, a promoted replica
// whose clock is behind) answers "stale" with what it holds: the coordinator stamps again above
// it and pushes again, at most WRITE_RESTAMPS_MAX times, so a 200 means the write is the newest on
// a quorum of owners. A stale answer that arrives after the answer went out gets the same
// treatment in the background, as long as no newer write of the key has reached this node.
//
// A conditional write (the primary evaluated its condition under the key's lock) is pushed with
// the primary's owner list, so an owner that sees another ring refuses it, and is never stamped
// again: a stale answer means the condition was evaluated against a copy that was not the newest,
// so the write only counts the acknowledgements it got, and `onStale` tells the caller. Its
// forwarding owner is counted without a push (`senderApplies`) only when the conditional writer
// found that owner's owner list equal to this node's (conditional-writer.ts). Counter
// increments are not stamped again either (every owner merges them instead).
//
// A lease fill (a set carrying an X-Cache-Lease token) is stored only while its lease is held:
// the check and the local apply happen with nothing awaited in between, and the stored record
// ends the lease (lease/lease-table.ts).
import { CacheError } from "../../core/errors.js";
import { WRITE_RESTAMPS_MAX } from "../../core/limits.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import { Applied, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { ApplyOutcome, ClientWrite } from "../../transport/index.js";
import type { WriteResult } from "../cache-service.js";
import type { ClusterView } from "../cluster-view.js";
import { isCounterValue } from "../../core/counter-state.js";
import { clientBytes, counterBytesOf, holdsCounter } from "../counter-view.js";
import { hasMajority, replicaCount, requiredAcks, waitForQuorum } from "./quorum.js";
import type { ReplicaPusher, TouchBase } from "./replica-pusher.js";
import type { VersionClock } from "./version-clock.js";

export interface CoordinatorDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly versions: VersionClock;
  readonly metrics: Metrics;
  readonly view: ClusterView;
  readonly pusher: ReplicaPusher;
  readonly replication: number;
  /** Refuses (throws) while this node's clock is too far from the cluster's (clock-offsets.ts). */
  readonly clockGuard?: { checkCanStamp(): void };
  /** Throws CONFLICT unless the lease a fill names is held on its key (LeaseTable.checkFill). */
  readonly leases: { checkFill(key: string, token: string): void };
  /**
   * Whether what this node stores counts as an acknowledgement (QuorumVote.acknowledges): its own
   * apply counts only then, as an owner's push answer counts only when that owner's does
   * (ApplyOutcome.abstains): see isAck.
   */
  readonly acknowledges?: () => boolean;
}

/** How a write is coordinated (see the file comment). */
export interface CoordinateOptions {
  /**
   * A forwarding owner that applies the result itself: it is not pushed to and counts as one
   * acknowledgement (it answers its client only after applying).
   */
  readonly senderApplies?: string;
  /** Push with this owner list (a conditional write): an owner that sees another list refuses it. */
  readonly expectedOwners?: Owners;
  /**
   * Stamp again above an owner's stale answer (during the wait, at most WRITE_RESTAMPS_MAX times,
   * and after it): plain writes. Conditional writes and counter increments are never stamped again.
   */
  readonly restamps: boolean;
  /** Called when an owner answered that it holds a newer version, during or after the wait. */
  readonly onStale?: () => void;
  /** The acknowledgements admit() returned, when the caller admitted the write already. */
  readonly need?: number;
  /** The key's version in this node's store, when the caller looked it up with nothing awaited since. */
  readonly heldVersion?: number;
  /** The size clients read of the value written, when the caller knows it (a counter's text). */
  readonly valueBytes?: number;
  /**
   * A touch (with `expectedOwners`): the item touched, by version and origin. Owners that hold it
   * get the new version and expiry without the value (replica-pusher.ts).
   */
  readonly touchBase?: TouchBase;
}

/** An owner's answer to one push: its outcome, or undefined when the push failed (hinted). */
type PushAnswer = ApplyOutcome | undefined;

const ACK: PushAnswer = Object.freeze({ kind: "applied", version: 0, origin: "" });
const ABSTAINING_ACK: PushAnswer = Object.freeze({ kind: "applied", version: 0, origin: "", abstains: true });

/**
 * An acknowledgement is an owner that stored the write and has not lost contact since it last
 * caught up (QuorumVote.acknowledges): a write acknowledged on such copies could be missed by
 * every quorum read. Right after a 4|3 split
 * healed, n7 (back from the minority) had re-added one majority node, saw 4 of 7 and acknowledged
 * a QUORUM delete on n7, n4 and n6, its ring's owners, all back from the minority; n3, which had
 * not re-added them, read the key from n5, n1 and n2 and answered the deleted value 0.2 s later
 * (chaos seed 3131; test/sim/deletes-stay-deleted.test.ts, seed 518).
 */
function isAck(a: PushAnswer): boolean {
  return a?.kind === "applied" && a.abstains !== true;
}

/** Owners that stored the write but abstain (their copies do not count yet). */
function abstainedOf(answers: readonly PushAnswer[]): number {
  return answers.filter((a) => a?.kind === "applied" && a.abstains === true).length;
}

/** The highest version among stale answers, or 0 when none is stale. */
function newestHeld(answers: readonly PushAnswer[]): number {
  let max = 0;
  for (const a of answers) if (a?.kind === "stale" && a.version > max) max = a.version;
  return max;
}

/**
 * True when `write` may replace a counter: a PUT of a plain value over a live counter this node
 * holds, or a DELETE of a key this node holds no live plain value for (other owners may hold a
 * counter it missed: a review undid a QUORUM DELETE through a primary that had none). A PUT over
 * a key held nowhere here keeps the usual stamp: its TTL counts from now, to the millisecond.
 */
function replacesCounter(write: ClientWrite, store: ShardedStore): boolean {
  if (write.kind === "remove") {
    const held = store.peekHeader(write.key);
    return held === undefined || held.tombstone || holdsCounter(store, write.key);
  }
  return write.kind === "set" && !isCounterValue(write.value) && holdsCounter(store, write.key);
}

export class WriteCoordinator {
  constructor(private readonly deps: CoordinatorDeps) {}

  /** Coordinates `write` whose owners are `owners` (this node among them), as `opts` says. */
  async coordinate(write: ClientWrite, owners: Owners, level: ConsistencyLevel, opts: CoordinateOptions): Promise<WriteResult> {
    const { selfId } = this.deps;
    const { senderApplies, expectedOwners, onStale } = opts;
    const need = opts.need ?? this.admit(level);
    if (write.leaseToken !== undefined) this.deps.leases.checkFill(write.key, write.leaseToken);
    const restampsMax = opts.restamps ? WRITE_RESTAMPS_MAX : 0;
    const sender = senderApplies !== undefined && senderApplies !== selfId && owners.ids.includes(senderApplies) ? senderApplies : undefined;
    const others = owners.ids.filter((id) => id !== selfId && id !== sender);
    const own = this.deps.acknowledges === undefined || this.deps.acknowledges() ? ACK : ABSTAINING_ACK;
    const inHand = sender === undefined ? [own] : [own, ACK];
    let first: WriteResult | undefined;
    let floor = 0;
    const overCounter = replacesCounter(write, this.deps.store);
    for (let attempt = 0; ; attempt++) {
      // The caller's lookup of the key holds for the first stamp only (later ones follow this apply).
      const held = attempt === 0 && opts.heldVersion !== undefined ? opts.heldVersion : this.deps.store.versionOf(write.key);
      const rec = this.stamp(write, Math.max(held, floor), overCounter);
      // `bytes` is the size clients read (a counter's decimal text), looked at before the delete.
      const removedCounterBytes = first === undefined && rec.tombstone ? counterBytesOf(this.deps.store, write.key) : undefined;
      const local = this.deps.store.apply(rec);
      if (local.applied === Applied.Refused) throw this.overBudget(attempt);
      // The first local apply says what the write replaced; later stamps only replace it.
      first ??= {
        key: write.key,
        applied: local.applied === Applied.Stored && (rec.tombstone ? local.previousLive : true),
        bytes: rec.tombstone ? (local.previousLive ? (removedCounterBytes ?? local.previousBytes) : 0) : (opts.valueBytes ?? clientBytes(rec.value)),
        owners,
        version: 0,
        origin: "",
        expiresAtMs: 0,
      };
      const result: WriteResult =
        sender === undefined
          ? { ...first, version: rec.version, origin: rec.origin, expiresAtMs: rec.expiresAtMs }
          : { ...first, version: rec.version, origin: rec.origin, expiresAtMs: rec.expiresAtMs, senderCounted: true };
      // No other owner to push to (one node, or replication 1): the local apply is the answer.
      if (others.length === 0 && inHand.filter(isAck).length >= need) return result;
      const wait = await waitForQuorum(
        others.map((id) => this.pushTo(id, rec, expectedOwners, opts.touchBase)),
        need,
        inHand,
        isAck,
      );
      const newer = newestHeld(wait.answers);
      if (newer === 0 || attempt >= restampsMax) {
        if (onStale !== undefined) this.watchStale(wait.answers, wait.late, onStale);
        if (wait.reached) {
          if (opts.restamps) void wait.late.then((late) => this.restampLate(write, owners, rec, newestHeld(late), overCounter));
          return result;
        }
        this.deps.metrics.inc("dist.write.quorum_failures");
        const acks = wait.answers.filter(isAck).length;
        const abstained = abstainedOf(wait.answers);
        if (abstained > 0) this.deps.metrics.inc("dist.write.abstained_failures");
        const why = abstained > 0 ? ` (${abstained} more stored it but have not caught up since they lost contact, so they do not count yet)` : "";
        throw new CacheError("QUORUM_FAILED", `write reached ${acks} of the ${need} owners its ${level} consistency needs${why}; it may be applied where it reached`, {
          consistency: level,
          acknowledged: acks,
          required: need,
          ...(abstained > 0 ? { abstained } : {}),
        });
      }
      // An owner holds a newer version: stamp above it and push again.
      this.deps.metrics.inc("dist.write.restamps");
      floor = newer;
    }
  }

  /**
   * Checks that this node may coordinate a write at `level` now (its clock is close enough to the
   * cluster's, and QUORUM/ALL see a majority) and returns the acknowledgements it needs.
   */
  admit(level: ConsistencyLevel): number {
    this.deps.clockGuard?.checkCanStamp();
    const known = this.deps.view.knownCount();
    if (level !== "one") this.checkMajority(level, known);
    return requiredAcks(level, replicaCount(this.deps.replication, known));
  }

  /** Tells a conditional write's caller about stale answers, those after the wait included. */
  private watchStale(answers: readonly PushAnswer[], late: Promise<PushAnswer[]>, onStale: () => void): void {
    if (newestHeld(answers) > 0) onStale();
    else void late.then((rest) => (newestHeld(rest) > 0 ? onStale() : undefined));
  }

  /** The answer to a write the local store refused: it is over its byte budget by more than it admits, and evicting. */
  private overBudget(attempt: number): CacheError {
    const { store } = this.deps;
    const where = attempt === 0 ? "nothing was stored" : "an earlier stamp of it may be applied where it reached";
    return new CacheError(
      "UNAVAILABLE",
      `this node's store is over its byte budget (SERVICE_MAX_DATA_BYTES) by more than it admits while it evicts; ${where}; retry`,
      { reason: "store_over_budget", data_bytes: store.dataBytes, max_data_bytes: store.maxDataBytes, retry_after_s: 1 },
      { retryAfterS: 1 },
    );
  }

  /** QUORUM and ALL writes need this node to see a strict majority of the known nodes. */
  private checkMajority(level: ConsistencyLevel, known: number): void {
    const notDead = this.deps.view.notDeadCount();
    if (hasMajority(notDead, known)) return;
    this.deps.metrics.inc("dist.write.quorum_failures");
    throw new CacheError("QUORUM_FAILED", `write needs ${level} but this node sees only ${notDead} of ${known} known nodes: it is on the minority side`, {
      consistency: level,
      visible_nodes: notDead,
      known_nodes: known,
    });
  }

  /**
   * A stale answer that came after the client got its answer: the acknowledged write is stamped
   * above the newer version and pushed to every other owner (failures become hints), unless a
   * newer write of the key has reached this node meanwhile.
   */
  private restampLate(write: ClientWrite, owners: Owners, acked: VersionedRecord, newer: number, overCounter: boolean): void {
    if (newer === 0) return;
    const current = this.deps.store.peek(write.key);
    if (!current || current.version !== acked.version || current.origin !== acked.origin) return;
    this.deps.metrics.inc("dist.write.restamps");
    const rec = this.stamp(write, Math.max(current.version, newer), overCounter);
    // Refused (the store is evicting): the other owners' newer copy stands, as after a lost race.
    if (this.deps.store.apply(rec).applied === Applied.Refused) return;
    for (const id of owners.ids) if (id !== this.deps.selfId) void this.pushTo(id, rec);
  }

  private pushTo(id: string, rec: VersionedRecord, expectedOwners?: Owners, touchBase?: TouchBase): Promise<PushAnswer> {
    const peer = this.deps.view.peer(id);
    return peer ? this.deps.pusher.push(peer, rec, expectedOwners, touchBase) : Promise.resolve(undefined);
  }

  /**
   * The versioned record of a client write, above `floor` (at least the key's version here);
   * `overCounter` (it replaces a counter): in a later millisecond than now (VersionClock.nextInLaterMs).
   */
  private stamp(write: ClientWrite, floor: number, overCounter = false): VersionedRecord {
    const version = overCounter ? this.deps.versions.nextInLaterMs(floor) : this.deps.versions.next(floor);
    const tombstone = write.kind === "remove";
    // The write's time is its version's time (the hybrid clock runs a little ahead of the wall
    // clock after a burst of writes): last_updated shows it and the TTL counts from it, so
    // expires_at - last_updated is exactly the TTL asked for.
    const writtenAtMs = Math.floor(version / 1000);
    const rec: VersionedRecord = {
      key: write.key,
      value: tombstone ? "" : write.value,
      version,
      origin: this.deps.selfId,
      lastUpdatedMs: writtenAtMs,
      expiresAtMs: tombstone ? 0 : (write.expiresAtMs ?? (write.ttlMs > 0 ? writtenAtMs + write.ttlMs : 0)),
      tombstone,
    };
    // An increment under an Idempotency-Key: its result rides the pushes (Entry.idempotent).
    return write.idempotent === undefined ? rec : { ...rec, idempotent: write.idempotent };
  }
}
