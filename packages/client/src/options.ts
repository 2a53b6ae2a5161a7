// The client's options, their defaults and the checks made before anything is sent.
import { basicAuth, bearerAuth, isPlaintext, noAuth, type AuthProvider, type BasicCredentials, type BearerToken } from "./auth.js";
import { ClientConfigError } from "./errors.js";
import type { FetchLike } from "./fetch-types.js";
import type { ClientEvent } from "./failover-transport.js";
import type { OidcClientCredentialsOptions } from "./oidc-client-credentials.js";
import type { Clock, Runtime, Timers } from "./runtime.js";

/** How often discovery refreshes the endpoints (ms). */
export const DISCOVERY_INTERVAL_MS = 30_000;
/** Keys or items per batch call (the server's limit). */
export const BATCH_CHUNK_ITEMS = 1000;
/**
 * Largest JSON body of one setMany call (bytes): 15 MiB, a margin of 1 MiB below the server's
 * request body limit (SERVICE_MAX_BODY_BYTES, default 16 MiB), which refuses a larger batch as a
 * whole with 413. A cluster with a lower limit needs a lower `batchBodyBytes`.
 */
export const BATCH_BODY_BYTES_MAX = 15 * 1024 * 1024;
/** Batch calls in flight at once for getMany, setMany and deleteMany. */
export const BATCH_CONCURRENCY = 4;
/** Keys per key-browser page requested by `keys()` (the server's ceiling). */
export const KEY_PAGE_LIMIT = 500;

export type Consistency = "one" | "quorum" | "all";

export interface ClientOptions {
  /**
   * Base URLs of client listeners (seeds), for example `https://cache-1:8080`. At least one,
   * unless `managementEndpoints` are given: a client without `endpoints` is management-only (an
   * operator tool, a console served by a node): it talks to its management endpoints and no other
   * origin, discovery is off, and the cache API (get, set, keys, ...) throws ClientConfigError.
   */
  readonly endpoints?: string | readonly string[];
  /**
   * Base URLs of management listeners, for example `https://cache-1:8081`. With discovery on it
   * adds the cluster's own; with one endpoint and discovery off every management call goes there.
   */
  readonly managementEndpoints?: readonly string[];
  /** Bearer token, or a function returning the current one. */
  readonly token?: BearerToken;
  /** HTTP Basic user; refused over `http:` unless `allowInsecureBasic`. */
  readonly basic?: BasicCredentials;
  readonly allowInsecureBasic?: boolean;
  /** OAuth 2.0 client credentials from an OIDC issuer (not in the browser build: ClientConfigError). */
  readonly oidc?: OidcClientCredentialsOptions;
  /** Any other credential scheme. */
  readonly auth?: AuthProvider;
  /**
   * With credentials, use endpoints that discovery finds on origins other than the configured ones
   * (default false: a credentialed client adopts discovered endpoints of its configured origins
   * only, so its credential never reaches a host it was not given). Discovery never adopts an http
   * endpoint when every configured endpoint is https.
   */
  readonly trustDiscoveredEndpoints?: boolean;
  /** Sends requests; default the platform's fetch (`@hypercache/client/node` passes an undici Agent). */
  readonly fetch?: FetchLike;
  /** Time limit of one attempt on one endpoint (ms), headers and whole body; default 10000. */
  readonly timeoutMs?: number;
  /**
   * Largest answer body read (bytes); a larger answer fails the attempt with a BadAnswerError.
   * Default 64 MiB (ANSWER_BYTES_MAX), above the largest answer of a node with default limits;
   * raise it with SERVICE_MAX_BODY_BYTES (batch answers) or SERVICE_MAX_VALUE_BYTES.
   */
  readonly maxAnswerBytes?: number;
  /**
   * Attempts one request makes at most, each on another endpoint (default 8, ATTEMPTS_MAX): with
   * `timeoutMs` it bounds how long a request can take however many endpoints are known.
   */
  readonly maxAttempts?: number;
  /**
   * Endpoint discovery (`GET /v1/cluster/endpoints`): at start (default true), every `intervalMs`
   * (default 30000; 0 disables), and always after every endpoint failed. `false` turns all off.
   */
  readonly discovery?: false | { readonly atStart?: boolean; readonly intervalMs?: number };
  /** Start on a random endpoint (default) or on the first one listed. */
  readonly randomStart?: boolean;
  /** Seed of the random start, for reproducible runs. */
  readonly seed?: number;
  /** Batch calls in flight at once (default 4). */
  readonly batchConcurrency?: number;
  /** Largest JSON body of one setMany call in bytes (default BATCH_BODY_BYTES_MAX, 15 MiB). */
  readonly batchBodyBytes?: number;
  /** Called on failovers and discovery results. Must return quickly and not throw. */
  readonly onEvent?: (event: ClientEvent) => void;
  /** Clock, timers and random source (tests). */
  readonly runtime?: Partial<Runtime>;
}

