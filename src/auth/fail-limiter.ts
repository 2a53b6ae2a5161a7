// Failed authentications per client address: at most `limitPerS` in a fixed one-second window
// per address. A failure past the limit is answered 429 TOO_MANY_REQUESTS with Retry-After
// instead of 401, and while an address has no failure left in its window (counting the password
// checks it has under way) a request that would need a new password check is refused 429 before
// the check runs, so wrong passwords cannot buy bcrypt time faster than the limit. Addresses are
// tracked in a bounded table, the least recently failed dropped first. Addresses are counted by
// clientAddressKey (an IPv6 one by the prefix SERVICE_AUTH_IPV6_PREFIX sets).
import type { Clock } from "../core/clock.js";
import { CacheError } from "../core/errors.js";
import { clientAddressKey } from "./client-address.js";
import { AUTH_FAIL_ADDRESSES_MAX, AUTH_FAIL_WINDOW_MS, AUTH_SUSPECT_MS } from "./auth-limits.js";

export interface FailLimiterDeps {
  readonly clock: Clock;
  /** Failures per address per window; 0 turns the limiter off. */
  readonly limitPerS: number;
  /** Addresses tracked at most; default AUTH_FAIL_ADDRESSES_MAX. */
  readonly addressesMax?: number;
  /** IPv6 clients are counted by this prefix (clientAddressKey); default 128, each address. */
  readonly ipv6PrefixBits?: number | undefined;
}

interface Window {
  startMs: number;
  failures: number;
  /** Password checks under way for this address (they count against the limit until they end). */
  checks: number;
  /** When this address last failed (monotonic ms), across windows; -Infinity: never. */
  lastFailureMs: number;
}

export class AuthFailLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly addressesMax: number;

  constructor(private readonly deps: FailLimiterDeps) {
    this.addressesMax = deps.addressesMax ?? AUTH_FAIL_ADDRESSES_MAX;
  }

  /** Addresses currently tracked. */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Counts one failed authentication of `address`. Returns the error to answer: `failure`
   * itself within the limit, a 429 TOO_MANY_REQUESTS past it.
   */
  fail(address: string | undefined, failure: CacheError): CacheError {
    if (this.deps.limitPerS <= 0) return failure;
    const w = this.current(this.keyOf(address));
    w.failures++;
    w.lastFailureMs = this.deps.clock.monotonicMs();
    return w.failures > this.deps.limitPerS ? this.tooMany(w) : failure;
  }

  /**
   * Admits a password check for `address`, or throws 429 when its failures and the checks under
   * way use up the limit. Call `endCheck` when the check is over, whatever its outcome.
   */
  beginCheck(address: string | undefined): void {
    if (this.deps.limitPerS <= 0) return;
    const w = this.current(this.keyOf(address));
    if (w.failures + w.checks >= this.deps.limitPerS) throw this.tooMany(w);
    w.checks++;
  }

  /**
   * True when `address` has a password check under way or failed within AUTH_SUSPECT_MS: a new
   * check of a legitimate client is rarely either (concurrent requests with one credential
   * share one check), a password guesser's nearly always. Its check waits behind the others.
   */
  suspect(address: string | undefined): boolean {
    if (this.deps.limitPerS <= 0) return false;
    const w = this.windows.get(this.keyOf(address));
    return w !== undefined && (w.checks > 0 || this.deps.clock.monotonicMs() - w.lastFailureMs < AUTH_SUSPECT_MS);
  }

  /** beginCheck, with what the check needs to know: whether the client is suspect (asked first), and its `end`. */
  admitCheck(address: string | undefined): { readonly suspect: boolean; readonly end: () => void } {
    const suspect = this.suspect(address);
    this.beginCheck(address);
    return { suspect, end: () => this.endCheck(address) };
  }

  endCheck(address: string | undefined): void {
    const w = this.windows.get(this.keyOf(address));
    if (w !== undefined && w.checks > 0) w.checks--;
  }

  private keyOf(address: string | undefined): string {
    return clientAddressKey(address, this.deps.ipv6PrefixBits);
  }

  /** The window of `address` (new, or restarted when a second has passed), moved to the end. */
  private current(address: string): Window {
    const now = this.deps.clock.monotonicMs();
    let w = this.windows.get(address);
    if (w !== undefined) {
      // Most recently used last: the first entry is the one to drop.
      this.windows.delete(address);
      if (now - w.startMs >= AUTH_FAIL_WINDOW_MS) w = { startMs: now, failures: 0, checks: w.checks, lastFailureMs: w.lastFailureMs };
    } else {
      while (this.windows.size >= this.addressesMax) {
        const oldest = this.windows.keys().next();
        if (oldest.done) break;
        this.windows.delete(oldest.value);
      }
      w = { startMs: now, failures: 0, checks: 0, lastFailureMs: Number.NEGATIVE_INFINITY };
    }
    this.windows.set(address, w);
    return w;
  }

  private tooMany(w: Window): CacheError {
    const waitMs = Math.max(0, w.startMs + AUTH_FAIL_WINDOW_MS - this.deps.clock.monotonicMs());
    return new CacheError(
      "TOO_MANY_REQUESTS",
      `too many failed authentications from this address (more than ${this.deps.limitPerS} per second); retry later`,
      { limit_per_second: this.deps.limitPerS },
      { retryAfterS: Math.max(1, Math.ceil(waitMs / 1000)) },
    );
  }
}
