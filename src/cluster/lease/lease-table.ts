// Stampede leases of the keys this node is the primary of, held in memory only (never
// replicated): the first lease read that misses a key gets the key's lease (a token) and loads
// the value; the misses after it wait for the value, bounded in time and in number, or answer
// LEASE_HELD. A lease ends when its time runs out, when a write of the key is stored here (its
// own fill, or any other write; not an old copy that had expired before the lease was granted),
// when a delete of the key is stored here, or when its holder releases it (its load failed). A
// fill whose lease has ended stores nothing (CONFLICT). Waiters get the value the moment a write
// of the key is stored; when a lease ends without a value (it expired, was released, or a delete
// ended it) the first waiter takes over a new lease and the others wait on that one.
//
// Time comes from the injected clock and timers: one timer per lease (its end) and one per waiter
// (its deadline), cancelled when they are no longer needed; nothing polls, nothing blocks.
import type { Clock, TimerHandle, Timers } from "../../core/clock.js";
import { CacheError } from "../../core/errors.js";
import type { Random } from "../../core/random.js";
import type { Metrics } from "../../observability/index.js";
import { isLiveAt, type VersionedRecord } from "../../store/index.js";
import type { LeaseOutcome } from "../../transport/index.js";
import { quotedKey } from "../../core/key-check.js";

export interface LeaseTableLimits {
  /** Leases this node holds at most; past it a miss gets no lease ("none"). */
  readonly leasesMax: number;
  /** Misses waiting on one key at most; past it a miss is "held" at once. */
  readonly waitersPerKey: number;
}

export interface LeaseTableDeps {
  readonly clock: Clock;
  readonly timers: Timers;
  /** Draws the random part of tokens. */
  readonly random: Random;
  readonly metrics: Metrics;
  readonly limits: LeaseTableLimits;
  /** This node's live record of a key: undefined when it is absent, deleted or expired here. */
  readonly liveRecord: (key: string) => VersionedRecord | undefined;
}

/** A miss waiting for the value of a key whose lease another caller holds. */
interface Waiter {
  /** The lease it asked for, should it take the lease over. */
  readonly leaseMs: number;
  readonly resolve: (answer: LeaseOutcome) => void;
  /** Its deadline (set right after it joins). */
  timer: TimerHandle | undefined;
}

interface Lease {
  readonly token: string;
  /** When it was granted, on the wall clock (record expiry times are wall-clock times). */
  readonly grantedAtMs: number;
  /** When the lease ends, on the monotonic clock. */
  readonly endsAtMs: number;
  readonly timer: TimerHandle;
  /** In arrival order: the first takes the lease over when it ends without a value. */
  readonly waiters: Set<Waiter>;
  /** Its fill passed checkFill (the next stored write of the key is that fill). */
  filling: boolean;
}

const NONE: LeaseOutcome = Object.freeze({ kind: "none" });

/**
 * The CONFLICT of a fill or a release whose lease is not held (expired, ended by another write or
 * a delete, or never granted here); `outcome` says what the request did not do.
 */
export function leaseNotHeld(key: string, outcome: "nothing was stored" | "nothing to release" = "nothing was stored"): CacheError {
  return new CacheError(
    "CONFLICT",
    `the lease named by X-Cache-Lease is not held for key ${quotedKey(key)} (it expired, another write or a delete of the key ended it, or the key's primary changed); ${outcome}`,
  );
}

export class LeaseTable {
  private readonly leases = new Map<string, Lease>();
  private tokens = 0;

  constructor(private readonly deps: LeaseTableDeps) {}

  /** Leases held now. */
  get size(): number {
    return this.leases.size;
  }

  /** Misses waiting on `key` now. */
  waitersOn(key: string): number {
    return this.leases.get(key)?.waiters.size ?? 0;
  }

  /**
   * A lease read of `key` that missed: "hit" when this node holds a live record of it, "granted"
   * (a new lease of `leaseMs`) when nobody holds its lease, else a wait of up to `waitMs` for the
   * value ("hit"), for the lease to end unfilled (then this caller takes it over: "granted"), or
   * "held". "none" when this node holds `leasesMax` leases. Answers without a promise unless it
   * waits.
   */
  acquire(key: string, leaseMs: number, waitMs: number): LeaseOutcome | Promise<LeaseOutcome> {
    const record = this.deps.liveRecord(key);
    if (record !== undefined) return { kind: "hit", record };
    const lease = this.current(key);
    if (lease === undefined) {
      if (this.leases.size >= this.deps.limits.leasesMax) {
        this.deps.metrics.inc("dist.lease.refused");
        return NONE;
      }
      return this.grant(key, leaseMs, new Set());
    }
    if (waitMs <= 0 || lease.waiters.size >= this.deps.limits.waitersPerKey) return this.held(lease);
    return new Promise<LeaseOutcome>((resolve) => {
      const waiter: Waiter = { leaseMs, resolve, timer: undefined };
      lease.waiters.add(waiter);
      waiter.timer = this.deps.timers.after(waitMs, () => this.waitEnded(key, waiter));
    });
  }

