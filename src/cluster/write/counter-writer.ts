// Counter increments on an owner of the key: normally its primary, or a replica owner that
// promoted itself while the primary was unreachable. Each node adds to its own slot (its node id
// plus boot id, so a restarted node never reuses a slot), one increment at a time per key, and
// pushes the whole counter state, which every owner merges (counter-merge.ts): increments are
// never lost to last-write-wins. The answer goes out once the write consistency has its
// acknowledgements; under the key's lock, so concurrent increments on a primary return
// distinct, consecutive values. An increment with If-Match is a conditional write: only the
// primary takes it (write-path.ts), evaluates the condition under the lock against the record
// the increment adds to (412 changes nothing) and pushes it with its owner list, like every
// conditional write (conditional-writer.ts).
import type { Clock } from "../../core/clock.js";
import { CacheError } from "../../core/errors.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Owners } from "../../ring/index.js";
import { isLiveAt, type VersionedRecord } from "../../store/index.js";
import type { Mutable } from "../../core/mutable.js";
import type { ClientWrite } from "../../transport/index.js";
import type { WriteResult } from "../cache-service.js";
import { encodedCounterStep } from "./counter-step.js";
import type { IdempotencyCache, IdempotentRequest } from "./idempotency-cache.js";
import { runLocked, type LockedPlan, type LockedState, type LockedWriteDeps } from "./locked-write.js";
import type { CoordinateOptions } from "./write-coordinator.js";
import { evaluatePrecondition, preconditionFailed } from "./precondition.js";

export interface CounterWriterDeps extends LockedWriteDeps {
  readonly clock: Clock;
  readonly idempotency: IdempotencyCache;
  /** This node's slot: its node id, "@", its boot id. */
  readonly writerId: string;
  readonly selfId: string;
}

export class CounterWriter {
  constructor(private readonly deps: CounterWriterDeps) {}

  /**
   * Adds `write.delta` to the key's counter on this owner; the result carries the new value.
   * `takenOver`: a replica owner adds it because the primary could not (see readAt).
   */
  incr(write: ClientWrite, owners: Owners, level: ConsistencyLevel, takenOver = false): Promise<WriteResult> {
    // Fingerprinted once per call: the lookups, the add and the answer share it.
    const idem = idempotentRequest(write);
    let remembered: WriteResult | undefined;
    try {
      remembered = this.remembered(write.key, idem);
    } catch (err) {
      // A key reused with another request (409): a rejection, like every other refusal.
      return Promise.reject(err);
    }
    if (remembered !== undefined) return Promise.resolve(remembered);
    const plan: LockedPlan = {
      early: () => this.remembered(write.key, idem),
      readAt: (held) => this.readAt(held, owners, level, write.condition !== undefined, takenOver),
      readMetric: "dist.incr.quorum_reads",
      write: (state) => this.add(write, idem, owners, level, state),
    };
    return runLocked(this.deps, write.key, owners, level, plan);
  }

  private remembered(key: string, idem: IdempotentRequest | undefined): WriteResult | undefined {
    return idem === undefined ? undefined : this.deps.idempotency.get(key, idem);
  }

  /**
   * Without a local record the owners are read at QUORUM first (at the write's consistency for a
   * conditional increment); with one, right after a ring change, at the write's own consistency
   * (none for ONE, so a partition side keeps counting). A replica that takes an increment over
   * always reads the owners at the write's consistency first (except at ONE): its copy is the
   * one that may have missed a PUT or DELETE the primary acknowledged, and an increment added to
   * the old generation would vanish when the new one meets it.
   */
  private readAt(held: VersionedRecord | undefined, owners: Owners, level: ConsistencyLevel, conditional: boolean, takenOver: boolean): ConsistencyLevel | undefined {
    if (owners.ids.length <= 1) return undefined;
    if (takenOver && level !== "one") return level;
    if (held !== undefined && (!this.deps.view.unsettled() || level === "one")) return undefined;
    return held !== undefined || conditional ? level : "quorum";
  }

