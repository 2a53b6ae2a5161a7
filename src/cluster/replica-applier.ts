// The one apply path for records that arrive from peers. Every receive path goes through it:
// pushed replica sets and removes (which carry hint replays, remote read repairs and
// migrations), the primary's stamped result of a forwarded write, reads that look past a local
// miss, local read repair, and anti-entropy pulls. The rules per path are one table; the checks
// themselves (input, ownership guard, version gate, clock observe, capacity, metrics) live here
// and nowhere else. Counter records merge with the counter held (counter-merge.ts) on every path.
// A touch pushed without its value (applyTouches) becomes a record here, from the item it names,
// and takes the push path's rules from there.
import type { Clock } from "../core/clock.js";
import { isCounterValue } from "../core/counter-state.js";
import { badRequest, type CacheError } from "../core/errors.js";
import { PEER_BATCH_BYTES, PEER_BATCHING } from "../core/limits.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import { sameOwnerList, type HashRing } from "../ring/index.js";
import { Applied, compareVersions, type RecordHeader, type ShardedStore, type VersionedRecord } from "../store/index.js";
import type { OwnerChecks, TouchPush } from "../transport/index.js";
import { mergeCounterRecord } from "./counter-merge.js";
import { isTouchBase, touchedRecord } from "./touched-record.js";
import { peerRecordProblem, touchPushProblem, versionTooFarAhead } from "./peer-input.js";
import type { VersionClock } from "./write/version-clock.js";

/** Where a record comes from. */
export type ApplySource = "push" | "forward-result" | "read-fallback" | "read-repair" | "anti-entropy";

/** What applying one record did. */
export type ApplyVerdict =
  /** Stored (`changed`), or this node already held exactly this version and origin. */
  | { readonly kind: "applied"; readonly changed: boolean }
  /** This node holds a newer version (the record was older or a different origin lost the tie). */
  | { readonly kind: "stale"; readonly version: number; readonly origin: string }
  /** Not stored by rule: this node does not own the key, or it is at capacity and never held it. */
  | { readonly kind: "refused"; readonly reason: "not-owner" | "owners-differ" | "at-capacity" | "over-budget" | "before-reset" }
  /** The record fails the input checks (bad key, origin, version or times). */
  | { readonly kind: "invalid"; readonly error: CacheError };

/**
 * What applying one pushed touch did: an ApplyVerdict, or "base-missing" when this node does not
 * hold the item touched (by version and origin) and stored nothing.
 */
export type TouchVerdict = ApplyVerdict | { readonly kind: "base-missing" };

interface SourceRules {
  /** "full": every input check; "version": only the version bound (the key was checked already). */
  readonly check: "full" | "version";
  /** Refuse keys this node does not own in its ring view (the ownership guard). */
  readonly ownership: boolean;
  /** A node at capacity, or at its byte budget, does not take keys it does not hold (it may have evicted them). */
  readonly capacity: boolean;
  /** Log records skipped as invalid (pulls; a push is refused as a whole instead). */
  readonly logInvalid: boolean;
}

/**
 * The rules of each receive path. A forwarded write's result is applied by a node that owned the
 * key when it forwarded, and its key passed the client checks on arrival. Reads and local repairs
 * apply only on owners (their callers decide that with the same ring).
 */
const RULES: Readonly<Record<ApplySource, SourceRules>> = Object.freeze({
  push: { check: "full", ownership: true, capacity: false, logInvalid: false },
  "forward-result": { check: "version", ownership: false, capacity: false, logInvalid: false },
  "read-fallback": { check: "full", ownership: false, capacity: false, logInvalid: true },
  "read-repair": { check: "full", ownership: false, capacity: false, logInvalid: true },
  "anti-entropy": { check: "full", ownership: true, capacity: true, logInvalid: true },
});

