// Rate limits per identity on this node: a token bucket per identity kind and id (anonymous
// callers: per client address, an IPv6 one by SERVICE_AUTH_IPV6_PREFIX: client-address.ts), SERVICE_RATE_LIMIT requests per second with SERVICE_RATE_BURST at once, or
// the identity's own `rate_limit` from the policy file (0: unlimited). With the cluster scope the
// rate and the burst are divided by the alive members, so the cluster as a whole allows about the
// rate. A request that finds its bucket empty is refused 429 TOO_MANY_REQUESTS with Retry-After
// and RateLimit-* headers. At most RATE_LIMIT_BUCKETS_MAX buckets are kept: past it a full bucket
// (which carries no information) goes first, else the oldest.
import type { IncomingMessage } from "node:http";
import type { Clock } from "../core/clock.js";
import type { Authenticator } from "./authenticator.js";
import { clientAddressKey } from "./client-address.js";
import { CacheError } from "../core/errors.js";
import type { Identity } from "./identity.js";
import { charge, fullBucket, isFull, take, type Bucket } from "./token-bucket.js";

/** Buckets kept at most (identities and anonymous addresses together). */
export const RATE_LIMIT_BUCKETS_MAX = 100_000;
/** Oldest buckets looked at for a full one before the oldest is dropped. */
const EVICTION_SCAN = 64;

/** The node-wide rate limit (SERVICE_RATE_LIMIT and friends). */
export interface RateLimitSettings {
  readonly ratePerS: number;
  readonly burst: number;
  readonly scope: "node" | "cluster";
}

export interface RateLimiterDeps {
  readonly clock: Clock;
  /** The node-wide limit; undefined when SERVICE_RATE_LIMIT is 0 (policy entries may still set one). */
  readonly settings: RateLimitSettings | undefined;
  /** Alive members, this node included (the cluster scope divides by it). */
  readonly aliveMembers: () => number;
  readonly bucketsMax?: number;
  /** Anonymous IPv6 callers are counted by this prefix (SERVICE_AUTH_IPV6_PREFIX); default 128. */
  readonly ipv6PrefixBits?: number;
}

/** A bucket with the limit it was last used with (for eviction). */
interface Slot extends Bucket {
  ratePerS: number;
  burst: number;
}

export class RateLimiter {
  private readonly byId = new Map<string, Slot>();
  private readonly byAddress = new Map<string, Slot>();
  private readonly bucketsMax: number;
  private readonly scope: "node" | "cluster";
  /** The limit resolve() found for the current request (kept here so nothing is allocated). */
  private rate = 0;
  private burst = 0;

  constructor(private readonly deps: RateLimiterDeps) {
    this.bucketsMax = deps.bucketsMax ?? RATE_LIMIT_BUCKETS_MAX;
    this.scope = deps.settings?.scope ?? "node";
  }

  /** Buckets kept now. */
  get size(): number {
    return this.byId.size + this.byAddress.size;
  }

  /** Admits one request of `identity` (from `address`) costing `cost`, or throws 429. */
  admit(identity: Identity, address: string | undefined, cost = 1): void {
    if (!this.resolve(identity)) return;
    const now = this.deps.clock.monotonicMs();
    const waitMs = take(this.slot(identity, address, now), cost, now, this.rate, this.burst);
    if (waitMs > 0) throw tooMany(identity, this.rate, this.burst, waitMs);
  }

  /**
   * Takes `cost` more from the bucket of an admitted request (the rest of a batch's cost, known
   * once its body is read); the bucket may go into debt. Never throws.
   */
  chargeMore(identity: Identity, address: string | undefined, cost: number): void {
    if (cost <= 0 || !this.resolve(identity)) return;
    const now = this.deps.clock.monotonicMs();
    charge(this.slot(identity, address, now), cost, now, this.rate, this.burst);
  }

  /** Sets rate and burst for `identity`; false when it is not limited. */
  private resolve(identity: Identity): boolean {
    const own = identity.rateLimit;
    const global = this.deps.settings;
    if (own !== undefined) {
      this.rate = own.ratePerS;
      this.burst = own.burst ?? Math.max(1, 2 * own.ratePerS);
    } else if (global !== undefined) {
      this.rate = global.ratePerS;
      this.burst = global.burst;
    } else return false;
    if (this.rate <= 0) return false;
    if (this.scope === "cluster") {
      const n = Math.max(1, this.deps.aliveMembers());
      this.rate /= n;
      this.burst = Math.max(1, this.burst / n);
    }
    return true;
  }

  /**
   * The bucket of `identity`: per client address for the anonymous identity, else per kind and
   * id, so that identities of two kinds with one id (an OIDC subject equal to a static token's
   * id) never share a budget.
   */
  private slot(identity: Identity, address: string | undefined, now: number): Slot {
    const anonymous = identity.kind === "anonymous";
    const map = anonymous ? this.byAddress : this.byId;
    const key = anonymous ? clientAddressKey(address, this.deps.ipv6PrefixBits) : `${identity.kind}:${identity.id}`;
    let s = map.get(key);
    if (s === undefined) {
      if (this.size >= this.bucketsMax) this.evictOne(now);
      s = { ...fullBucket(this.burst, now), ratePerS: this.rate, burst: this.burst };
      map.set(key, s);
    } else {
      s.ratePerS = this.rate;
      s.burst = this.burst;
    }
    return s;
  }

  /** Drops one bucket from the larger table: a full one among the oldest, else the oldest. */
  private evictOne(now: number): void {
    const map = this.byAddress.size >= this.byId.size ? this.byAddress : this.byId;
    let looked = 0;
    let oldest: string | undefined;
    for (const [key, s] of map) {
      oldest ??= key;
      if (isFull(s, now, s.ratePerS, s.burst)) {
        map.delete(key);
        return;
      }
      if (++looked >= EVICTION_SCAN) break;
    }
    if (oldest !== undefined) map.delete(oldest);
  }
}

function tooMany(identity: Identity, ratePerS: number, burst: number, waitMs: number): CacheError {
  const retryAfterS = Math.max(1, Math.ceil(waitMs / 1000));
  const who = identity.kind === "anonymous" ? "this client address" : `identity ${JSON.stringify(identity.id)}`;
  return new CacheError(
    "TOO_MANY_REQUESTS",
    `rate limit exceeded for ${who}: at most ${round(ratePerS)} requests per second (${round(burst)} at once); retry later`,
    { limit_per_second: round(ratePerS), burst: round(burst), retry_after_ms: Math.ceil(waitMs) },
    { retryAfterS, headers: { "RateLimit-Limit": String(Math.floor(burst)), "RateLimit-Remaining": "0", "RateLimit-Reset": String(retryAfterS) } },
  );
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * The authenticator with the rate limit applied right after authentication (and so before any
 * body is read): every authenticated request costs 1. Routes that need no authentication (probes,
 * documents) never call it and are never limited; peers use the dist listener, which has its own
 * gate.
 */
export function rateLimited(auth: Authenticator, limiter: RateLimiter): Authenticator {
  const admit = (identity: Identity, req: IncomingMessage): Identity => {
    limiter.admit(identity, req.socket.remoteAddress);
    return identity;
  };
  return {
    enabled: auth.enabled,
    methods: auth.methods,
    get challenge() {
      return auth.challenge;
    },
    authenticate(req) {
      const r = auth.authenticate(req);
      return r instanceof Promise ? r.then((identity) => admit(identity, req)) : admit(r, req);
    },
    close: () => auth.close(),
  };
}
