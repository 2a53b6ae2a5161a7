// The identity provider's signing keys (JWKS), cached. A token signed with a key id the cache
// does not know triggers one refetch, at most once per JWKS_REFETCH_COOLDOWN_MS (key rotation
// without letting garbage tokens hammer the provider); a key set older than JWKS_MAX_AGE_MS is
// refreshed on the next verification, keeping the old keys if the provider is unreachable.
// jose's createRemoteJWKSet does much the same but reads Date.now(): this one runs on the
// injected Clock, so the windows are testable.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import type { Clock } from "../core/clock.js";
import { JWKS_MAX_AGE_MS, JWKS_REFETCH_COOLDOWN_MS } from "./auth-limits.js";
import type { FetchJson } from "./fetch-json.js";

export interface RemoteKeySetDeps {
  readonly url: string;
  readonly clock: Clock;
  readonly fetchJson: FetchJson;
  /** Default JWKS_REFETCH_COOLDOWN_MS. */
  readonly cooldownMs?: number;
  /** Default JWKS_MAX_AGE_MS. */
  readonly maxAgeMs?: number;
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

export class RemoteKeySet {
  private local: LocalKeySet | undefined;
  private fetchedAtMs = Number.NEGATIVE_INFINITY;
  private lastRefetchMs = Number.NEGATIVE_INFINITY;
  private nextStaleRefreshMs = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  private readonly cooldownMs: number;
  private readonly maxAgeMs: number;
  /** Successful and failed fetches of the key set, for tests and diagnostics. */
  fetches = 0;

  constructor(private readonly deps: RemoteKeySetDeps) {
    this.cooldownMs = deps.cooldownMs ?? JWKS_REFETCH_COOLDOWN_MS;
    this.maxAgeMs = deps.maxAgeMs ?? JWKS_MAX_AGE_MS;
  }

  /** Fetches the key set now; rejects when the provider cannot be reached or answers garbage. */
  load(): Promise<void> {
    this.loading ??= this.fetch().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** The key resolver handed to jwtVerify. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    await this.refreshIfStale();
    if (this.local === undefined) throw new errors.JWKSNoMatchingKey();
    try {
      return await this.local(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || !this.mayRefetch()) throw err;
      this.lastRefetchMs = this.deps.clock.monotonicMs();
      await this.load().catch(() => undefined);
      return this.local(header, token);
    }
  };

  private mayRefetch(): boolean {
    return this.deps.clock.monotonicMs() - this.lastRefetchMs >= this.cooldownMs;
  }

  private async refreshIfStale(): Promise<void> {
    const now = this.deps.clock.monotonicMs();
    if (this.local !== undefined && now - this.fetchedAtMs < this.maxAgeMs) return;
    if (now < this.nextStaleRefreshMs) return;
    // A provider that is down is not asked again on every request: old keys keep working.
    this.nextStaleRefreshMs = now + this.cooldownMs;
    await this.load().catch(() => undefined);
  }

  private async fetch(): Promise<void> {
    this.fetches++;
    const body = await this.deps.fetchJson(this.deps.url);
    if (typeof body !== "object" || body === null || !Array.isArray((body as { keys?: unknown }).keys)) {
      throw new Error(`${this.deps.url} is not a JSON Web Key Set`);
    }
    this.local = createLocalJWKSet(body as JSONWebKeySet);
    this.fetchedAtMs = this.deps.clock.monotonicMs();
  }
}