const STORED: ApplyVerdict = Object.freeze({ kind: "applied", changed: true });
const DUPLICATE: ApplyVerdict = Object.freeze({ kind: "applied", changed: false });
const NOT_OWNER: ApplyVerdict = Object.freeze({ kind: "refused", reason: "not-owner" });
const OWNERS_DIFFER: ApplyVerdict = Object.freeze({ kind: "refused", reason: "owners-differ" });
const AT_CAPACITY: ApplyVerdict = Object.freeze({ kind: "refused", reason: "at-capacity" });
const OVER_BUDGET: ApplyVerdict = Object.freeze({ kind: "refused", reason: "over-budget" });
const BEFORE_RESET: ApplyVerdict = Object.freeze({ kind: "refused", reason: "before-reset" });
const BASE_MISSING: TouchVerdict = Object.freeze({ kind: "base-missing" });

export interface ReplicaApplierDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly versions: VersionClock;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly ring: () => HashRing;
  /**
   * Records stamped below this version are refused (ContactGuard: after dropping its data this
   * node takes no record from before it lost contact); 0 = no floor.
   */
  readonly versionFloor: () => number;
}

export class ReplicaApplier {
  constructor(private readonly deps: ReplicaApplierDeps) {}

  /** Applies one record that arrived from a peer by `source`, following that path's rules. */
  apply(rec: VersionedRecord, source: ApplySource): ApplyVerdict {
    const rules = RULES[source];
    const problem = this.problemOf(rec, rules);
    if (problem !== undefined) {
      if (rules.logInvalid) this.deps.logger.warn(LOG.peerRecordSkipped, { key: rec.key.slice(0, 256), origin: rec.origin, source, error: problem.message });
      return { kind: "invalid", error: problem };
    }
    return this.gateAndStore(rec, rules, this.deps.ring());
  }

  /**
   * Applies a pushed batch (replica sets and removes, hint replays, remote repairs, migrations).
   * A batch with an invalid record is refused as a whole with that record's 400, before anything
   * is stored: a peer sending such records is broken, and its batch is not half-applied.
   * `checks` (a primary's conditional writes), record by record: a record whose owner list in
   * this node's ring is not the one given, in that order, is refused ("owners-differ") and stored
   * nowhere; undefined or an empty list: no check.
   */
  applyPushed(records: readonly VersionedRecord[], checks?: OwnerChecks): ApplyVerdict[] {
    const rules = RULES.push;
    for (const rec of records) {
      const problem = this.problemOf(rec, rules);
      if (problem !== undefined) throw problem;
    }
    const ring = this.deps.ring();
    return records.map((rec, i) => {
      const expected = checks?.[i];
      if (expected !== undefined && expected.length > 0 && !sameOwnerList(ring.ownersOf(rec.key).ids, expected)) {
        this.deps.metrics.inc("dist.write.apply_refused");
        return OWNERS_DIFFER;
      }
      return this.gateAndStore(rec, rules, ring);
    });
  }

  /**
   * Applies touches pushed without their values (a primary's touches, each with its owner list).
   * A touch is stored on top of the item it names when this node holds exactly that item, live or
   * expired: the same value with the touch's version, origin and expiry, through the push path's
   * rules. Otherwise nothing is stored: "applied" when this node holds the touch already, "stale"
   * when it holds a newer version, else "base-missing" (the sender pushes the full item). A
   * touch whose owner list differs from this node's is refused ("owners-differ").
   *
   * Bounds: at most PEER_BATCHING.push.items touches (else 400), and a stored touch copies its
   * value out of the store and back, so one call copies at most PEER_BATCH_BYTES of values (the
   * first touch always): the touches past that answer "base-missing" and arrive as full items,
   * under the Set path's caps. A batch with an invalid touch is refused as a whole with its 400,
   * as applyPushed does.
   */
  applyTouches(touches: readonly TouchPush[]): TouchVerdict[] {
    if (touches.length > PEER_BATCHING.push.items) throw badRequest(`a push carries ${touches.length} touches (at most ${PEER_BATCHING.push.items})`);
    const now = this.deps.clock.nowMs();
    for (const t of touches) {
      const problem = touchPushProblem(t, now);
      if (problem !== undefined) throw problem;
    }
    const ring = this.deps.ring();
    let copied = 0;
    return touches.map((t) => {
      const base = this.touchBase(t, ring);
      if ("kind" in base) return base;
      if (copied > 0 && copied + base.valueBytes > PEER_BATCH_BYTES) return BASE_MISSING;
      copied += base.valueBytes;
      return this.applyOnBase(t, ring);
    });
  }

