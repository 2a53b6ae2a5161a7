// createAuthenticator(config): the Authenticator the client and management listeners share.
// Authentication applies when any of SERVICE_AUTH_TOKEN, SERVICE_AUTH_CONFIG or
// SERVICE_OIDC_ISSUER is set; otherwise the API is open. With a policy file, the file governs
// the client and management listeners and SERVICE_AUTH_TOKEN is only the peer transport's
// token; without one, SERVICE_AUTH_TOKEN is a single identity `token` holding every scope.
// Async because the OIDC verifier fetches the issuer's discovery document and keys at boot.
import { availableParallelism } from "node:os";
import { systemTimers, type Clock, type Timers } from "../core/clock.js";
import type { OidcConfig } from "../config/index.js";
import { openAuthenticator, type Authenticator } from "./authenticator.js";
import { BCRYPT_QUEUE_PER_WORKER, BCRYPT_RETRY_AFTER_S, BCRYPT_WORKER_IDLE_MS, TOKEN_CACHE_LIMITS } from "./auth-limits.js";
import { BasicVerifier, type PasswordCompare } from "./basic-auth.js";
import { BcryptPool } from "./bcrypt-pool.js";
import { buildChain } from "./chain.js";
import { TokenCache } from "./token-cache.js";
import { CertIdentityTable } from "./client-cert.js";
import type { FetchJson } from "./fetch-json.js";
import { SCOPES } from "./identity.js";
import { AuthFailLimiter } from "./fail-limiter.js";
import { createOidcVerifier } from "./oidc-verifier.js";
import { loadPolicyFile, requireSomeGrant, type Policy } from "./policy-file.js";
import { StaticTokenTable } from "./static-tokens.js";

/** The settings the chain is built from (a subset of Config). */
export interface AuthSettings {
  readonly authToken: string | undefined;
  readonly authConfigPath: string | undefined;
  readonly oidc: OidcConfig | undefined;
  /** Failed authentications per client address per second before 429; 0 = no limit. */
  readonly authFailLimitPerS: number;
  /** IPv6 clients are counted by this prefix (SERVICE_AUTH_IPV6_PREFIX); 128 when absent. */
  readonly authIpv6PrefixBits?: number;
}

export interface AuthDeps {
  readonly clock: Clock;
  /** Schedules the bcrypt workers' idle exit; the process timers when omitted. */
  readonly timers?: Timers;
  /** Reads the policy file; default fs.readFileSync. */
  readonly readFile?: (path: string) => Buffer;
  /** Fetches the OIDC discovery document and key set; default the global fetch. */
  readonly fetchJson?: FetchJson;
  /** bcrypt check; default bcryptjs in a pool of worker threads, one per core. */
  readonly compare?: PasswordCompare;
  /** Worker threads of the bcrypt pool; default os.availableParallelism(). */
  readonly bcryptWorkers?: number;
}

/** Identity id of SERVICE_AUTH_TOKEN when it is the only static credential. */
export const SHARED_TOKEN_ID = "token";

/**
 * Builds the chain. Rejects with PolicyFileError (missing or invalid policy file, or one that
 * grants nothing while OIDC is off) or
 * OidcSetupError (issuer unreachable or unusable); never falls back to an open API.
 */
export async function createAuthenticator(settings: AuthSettings, deps: AuthDeps): Promise<Authenticator> {
  if (!settings.authToken && !settings.authConfigPath && !settings.oidc) return openAuthenticator();
  const policy: Policy = settings.authConfigPath
    ? loadPolicyFile(settings.authConfigPath, deps.readFile)
    : { tokens: settings.authToken ? [{ id: SHARED_TOKEN_ID, token: settings.authToken, scopes: SCOPES }] : [], certIdentities: [], users: [], allowAnonymous: false, allowBasicWithoutTls: false };
  if (settings.authConfigPath && !settings.oidc) requireSomeGrant(policy, settings.authConfigPath);
  const oidc = settings.oidc
    ? await createOidcVerifier({ ...settings.oidc, clock: deps.clock, fetchJson: deps.fetchJson })
    : undefined;
  // The bcrypt workers exist only with Basic users and no injected check; close() ends them.
  const workers = deps.bcryptWorkers ?? availableParallelism();
  const pool = policy.users.length > 0 && !deps.compare ? new BcryptPool({ size: workers, queueMax: workers * BCRYPT_QUEUE_PER_WORKER, retryAfterS: BCRYPT_RETRY_AFTER_S, idleExitMs: BCRYPT_WORKER_IDLE_MS, timers: deps.timers ?? systemTimers }) : undefined;
  return buildChain({
    tokens: new StaticTokenTable(policy.tokens),
    basic: new BasicVerifier(policy.users, { clock: deps.clock, compare: deps.compare ?? (pool && ((password, hash, suspect) => pool.compare(password, hash, suspect))) }),
    certs: new CertIdentityTable(policy.certIdentities),
    oidc,
    allowAnonymous: policy.allowAnonymous,
    allowBasicWithoutTls: policy.allowBasicWithoutTls,
    tokenCache: new TokenCache({ clock: deps.clock, limits: TOKEN_CACHE_LIMITS }),
    limiter: new AuthFailLimiter({ clock: deps.clock, limitPerS: settings.authFailLimitPerS, ipv6PrefixBits: settings.authIpv6PrefixBits }),
    close: () => pool?.close() ?? Promise.resolve(),
  });
}
