// OAuth 2.0 client credentials grant (RFC 6749 §4.4) as an AuthProvider: the access token is
// fetched from the issuer's token endpoint, reused until 80% of its lifetime has passed, then
// refreshed by one request however many calls need it (single flight). Calls wait for a token
// only when none is valid: past 80% the refresh runs in the background and the valid token serves
// meanwhile (waiting for it held every call up to OIDC_REQUEST_TIMEOUT_MS while an issuer hung); a
// failed background refresh is tried again OIDC_REFRESH_RETRY_MS later. A 401 from a node drops
// the refused token and fetches a new one for one retry.
import type { AuthProvider } from "./auth.js";
import { encodeBase64 } from "./base64.js";
import { AttemptScope } from "./attempt-scope.js";
import type { FetchLike } from "./fetch-types.js";
import { readBounded } from "./answer-bounds.js";
import type { Clock, Timers } from "./runtime.js";

/** Fraction of a token's lifetime after which it is refreshed. */
export const OIDC_REFRESH_FRACTION = 0.8;
/** Delay before a failed background refresh (past 80% of a valid token's lifetime) is tried again (ms). */
export const OIDC_REFRESH_RETRY_MS = 1_000;
/** Lifetime assumed when the token answer has no `expires_in` (seconds). */
export const OIDC_DEFAULT_LIFETIME_S = 300;
/** Time limit of one token or discovery request (ms), headers and body. */
export const OIDC_REQUEST_TIMEOUT_MS = 10_000;
/** Largest token or discovery answer read (bytes). */
export const OIDC_ANSWER_BYTES_MAX = 1024 * 1024;

export interface OidcClientCredentialsOptions {
  /** Issuer URL; the token endpoint comes from its `/.well-known/openid-configuration`. */
  readonly issuer?: string;
  /** Token endpoint, instead of discovery. */
  readonly tokenUrl?: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Space-separated scopes to request. */
  readonly scope?: string;
  /** `audience` parameter, for issuers that need one. */
  readonly audience?: string;
  /** `client_secret_basic` (default, an Authorization header) or `client_secret_post` (form fields). */
  readonly clientAuth?: "basic" | "post";
}

/** The issuer did not hand out a token. */
export class TokenRequestError extends Error {
  override readonly name = "TokenRequestError";
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface Token {
  readonly header: string;
  readonly refreshAtMs: number;
  readonly expiresAtMs: number;
}

export class OidcClientCredentials implements AuthProvider {
  private token: Token | undefined;
  private inflight: Promise<Token> | undefined;
  private tokenUrl: string | undefined;
  /** No background refresh before this time (ms): the last one failed. */
  private retryAtMs = 0;
  /** Token requests sent so far (for tests and diagnostics). */
  requests = 0;

  constructor(
    private readonly opts: OidcClientCredentialsOptions,
    private readonly deps: { fetch: FetchLike; clock: Clock; timers: Timers },
  ) {
    if (!opts.issuer && !opts.tokenUrl) throw new TypeError("OIDC client credentials need `issuer` or `tokenUrl`");
    this.tokenUrl = opts.tokenUrl;
  }

  async authorization(): Promise<string> {
    const now = this.deps.clock.nowMs();
    const t = this.token;
    if (t && now < t.refreshAtMs) return t.header;
    if (t && now < t.expiresAtMs) {
      // Past 80%: refresh in the background; the still-valid token serves meanwhile.
      if (now >= this.retryAtMs) {
        this.refresh().catch(() => {
          this.retryAtMs = this.deps.clock.nowMs() + OIDC_REFRESH_RETRY_MS;
        });
      }
      return t.header;
    }
    return (await this.refresh()).header;
  }

  async refreshAfterUnauthorized(refused: string | undefined): Promise<boolean> {
    if (this.token && this.token.header === refused) this.token = undefined;
    await this.refresh();
    return true;
  }

  /** Fetches a new token unless a fetch is already under way, in which case it waits for that one. */
  refresh(): Promise<Token> {
    if (!this.inflight) {
      this.inflight = this.fetchToken().then(
        (t) => {
          this.token = t;
          this.inflight = undefined;
          return t;
        },
        (err: unknown) => {
          this.inflight = undefined;
          throw err;
        },
      );
    }
    return this.inflight;
  }

