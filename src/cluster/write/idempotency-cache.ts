// Results of incr calls by Idempotency-Key, on every owner of the key: the node that added the
// increment, and the owners that applied its pushed record (CounterWriter.rememberPushed): a
// retry with the same key gets the first result instead of adding again. Bounded in time and
// count (core/limits.ts IDEMPOTENCY_LIMITS): entries expire after ttlMs, and past entriesMax the
// oldest is forgotten. In memory only: a node that restarted since, or that the push has not
// reached yet, adds again. An increment added here but short of its
// acknowledgements (503 QUORUM_FAILED) is remembered as added, with the value it gave: its
// retry pushes the counter again instead of adding again (counter-writer.ts).
// Each result is kept with the request's fingerprint (delta, initial, ttl and If-Match): the same
// key with another request is 409 CONFLICT and changes nothing (it silently answered the first
// result, so `+100` after `+1` under one key was lost). The key reaches this cache already scoped
// to the caller's identity (key-actions.ts scopedIdempotencyKey).
import type { Clock } from "../../core/clock.js";
import { CacheError } from "../../core/errors.js";
import type { WriteResult } from "../cache-service.js";

export interface IdempotencyLimits {
  readonly ttlMs: number;
  readonly entriesMax: number;
}

interface Entry {
  /** The answer given, or (a number) the value an increment added but not acknowledged gave. */
  readonly outcome: WriteResult | number;
  /** What the request asked (counter-writer.ts idempotentRequest). */
  readonly fingerprint: string;
  readonly expiresAtMs: number;
}

/** A request under an Idempotency-Key: the key as scoped, and what the request asked. */
export interface IdempotentRequest {
  readonly idemKey: string;
  readonly fingerprint: string;
}

export class IdempotencyCache {
  /** Insertion order is expiry order (one TTL for all), so the first entries expire first. */
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly deps: { readonly clock: Clock; readonly limits: IdempotencyLimits }) {}

  get size(): number {
    return this.entries.size;
  }

  /** The remembered result of `req` on `key`, when it has not expired; 409 when the key was used by another request. */
  get(key: string, req: IdempotentRequest): WriteResult | undefined {
    const outcome = this.outcomeOf(key, req);
    return typeof outcome === "number" ? undefined : outcome;
  }

  /** The value an increment added but not acknowledged gave (rememberAdded), when it has not expired; 409 as get. */
  addedValue(key: string, req: IdempotentRequest): number | undefined {
    const outcome = this.outcomeOf(key, req);
    return typeof outcome === "number" ? outcome : undefined;
  }

  remember(key: string, req: IdempotentRequest, result: WriteResult): void {
    this.store(key, req, result);
  }

  /** The increment was added here (giving `value`) but not acknowledged: a retry must not add it again. */
  rememberAdded(key: string, req: IdempotentRequest, value: number): void {
    this.store(key, req, value);
  }

  private outcomeOf(key: string, req: IdempotentRequest): WriteResult | number | undefined {
    this.expire();
    const e = this.entries.get(entryKey(key, req.idemKey));
    if (e === undefined) return undefined;
    if (e.fingerprint !== req.fingerprint) {
      throw new CacheError("CONFLICT", "this Idempotency-Key was used with another request (delta, initial, ttl or If-Match) on this key in the last 10 minutes; nothing was changed", {
        reason: "idempotency_key_reused",
      });
    }
    return e.outcome;
  }

  private store(key: string, req: IdempotentRequest, outcome: WriteResult | number): void {
    this.expire();
    const k = entryKey(key, req.idemKey);
    this.entries.delete(k);
    while (this.entries.size >= this.deps.limits.entriesMax) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(k, { outcome, fingerprint: req.fingerprint, expiresAtMs: this.deps.clock.nowMs() + this.deps.limits.ttlMs });
  }

  private expire(): void {
    const now = this.deps.clock.nowMs();
    for (const [k, e] of this.entries) {
      if (e.expiresAtMs > now) return;
      this.entries.delete(k);
    }
  }
}

function entryKey(key: string, idemKey: string): string {
  return `${idemKey.length}:${idemKey}:${key}`;
}
