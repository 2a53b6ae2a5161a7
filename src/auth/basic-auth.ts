// HTTP Basic users of the policy file, with bcrypt password hashes. bcryptjs costs about 120 ms
// of CPU per check (run in a worker pool, bcrypt-pool.ts), so successful verifications are cached
// for a short time, keyed by an HMAC of the credential under a per-instance random key (the cache
// never holds a password or a plain hash of one). Concurrent checks of the same credential share
// one bcrypt run. Whether Basic is allowed on a plaintext connection, and how many checks a client
// address may start, is decided by the chain, not here.
import { createHmac, randomBytes } from "node:crypto";
import { CacheError } from "../core/errors.js";
import bcrypt from "bcryptjs";
import type { Clock } from "../core/clock.js";
import { BASIC_CACHE_ENTRIES_MAX, BASIC_CACHE_TTL_MS } from "./auth-limits.js";
import { makeIdentity, type Identity, type RateLimitOverride, type Scope } from "./identity.js";

export interface BasicUser {
  readonly username: string;
  readonly passwordHash: string;
  readonly scopes: readonly Scope[];
  /** The identity's own rate limit (policy file). */
  readonly rateLimit?: RateLimitOverride;
}

/**
 * Checks a password against a bcrypt hash; injectable so tests can count the checks. May reject
 * with a CacheError (503 when the check cannot run now), which the caller gets as it is.
 */
/** A bcrypt check; `suspect`: its client failed lately (the check may wait behind the others). */
export type PasswordCompare = (password: string, hash: string, suspect?: boolean) => Promise<boolean>;

/** What the caller says of a new password check: whether its client is suspect, and what to run when the check is over. */
export interface CheckAdmission {
  readonly suspect: boolean;
  readonly end: () => void;
}

export interface BasicVerifierDeps {
  readonly clock: Clock;
  readonly compare?: PasswordCompare;
  /** Default BASIC_CACHE_TTL_MS. */
  readonly cacheTtlMs?: number;
  /** Default BASIC_CACHE_ENTRIES_MAX. */
  readonly cacheEntriesMax?: number;
}

/**
 * Longest Basic password accepted, in UTF-8 bytes: bcrypt reads only the first 72 bytes of a
 * password, so a longer one would match with any suffix after its 72nd byte.
 */
export const BASIC_PASSWORD_BYTES_MAX = 72;

/** The decoy when no user is configured (then Basic is not offered at all; cost 10). */
const FALLBACK_DECOY_HASH = "$2b$10$Ty/L3MpufaEsWwPeM4rMbOuH3HigAFzt4IKkt8iCACjRsSn8IZgfu";

/**
 * The hash an unknown user's password is compared against, so that a wrong user name costs the
 * same bcrypt time as a wrong password and the answer time does not reveal which names exist.
 * bcrypt's time depends only on the cost, so the decoy is a configured user's own hash of the
 * most common cost among the users (on a tie, the higher cost): no hash has to be made at
 * start-up (cost 31 would take days), and the check's result is ignored for an unknown name.
 * Users whose cost differs from the decoy's still answer faster or slower than unknown names,
 * which is why docs/auth.md asks operators to hash every password with one cost.
 */
export function decoyHash(hashes: readonly string[]): string {
  const byCost = new Map<number, string>();
  const count = new Map<number, number>();
  for (const h of hashes) {
    const cost = Number(/^\$2[abxy]?\$(\d\d)\$/.exec(h)?.[1]);
    if (!Number.isInteger(cost)) continue;
    if (!byCost.has(cost)) byCost.set(cost, h);
    count.set(cost, (count.get(cost) ?? 0) + 1);
  }
  let best: number | undefined;
  for (const [cost, n] of count) {
    const bestN = best === undefined ? 0 : (count.get(best) ?? 0);
    if (best === undefined || n > bestN || (n === bestN && cost > best)) best = cost;
  }
  return best === undefined ? FALLBACK_DECOY_HASH : (byCost.get(best) as string);
}

interface Cached {
  readonly identity: Identity;
  readonly expiresAtMs: number;
}

export class BasicVerifier {
  private readonly users: ReadonlyMap<string, { readonly hash: string; readonly identity: Identity }>;
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<Identity | undefined>>();
  private readonly hmacKey = randomBytes(32);
  private readonly compare: PasswordCompare;
  private readonly ttlMs: number;
  private readonly entriesMax: number;
  /** See decoyHash. */
  private readonly decoy: string;

  constructor(users: readonly BasicUser[], private readonly deps: BasicVerifierDeps) {
    this.users = new Map(users.map((u) => [u.username, { hash: u.passwordHash, identity: makeIdentity("user", u.username, u.scopes, u.rateLimit) }]));
    this.decoy = decoyHash(users.map((u) => u.passwordHash));
    this.compare = deps.compare ?? ((password, hash) => bcrypt.compare(password, hash));
    this.ttlMs = deps.cacheTtlMs ?? BASIC_CACHE_TTL_MS;
    this.entriesMax = deps.cacheEntriesMax ?? BASIC_CACHE_ENTRIES_MAX;
  }

  get size(): number {
    return this.users.size;
  }

  /** Cached verifications currently held. */
  get cachedEntries(): number {
    return this.cache.size;
  }

  /**
   * The user's identity, or undefined for a wrong user or password, or a password longer than
   * BASIC_PASSWORD_BYTES_MAX (refused without a check). A cached success comes back
   * as a plain value; anything else needs a bcrypt check and comes back as a promise.
   * `beforeCheck` runs before a new bcrypt check starts (not for a cached success, nor when the
   * same credential's check is already under way) and may refuse it by throwing; it says whether
   * the client is suspect, and its `end` runs when that check is over.
   */
  verify(username: string, password: string, beforeCheck?: () => CheckAdmission): Identity | undefined | Promise<Identity | undefined> {
    // Refused for every user name alike, so the fast answer tells nothing about which exist.
    if (Buffer.byteLength(password, "utf8") > BASIC_PASSWORD_BYTES_MAX) return undefined;
    const key = this.cacheKey(username, password);
    const now = this.deps.clock.monotonicMs();
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      if (hit.expiresAtMs > now) return hit.identity;
      this.cache.delete(key);
    }
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    const admission = beforeCheck?.();
    const check = this.check(key, username, password, admission?.suspect === true).finally(() => {
      this.inFlight.delete(key);
      admission?.end();
    });
    this.inFlight.set(key, check);
    return check;
  }

  private async check(key: string, username: string, password: string, suspect: boolean): Promise<Identity | undefined> {
    const user = this.users.get(username);
    let ok = false;
    try {
      // For an unknown name the decoy's result is ignored: `user` is undefined below.
      ok = await this.compare(password, user?.hash ?? this.decoy, suspect);
    } catch (err) {
      // The check could not run (queue full, node stopping): that answer, not a 401.
      if (err instanceof CacheError) throw err;
      ok = false;
    }
    if (!ok || user === undefined) return undefined;
    this.remember(key, user.identity);
    return user.identity;
  }

  private remember(key: string, identity: Identity): void {
    while (this.cache.size >= this.entriesMax) {
      const oldest = this.cache.keys().next();
      if (oldest.done) break;
      this.cache.delete(oldest.value);
    }
    this.cache.set(key, { identity, expiresAtMs: this.deps.clock.monotonicMs() + this.ttlMs });
  }

  private cacheKey(username: string, password: string): string {
    // Length-prefixed so that ("ab", "c") and ("a", "bc") never collide.
    return createHmac("sha256", this.hmacKey).update(`${username.length}:${username}:${password}`, "utf8").digest("base64");
  }
}