/** `value` when it is a positive number (a whole one if `whole`) or undefined; a ClientConfigError otherwise. */
export function positiveOption(name: string, value: number | undefined, whole: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (whole && !Number.isSafeInteger(value))) {
    throw new ClientConfigError(`${name}: expected a positive ${whole ? "whole number" : "number"}, got ${String(value)}`);
  }
  return value;
}

/**
 * The seed endpoints as a list: empty for a management-only client, and a ClientConfigError when
 * there is neither a seed nor a management endpoint.
 */
export function seedList(o: Pick<ClientOptions, "endpoints" | "managementEndpoints">): string[] {
  const endpoints = o.endpoints ?? [];
  const list = (typeof endpoints === "string" ? endpoints.split(",") : [...endpoints]).map((s) => s.trim()).filter((s) => s !== "");
  if (list.length === 0 && (o.managementEndpoints ?? []).length === 0) {
    throw new ClientConfigError("no endpoint given: pass at least one base URL of a client listener (endpoints) or of a management listener (managementEndpoints)");
  }
  return list;
}

/**
 * Builds the provider of the `oidc` option (OAuth 2.0 client credentials). The browser build has
 * none: the grant needs a client secret, which a browser page cannot keep (RFC 6749 4.4).
 */
export type OidcProviderFactory = (o: OidcClientCredentialsOptions, deps: { fetch: FetchLike; clock: Clock; timers: Timers }) => AuthProvider;

/** The credential provider the options describe (at most one kind); `seeds` are every endpoint given. */
export function authFromOptions(o: ClientOptions, deps: { fetch: FetchLike; runtime: Runtime; oidc: OidcProviderFactory | undefined }, seeds: readonly string[]): AuthProvider {
  const kinds = [o.token !== undefined, o.basic !== undefined, o.oidc !== undefined, o.auth !== undefined].filter(Boolean).length;
  if (kinds > 1) throw new ClientConfigError("give one of token, basic, oidc or auth");
  if (o.token !== undefined) return bearerAuth(o.token);
  if (o.basic !== undefined) {
    const insecure = seeds.find(isPlaintext);
    if (insecure && !o.allowInsecureBasic) {
      throw new ClientConfigError(`refusing Basic credentials over plain http (${insecure}): use https, or set allowInsecureBasic`);
    }
    return basicAuth(o.basic, o.allowInsecureBasic === true);
  }
  if (o.oidc !== undefined) {
    if (deps.oidc === undefined) throw new ClientConfigError("oidc (client credentials) is not in the browser build: a page cannot keep a client secret; pass token or auth");
    return deps.oidc(o.oidc, { fetch: deps.fetch, clock: deps.runtime.clock, timers: deps.runtime.timers });
  }
  return o.auth ?? noAuth;
}

/**
 * Endpoints that may be adopted from discovery (`configured` are every endpoint the options give):
 * - never an http one when every configured endpoint is https, nor with Basic over TLS only;
 * - with credentials (token, basic, oidc, auth, or the client certificate of the Node client's
 *   `tls.cert`), only the configured origins (scheme, host and port), unless
 *   `trustDiscoveredEndpoints`: a discovery answer must not hand the credential to a host the
 *   caller never named.
 */
export function acceptEndpoint(o: ClientOptions, configured: readonly string[]): (url: string) => boolean {
  const origins = new Set(configured.map((u) => new URL(u).origin));
  const httpsOnly = (configured.length > 0 && !configured.some(isPlaintext)) || (o.basic !== undefined && !o.allowInsecureBasic);
  // The Node client passes its options on whole: its TLS client certificate is a credential too.
  const clientCert = (o as { tls?: { cert?: unknown } }).tls?.cert !== undefined;
  const credentialed = o.token !== undefined || o.basic !== undefined || o.oidc !== undefined || o.auth !== undefined || clientCert;
  const anyOrigin = !credentialed || o.trustDiscoveredEndpoints === true;
  return (url) => !(httpsOnly && isPlaintext(url)) && (anyOrigin || origins.has(new URL(url).origin));
}