  private async fetchToken(): Promise<Token> {
    const url = this.tokenUrl ?? (this.tokenUrl = await this.discoverTokenUrl());
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (this.opts.scope) form.set("scope", this.opts.scope);
    if (this.opts.audience) form.set("audience", this.opts.audience);
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    if (this.opts.clientAuth === "post") {
      form.set("client_id", this.opts.clientId);
      form.set("client_secret", this.opts.clientSecret);
    } else {
      const pair = `${encodeURIComponent(this.opts.clientId)}:${encodeURIComponent(this.opts.clientSecret)}`;
      headers.authorization = `Basic ${encodeBase64(new TextEncoder().encode(pair))}`;
    }
    this.requests++;
    const started = this.deps.clock.nowMs();
    const body = await this.call(url, { method: "POST", headers, body: form.toString() });
    const b = body as { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    if (typeof b.access_token !== "string" || b.access_token === "") throw new TokenRequestError(`token endpoint ${url} answered without an access_token`, 200);
    if (typeof b.token_type === "string" && b.token_type.toLowerCase() !== "bearer") throw new TokenRequestError(`token endpoint ${url} handed out a ${b.token_type} token, not a bearer token`, 200);
    const lifetimeS = typeof b.expires_in === "number" && b.expires_in > 0 ? b.expires_in : OIDC_DEFAULT_LIFETIME_S;
    return { header: `Bearer ${b.access_token}`, refreshAtMs: started + lifetimeS * 1000 * OIDC_REFRESH_FRACTION, expiresAtMs: started + lifetimeS * 1000 };
  }

  /**
   * The token endpoint of the issuer's discovery document. The document must name the configured
   * issuer (OpenID Connect Discovery 1.0, section 4.3; a trailing slash aside), and an https
   * issuer's token endpoint must be https: the client secret goes there.
   */
  private async discoverTokenUrl(): Promise<string> {
    const issuer = (this.opts.issuer as string).replace(/\/+$/, "");
    const doc = (await this.call(`${issuer}/.well-known/openid-configuration`, { method: "GET", headers: { accept: "application/json" } })) as { issuer?: unknown; token_endpoint?: unknown } | null;
    const named = typeof doc?.issuer === "string" ? doc.issuer.replace(/\/+$/, "") : undefined;
    if (named !== issuer) throw new TokenRequestError(`issuer ${issuer}: its discovery document names ${named === undefined ? "no issuer" : `issuer ${named}`}, not ${issuer}`, 200);
    const url = doc?.token_endpoint;
    if (typeof url !== "string") throw new TokenRequestError(`issuer ${issuer} has no token_endpoint in its discovery document`, 200);
    if (!/^https:/i.test(url) && /^https:/i.test(issuer)) throw new TokenRequestError(`issuer ${issuer} names a token endpoint that is not https (${url}): refusing to send the client secret there`, 200);
    return url;
  }

  /** One request to the issuer: the time limit covers headers and body, the body is bounded. */
  private async call(url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<unknown> {
    const scope = new AttemptScope(this.deps.timers, OIDC_REQUEST_TIMEOUT_MS, undefined);
    try {
      const res = await scope.race(this.deps.fetch(url, { ...init, timeoutMs: OIDC_REQUEST_TIMEOUT_MS }));
      const text = new TextDecoder().decode(
        await scope.race(readBounded(res, OIDC_ANSWER_BYTES_MAX, url, scope)).catch((err: unknown) => {
          if (scope.stopped) void res.body?.cancel(scope.reason).catch(() => undefined);
          throw err;
        }),
      );
      if (res.status !== 200) throw new TokenRequestError(`${init.method} ${url} answered ${res.status}: ${text.slice(0, 256)}`, res.status);
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        throw new TokenRequestError(`${url} answered a body that is not JSON`, res.status, { cause: err });
      }
    } catch (err) {
      if (err instanceof TokenRequestError) throw err;
      throw new TokenRequestError(`${init.method} ${url} failed: ${(err as Error).message}`, undefined, { cause: err });
    } finally {
      scope.end();
    }
  }
}
