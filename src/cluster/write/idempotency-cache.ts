// Results of incr calls by Idempotency-Key, on the node that applied them: a retry with the same
// key gets the first result instead of adding again. Bounded in time and count (core/limits.ts
// IDEMPOTENCY_LIMITS): entries expire after ttlMs, and past entriesMax the oldest is forgotten.
// Not replicated: a retry that lands on another owner (one that promoted itself while the
// primary was unreachable) applies again. An increment added here but short of its
// acknowledgements (503 QUORUM_FAILED) is remembered as added, with the value it gave: its
// retry pushes the counter again instead of adding again (counter-writer.ts).
import type { Clock } from "../../core/clock.js";
import type { WriteResult } from "../cache-service.js";

export interface IdempotencyLimits {
  readonly ttlMs: number;
  readonly entriesMax: number;
}

interface Entry {
  /** The answer given, or (a number) the value an increment added but not acknowledged gave. */
  readonly outcome: WriteResult | number;
  readonly expiresAtMs: number;
}

export class IdempotencyCache {
  /** Insertion order is expiry order (one TTL for all), so the first entries expire first. */
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly deps: { readonly clock: Clock; readonly limits: IdempotencyLimits }) {}

  get size(): number {
    return this.entries.size;
  }

  /** The remembered result of `idemKey` on `key`, when it has not expired. */
  get(key: string, idemKey: string): WriteResult | undefined {
    this.expire();
    const outcome = this.entries.get(entryKey(key, idemKey))?.outcome;
    return typeof outcome === "number" ? undefined : outcome;
  }

  /** The value an increment added but not acknowledged gave (rememberAdded), when it has not expired. */
  addedValue(key: string, idemKey: string): number | undefined {
    this.expire();
    const outcome = this.entries.get(entryKey(key, idemKey))?.outcome;
    return typeof outcome === "number" ? outcome : undefined;
  }

  remember(key: string, idemKey: string, result: WriteResult): void {
    this.store(key, idemKey, result);
  }

  /** The increment was added here (giving `value`) but not acknowledged: a retry must not add it again. */
  rememberAdded(key: string, idemKey: string, value: number): void {
    this.store(key, idemKey, value);
  }

  private store(key: string, idemKey: string, outcome: WriteResult | number): void {
    this.expire();
    const k = entryKey(key, idemKey);
    this.entries.delete(k);
    while (this.entries.size >= this.deps.limits.entriesMax) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(k, { outcome, expiresAtMs: this.deps.clock.nowMs() + this.deps.limits.ttlMs });
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
