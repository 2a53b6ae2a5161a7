// The static bearer table: SERVICE_AUTH_TOKEN or the policy file's tokens. A presented token is
// compared with EVERY configured token, always, in constant time (SHA-256 digests compared with
// timingSafeEqual), so neither the position of a match nor a shared prefix shows in the timing.
import { createHash, timingSafeEqual } from "node:crypto";
import { makeIdentity, type Identity, type RateLimitOverride, type Scope } from "./identity.js";

export interface StaticToken {
  readonly id: string;
  readonly token: string;
  readonly scopes: readonly Scope[];
  /** The identity's own rate limit (policy file). */
  readonly rateLimit?: RateLimitOverride;
}

/** Compares two equal-length digests; injectable so tests can count the comparisons. */
export type DigestEqual = (a: Buffer, b: Buffer) => boolean;

interface Entry {
  readonly digest: Buffer;
  readonly identity: Identity;
}

export class StaticTokenTable {
  private readonly entries: readonly Entry[];

  constructor(tokens: readonly StaticToken[], private readonly equal: DigestEqual = timingSafeEqual) {
    this.entries = tokens.map((t) => ({ digest: digest(t.token), identity: makeIdentity("token", t.id, t.scopes, t.rateLimit) }));
  }

  get size(): number {
    return this.entries.length;
  }

  /** The identity of `token`, or undefined. Visits every entry whatever the outcome. */
  match(token: string): Identity | undefined {
    return this.matchDigest(digest(token));
  }

  /** As match, given the token's SHA-256 digest. */
  matchDigest(given: Buffer): Identity | undefined {
    let found: Identity | undefined;
    for (const e of this.entries) {
      const hit = this.equal(given, e.digest);
      found = hit && found === undefined ? e.identity : found;
    }
    return found;
  }
}

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}
