// The OIDC verifier: built at boot from the issuer's discovery document (its `jwks_uri`), it
// checks a bearer JWT's signature, `iss`, `aud`, `exp`, `iat` and `nbf` with jose on the injected
// Clock, then maps the identity claim to the identity id and the scope claim to scopes. Any
// failure is a 401 UNAUTHORIZED whose message names the reason, never the token.
import { errors, jwtVerify, type JWTPayload } from "jose";
import type { Clock } from "../core/clock.js";
import { CacheError } from "../core/errors.js";
import { OIDC_CLOCK_SKEW_S } from "./auth-limits.js";
import { httpFetchJson, type FetchJson } from "./fetch-json.js";
import { ANONYMOUS_ID, makeIdentity, type Identity } from "./identity.js";
import { RemoteKeySet } from "./remote-key-set.js";
import { scopesFromClaim } from "./scope-claim.js";

/** Asymmetric signature algorithms only: `none` and the HMAC family are never accepted. */
export const OIDC_ALGORITHMS: readonly string[] = Object.freeze(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]);

export interface OidcVerifierOptions {
  readonly issuer: string;
  readonly audience: string;
  /** Claim used as the identity id (SERVICE_OIDC_IDENTITY_CLAIM, default `sub`). */
  readonly identityClaim: string;
  /** Claim mapped to scopes (SERVICE_OIDC_SCOPE_CLAIM, default `scope`). */
  readonly scopeClaim: string;
  readonly clock: Clock;
  /** Default: the global fetch with OIDC_FETCH_TIMEOUT_MS and OIDC_FETCH_BYTES_MAX. */
  readonly fetchJson?: FetchJson;
  /** Key-set refetch cooldown, default JWKS_REFETCH_COOLDOWN_MS. */
  readonly refetchCooldownMs?: number;
}

export interface OidcVerifier {
  /** The identity a JWT carries, or a rejected CacheError UNAUTHORIZED. */
  verify(token: string): Promise<Identity>;
  readonly keys: RemoteKeySet;
}

/** The issuer could not be used at boot: server.ts logs `oidc verifier construction failed` and exits 1. */
export class OidcSetupError extends Error {
  override readonly name = "OidcSetupError";
}

/** Fetches the discovery document and the key set; rejects with OidcSetupError. */
export async function createOidcVerifier(opts: OidcVerifierOptions): Promise<OidcVerifier> {
  const fetchJson = opts.fetchJson ?? httpFetchJson();
  const base = opts.issuer.replace(/\/+$/, "");
  const discoveryUrl = `${base}/.well-known/openid-configuration`;
  let doc: unknown;
  try {
    doc = await fetchJson(discoveryUrl);
  } catch (err) {
    throw new OidcSetupError(`discovery document ${discoveryUrl} unavailable: ${reason(err)}`, { cause: err });
  }
  const { issuer, jwksUri } = discoveryFields(doc, discoveryUrl);
  if (issuer.replace(/\/+$/, "") !== base) {
    throw new OidcSetupError(`discovery document ${discoveryUrl} names the issuer ${JSON.stringify(issuer)}, not ${JSON.stringify(opts.issuer)}`);
  }
  const keys = new RemoteKeySet({ url: jwksUri, clock: opts.clock, fetchJson, cooldownMs: opts.refetchCooldownMs });
  try {
    await keys.load();
  } catch (err) {
    throw new OidcSetupError(`key set ${jwksUri} unavailable: ${reason(err)}`, { cause: err });
  }
  const issuers = [...new Set([opts.issuer, issuer])];
  return {
    keys,
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys.getKey, {
          issuer: issuers,
          audience: opts.audience,
          algorithms: [...OIDC_ALGORITHMS],
          requiredClaims: ["exp", "iat"],
          clockTolerance: OIDC_CLOCK_SKEW_S,
          currentDate: new Date(opts.clock.nowMs()),
        }));
      } catch (err) {
        throw unauthorized(rejection(err));
      }
      // jose checks `iat` only against a maximum age; a token from the future is refused here.
      if (typeof payload.iat === "number" && payload.iat > opts.clock.nowMs() / 1000 + OIDC_CLOCK_SKEW_S) {
        throw unauthorized("bearer token issued in the future (iat)");
      }
      const id = payload[opts.identityClaim];
      if (typeof id !== "string" || id === "") throw unauthorized(`bearer token lacks the ${JSON.stringify(opts.identityClaim)} claim`);
      // The anonymous identity is for requests without a credential only.
      if (id === ANONYMOUS_ID) throw unauthorized(`bearer token identity ${JSON.stringify(ANONYMOUS_ID)} is reserved`);
      // `exp` is a number here (a required claim jose checked); accepted until exp plus the skew.
      return Object.freeze({ ...makeIdentity("oidc", id, scopesFromClaim(payload[opts.scopeClaim])), expiresAtMs: ((payload.exp as number) + OIDC_CLOCK_SKEW_S) * 1000 });
    },
  };
}

function discoveryFields(doc: unknown, url: string): { issuer: string; jwksUri: string } {
  const d = (typeof doc === "object" && doc !== null ? doc : {}) as Record<string, unknown>;
  if (typeof d.issuer !== "string" || typeof d.jwks_uri !== "string") {
    throw new OidcSetupError(`discovery document ${url} lacks "issuer" or "jwks_uri"`);
  }
  try {
    new URL(d.jwks_uri);
  } catch {
    throw new OidcSetupError(`discovery document ${url} has an invalid jwks_uri`);
  }
  return { issuer: d.issuer, jwksUri: d.jwks_uri };
}

/** Why jose refused a token, in words fit for a 401 answer. */
function rejection(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "bearer token expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "nbf") return "bearer token not yet valid (nbf)";
    if (err.reason === "missing") return `bearer token lacks the ${JSON.stringify(err.claim)} claim`;
    return `bearer token has an unexpected ${JSON.stringify(err.claim)} claim`;
  }
  if (err instanceof errors.JWKSNoMatchingKey) return "bearer token signed by an unknown key";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "bearer token signature invalid";
  if (err instanceof errors.JOSEAlgNotAllowed) return "bearer token algorithm not allowed";
  return "bearer token invalid";
}

function unauthorized(message: string): CacheError {
  return new CacheError("UNAUTHORIZED", message);
}

function reason(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return err instanceof Error ? `${err.message}${cause}` : String(err);
}
