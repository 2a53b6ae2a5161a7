// Bearer tokens already matched against the static table, keyed by the SHA-256 of the token,
// so a client that sends the same token on every request pays one hash and one map lookup
// instead of a digest object and the constant-time walk over every configured token. Only a
// successful match is cached (failures keep going through the chain and the failure limiter);
// entries live TOKEN_CACHE_LIMITS.ttlMs and at most TOKEN_CACHE_LIMITS.entriesMax are held, the
// oldest dropped first. The key is a digest, so a lookup's timing says nothing about a configured token.
// A keep-alive connection that sends the same Authorization header as its last matched request
// is served without hashing at all: the header is compared with the one that connection sent
// last, in constant time (a proxy that pools upstream connections sends several users' headers
// over one socket, so that earlier header may be another user's token), and the entry it points
// to must still be live (TTL, eviction) or the request goes the whole way.
import { hash, timingSafeEqual } from "node:crypto";
import type { Clock } from "../core/clock.js";
import type { Identity } from "./identity.js";

export interface TokenCacheLimits {
  /** How long a matched token is remembered, ms. */
  readonly ttlMs: number;
  /** Tokens remembered at most. */
  readonly entriesMax: number;
}

interface Entry {
  readonly identity: Identity;
  readonly untilMs: number;
}

/** A token's SHA-256 digest (the static table compares digests) and its cache key (the digest in base64). */
export function tokenDigest(token: string): { readonly digest: Buffer; readonly key: string } {
  const digest = hash("sha256", token, "buffer");
  return { digest, key: digest.toString("base64") };
}

/** What one connection sent last with a matched token: the header value's bytes and the cache key. */
interface ConnectionCredential {
  readonly header: Buffer;
  readonly key: string;
}

export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  /** Per connection (its socket), the credential of its last matched request; dropped with the socket. */
  private readonly connections = new WeakMap<object, ConnectionCredential>();

  constructor(private readonly deps: { readonly clock: Clock; readonly limits: TokenCacheLimits }) {}

  get size(): number {
    return this.entries.size;
  }

  /** The identity remembered for `key`, or undefined (never seen, or expired). */
  get(key: string): Identity | undefined {
    return this.live(key);
  }

  /** The identity of `connection`'s last matched request when `header` is that request's Authorization header, still remembered. */
  connectionHit(connection: object, header: string): Identity | undefined {
    const last = this.connections.get(connection);
    // Header values are byte strings (latin1); lengths may differ in time, contents may not.
    if (last === undefined || last.header.length !== header.length) return undefined;
    return timingSafeEqual(Buffer.from(header, "latin1"), last.header) ? this.live(last.key) : undefined;
  }

  /** Notes that `connection` sent `header`, whose token is remembered under `key`. */
  rememberConnection(connection: object, header: string, key: string): void {
    this.connections.set(connection, { header: Buffer.from(header, "latin1"), key });
  }

  private live(key: string): Identity | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.untilMs > this.deps.clock.monotonicMs()) return e.identity;
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers a successful match. */
  set(key: string, identity: Identity): void {
    if (this.entries.size >= this.deps.limits.entriesMax && !this.entries.has(key)) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.delete(key);
    this.entries.set(key, { identity, untilMs: this.deps.clock.monotonicMs() + this.deps.limits.ttlMs });
  }
}
