// Identities, scopes and capabilities. Scopes are flat: write does not imply read.
import { CacheError } from "../core/errors.js";

export const SCOPES = ["read", "write", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export const CAPABILITIES = ["cache.read", "cache.write", "cache.admin"] as const;
export type Capability = (typeof CAPABILITIES)[number];

const CAPABILITY_OF: Readonly<Record<Scope, Capability>> = Object.freeze({
  read: "cache.read",
  write: "cache.write",
  admin: "cache.admin",
});

/** An identity's own rate limit (a policy-file entry's `rate_limit` and `rate_burst`). */
export interface RateLimitOverride {
  /** Requests per second; 0 means unlimited for this identity. */
  readonly ratePerS: number;
  /** Bucket size; twice the rate (at least 1) when absent. */
  readonly burst?: number;
}

/**
 * What proved an identity: a static token, a Basic user, a client certificate, an OIDC token, or
 * no credential at all. Ids are unique within a kind only (an OIDC subject may equal a token's
 * id), so what is kept per identity (rate-limit buckets) is keyed by kind and id.
 */
export type IdentityKind = "token" | "user" | "cert" | "oidc" | "anonymous";

/** Id of the anonymous identity; reserved: no policy entry or OIDC subject may use it. */
export const ANONYMOUS_ID = "anonymous";

/** A resolved caller. */
export interface Identity {
  readonly kind: IdentityKind;
  readonly id: string;
  readonly scopes: readonly Scope[];
  /** Its own rate limit, overriding SERVICE_RATE_LIMIT; absent: the node-wide limit applies. */
  readonly rateLimit?: RateLimitOverride;
  /**
   * When the credential stops being accepted (wall-clock ms; an OIDC token's `exp` plus the
   * tolerated skew); absent: it does not expire. A long-lived answer (the event stream) ends then.
   */
  readonly expiresAtMs?: number;
}

export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}

export function isCapability(value: unknown): value is Capability {
  return typeof value === "string" && (CAPABILITIES as readonly string[]).includes(value);
}

/** Capabilities derived 1:1 from scopes, in the canonical order. */
export function capabilitiesOf(identity: Identity): Capability[] {
  return SCOPES.filter((s) => identity.scopes.includes(s)).map((s) => CAPABILITY_OF[s]);
}

export function hasCapability(identity: Identity, capability: Capability): boolean {
  return capabilitiesOf(identity).includes(capability);
}

/** Builds an identity with its scopes in canonical order and without duplicates. */
export function makeIdentity(kind: IdentityKind, id: string, scopes: Iterable<Scope>, rateLimit?: RateLimitOverride): Identity {
  const set = new Set(scopes);
  const base = { kind, id, scopes: Object.freeze(SCOPES.filter((s) => set.has(s))) };
  return Object.freeze(rateLimit ? { ...base, rateLimit: Object.freeze({ ...rateLimit }) } : base);
}

/** The identity of callers when authentication is off, or of anonymous callers when allowed. */
export function anonymousIdentity(): Identity {
  return makeIdentity("anonymous", ANONYMOUS_ID, SCOPES);
}

/** Throws 403 FORBIDDEN unless the identity holds one of `anyOf`. */
export function requireScope(identity: Identity, ...anyOf: Scope[]): void {
  for (const s of anyOf) if (identity.scopes.includes(s)) return;
  throw new CacheError("FORBIDDEN", `identity ${JSON.stringify(identity.id)} lacks the ${anyOf.join(" or ")} scope`, {
    required: anyOf,
  });
}