  /** Adds to this node's slot of the counter it holds (merged with what the owners read gave). */
  private async add(write: ClientWrite, idem: IdempotentRequest | undefined, owners: Owners, level: ConsistencyLevel, { need, held }: LockedState): Promise<WriteResult> {
    const now = this.deps.clock.nowMs();
    const live = isLiveAt(held, now) ? held : undefined;
    const added = idem === undefined ? undefined : this.deps.idempotency.addedValue(write.key, idem);
    // A retry of an increment added here but not acknowledged: push the counter again, no add.
    if (added !== undefined && live !== undefined) return this.pushAgain(write, idem, owners, level, need, live, added);
    // If-Match is evaluated against the record the increment adds to (after the owners were read,
    // it holds their newest state): the ETag a client read from the primary.
    const verdict = evaluatePrecondition(write.condition, live);
    if (!verdict.holds) {
      this.deps.metrics.inc("dist.write.precondition_failed");
      throw preconditionFailed(write.key, verdict.currentEtag);
    }
    const step = encodedCounterStep(held, now, this.deps.writerId, write.delta ?? 1, write.initial ?? 0);
    const value = step.total;
    // The expiry: starting a counter where no item lives takes the call's ttl; converting a live
    // plain integer takes it when the call names one, else keeps the value's; later increments
    // keep the counter's. Kept as it is (absolute), never re-counted from this write's time.
    const keep = live !== undefined && !(step.created && write.ttlMs > 0);
    const set: Mutable<ClientWrite> = { kind: "set", key: write.key, value: step.value, ttlMs: keep ? 0 : write.ttlMs };
    if (keep) set.expiresAtMs = live.expiresAtMs;
    // Under an Idempotency-Key the result rides the pushes: every owner that applies the record
    // remembers it (rememberPushed), so a retry that reaches another owner answers it too.
    if (idem !== undefined) set.idempotent = { idemKey: idem.idemKey, fingerprint: idem.fingerprint, value, appliedBy: this.deps.selfId };
    // A conditional increment is pushed with the owner list: an owner that sees another ring
    // refuses it. One literal without spreads (V8 builds a literal with spreads on a slow path).
    const options: CoordinateOptions = { restamps: false, need, heldVersion: held?.version ?? 0, valueBytes: String(value).length, expectedOwners: write.condition !== undefined ? owners : undefined };
    let r: WriteResult;
    try {
      r = await this.deps.coordinator.coordinate(set, owners, level, options);
    } catch (err) {
      // Added here, short of acknowledgements: its retry must not add again.
      if (idem !== undefined && err instanceof CacheError && err.code === "QUORUM_FAILED") this.deps.idempotency.rememberAdded(write.key, idem, value);
      throw err;
    }
    this.deps.metrics.inc("dist.incr.applied");
    return this.answered(write.key, idem, r, value);
  }

  /**
   * An owner applied `rec`, pushed by the owner that added an increment under an Idempotency-Key:
   * remember the increment's result here as that owner does, so a retry that reaches this node
   * answers it instead of adding again.
   */
  rememberPushed(rec: VersionedRecord): void {
    const stamp = rec.idempotent;
    if (stamp === undefined) return;
    const owners = this.deps.view.ring().ownersOf(rec.key);
    const result: WriteResult = {
      key: rec.key, applied: true, bytes: String(stamp.value).length, owners, version: rec.version, origin: rec.origin, expiresAtMs: rec.expiresAtMs, counterValue: stamp.value, appliedBy: stamp.appliedBy,
    };
    this.deps.idempotency.remember(rec.key, { idemKey: stamp.idemKey, fingerprint: stamp.fingerprint }, result);
  }

  /** Pushes the counter this node holds (its earlier add included) to the owners again, at `level`. */
  private async pushAgain(write: ClientWrite, idem: IdempotentRequest | undefined, owners: Owners, level: ConsistencyLevel, need: number, rec: VersionedRecord, value: number): Promise<WriteResult> {
    const set: ClientWrite = { kind: "set", key: write.key, value: rec.value, ttlMs: 0, expiresAtMs: rec.expiresAtMs };
    const options: CoordinateOptions = { restamps: false, need, heldVersion: rec.version, valueBytes: String(value).length, expectedOwners: undefined };
    return this.answered(write.key, idem, await this.deps.coordinator.coordinate(set, owners, level, options), value);
  }

  /** The answer of an acknowledged increment, remembered under its Idempotency-Key. */
  private answered(key: string, idem: IdempotentRequest | undefined, r: WriteResult, value: number): WriteResult {
    const result: WriteResult = {
      key: r.key, applied: r.applied, bytes: r.bytes, owners: r.owners, version: r.version, origin: r.origin, expiresAtMs: r.expiresAtMs, counterValue: value, appliedBy: this.deps.selfId,
    };
    if (idem !== undefined) this.deps.idempotency.remember(key, idem, result);
    return result;
  }
}

/** An increment's Idempotency-Key (as scoped to its caller) and what it asks; undefined without a key. */
function idempotentRequest(write: ClientWrite): IdempotentRequest | undefined {
  const idemKey = write.idempotencyKey;
  if (idemKey === undefined) return undefined;
  return { idemKey, fingerprint: JSON.stringify([write.delta ?? 1, write.initial ?? 0, write.ttlMs, write.condition ?? null]) };
}