  /**
   * The header of the item `t` names when this node holds it (isTouchBase); else the touch's
   * verdict without it.
   */
  private touchBase(t: TouchPush, ring: HashRing): RecordHeader | TouchVerdict {
    if (!sameOwnerList(ring.ownersOf(t.key).ids, t.owners)) {
      this.deps.metrics.inc("dist.write.apply_refused");
      return OWNERS_DIFFER;
    }
    const held = this.deps.store.peekHeader(t.key);
    if (held === undefined) return BASE_MISSING;
    if (isTouchBase(held, t)) return held;
    const order = compareVersions(held.version, held.origin, t.version, t.origin);
    if (order === 0) return DUPLICATE;
    if (order < 0) return BASE_MISSING;
    this.deps.metrics.inc("dist.version.conflicts");
    return { kind: "stale", version: held.version, origin: held.origin };
  }

  /** Stores the value this node holds for `t.key` (the touch's base) under the touch's version and expiry. */
  private applyOnBase(t: TouchPush, ring: HashRing): TouchVerdict {
    // touchBase() found the item with nothing awaited since; touchedRecord checks it again, so no
    // other value is ever used.
    const rec = touchedRecord(this.deps.store.peek(t.key), t);
    if (rec === undefined) return BASE_MISSING;
    const verdict = this.gateAndStore(rec, RULES.push, ring);
    if (verdict === STORED) this.deps.metrics.inc("dist.replica.touches_in_place");
    return verdict;
  }

  private problemOf(rec: VersionedRecord, rules: SourceRules): CacheError | undefined {
    const now = this.deps.clock.nowMs();
    if (rules.check === "full") return peerRecordProblem(rec, now);
    return versionTooFarAhead(rec.version, now) ? badRequest(`a record's version ${rec.version} is too far ahead of this node's clock`) : undefined;
  }

  private gateAndStore(rec: VersionedRecord, rules: SourceRules, ring: HashRing): ApplyVerdict {
    const { store, metrics } = this.deps;
    if (rules.ownership && !ring.isOwner(rec.key, this.deps.selfId)) {
      metrics.inc("dist.write.apply_refused");
      return NOT_OWNER;
    }
    if (rules.capacity && !rec.tombstone && store.isFullFor(rec) && store.peek(rec.key) === undefined) return AT_CAPACITY;
    if (rec.version < this.deps.versionFloor()) return BEFORE_RESET;
    this.deps.versions.observe(rec.version);
    // Counters merge instead of last-write-wins (counter-merge.ts).
    const merge = isCounterValue(rec.value) ? mergeCounterRecord(rec, store.peek(rec.key), this.deps.selfId) : undefined;
    if (merge?.kind === "held") return DUPLICATE;
    if (merge?.kind === "store") this.deps.versions.observe(merge.record.version);
    const r = store.apply(merge?.kind === "store" ? merge.record : rec);
    if (r.applied === Applied.Stored) return STORED;
    if (r.applied === Applied.Duplicate) return DUPLICATE;
    if (r.applied === Applied.Refused) return OVER_BUDGET;
    metrics.inc("dist.version.conflicts");
    const held = store.peek(rec.key);
    return { kind: "stale", version: held?.version ?? 0, origin: held?.origin ?? "" };
  }
}