  /**
   * Checks that `token` names the lease held on `key` now; throws CONFLICT (leaseNotHeld)
   * otherwise. The caller stores the fill right after, with nothing awaited in between: that
   * stored write ends the lease and hands its value to the waiters.
   */
  checkFill(key: string, token: string): void {
    const lease = this.current(key);
    if (lease === undefined || lease.token !== token) throw leaseNotHeld(key);
    lease.filling = true;
  }

  /**
   * Ends the lease `token` names on `key`, as its holder asks when it will not fill it (its load
   * failed): the first waiter takes over a new lease at once, as when a lease runs out. False, and
   * nothing changes, when no lease of that token is held here (filled, expired, ended by a write
   * or delete, or never granted here) or its fill is being stored.
   */
  release(key: string, token: string): boolean {
    const lease = this.current(key);
    if (lease === undefined || lease.token !== token || lease.filling) return false;
    this.end(key, lease, "dist.lease.released");
    return true;
  }

  /**
   * Observer of every record this node's store stored (called after the store committed it):
   * a write ends the key's lease and answers its waiters with the record; a delete (or a record
   * that expired since the lease was granted) ends the lease and the first waiter takes over a new
   * one. A copy of a value that had expired before the lease was granted (a restarted node
   * catching up, an anti-entropy round or a late hint bringing an old write) shows readers
   * nothing new: the lease stays with its holder.
   */
  stored(rec: VersionedRecord): void {
    if (this.leases.size === 0) return;
    const key = rec.key;
    const lease = this.leases.get(key);
    if (lease === undefined) return;
    const expiredBeforeGrant = !rec.tombstone && rec.expiresAtMs !== 0 && rec.expiresAtMs <= lease.grantedAtMs;
    if (!isLiveAt(rec, this.deps.clock.nowMs())) {
      // An old copy, expired before the lease was granted, changes nothing. Only a record that is
      // not live now is judged so: after the wall clock stepped back, a live write can expire
      // before the grant time, and it must still end the lease.
      if (expiredBeforeGrant) return;
      this.end(key, lease, "dist.lease.invalidated");
      return;
    }
    this.leases.delete(key);
    lease.timer.cancel();
    this.deps.metrics.inc(lease.filling ? "dist.lease.filled" : "dist.lease.invalidated");
    const hit: LeaseOutcome = { kind: "hit", record: rec };
    for (const w of lease.waiters) {
      w.timer?.cancel();
      w.resolve(hit);
    }
  }

  /** Ends every lease and answers every waiter "none" (the node stops). */
  stop(): void {
    for (const lease of this.leases.values()) {
      lease.timer.cancel();
      for (const w of lease.waiters) {
        w.timer?.cancel();
        w.resolve(NONE);
      }
    }
    this.leases.clear();
  }

  /** The lease held on `key` now; one whose time ran out (its timer not run yet) is ended first. */
  private current(key: string): Lease | undefined {
    const lease = this.leases.get(key);
    if (lease === undefined || this.deps.clock.monotonicMs() < lease.endsAtMs) return lease;
    this.end(key, lease, "dist.lease.expired");
    return this.leases.get(key);
  }

  private grant(key: string, leaseMs: number, waiters: Set<Waiter>): LeaseOutcome {
    const token = this.newToken();
    const lease: Lease = {
      token,
      grantedAtMs: this.deps.clock.nowMs(),
      endsAtMs: this.deps.clock.monotonicMs() + leaseMs,
      timer: this.deps.timers.after(leaseMs, () => {
        if (this.leases.get(key) === lease) this.end(key, lease, "dist.lease.expired");
      }),
      waiters,
      filling: false,
    };
    this.leases.set(key, lease);
    this.deps.metrics.inc("dist.lease.granted");
    return { kind: "granted", token };
  }

  /** Ends `lease` without a value: its first waiter takes over a new lease, the others wait on it. */
  private end(key: string, lease: Lease, metric: "dist.lease.expired" | "dist.lease.invalidated" | "dist.lease.released"): void {
    this.leases.delete(key);
    lease.timer.cancel();
    this.deps.metrics.inc(metric);
    const first = lease.waiters.values().next();
    if (first.done) return;
    const next = first.value;
    lease.waiters.delete(next);
    next.timer?.cancel();
    next.resolve(this.grant(key, next.leaseMs, lease.waiters));
  }

  /**
   * A waiter's time is up: it leaves the key's lease and answers "held". (A waiter's timer is
   * cancelled whenever it is answered, and waiters move with the lease a waiter takes over, so
   * it is always among the key's waiters here; "none" only keeps a promise from ever hanging.)
   */
  private waitEnded(key: string, waiter: Waiter): void {
    const lease = this.leases.get(key);
    waiter.resolve(lease !== undefined && lease.waiters.delete(waiter) ? this.held(lease) : NONE);
  }

  private held(lease: Lease): LeaseOutcome {
    this.deps.metrics.inc("dist.lease.held");
    return { kind: "held", retryAfterMs: Math.max(0, lease.endsAtMs - this.deps.clock.monotonicMs()) };
  }

  /** A token no other lease of this process had: a sequence number and 52 random bits, base 36. */
  private newToken(): string {
    this.tokens++;
    return `${this.tokens.toString(36)}.${Math.floor(this.deps.random.next() * 2 ** 52).toString(36)}`;
  }
}
