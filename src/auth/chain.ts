// The resolution chain: static bearer table, then HTTP Basic, then the mTLS client-certificate
// CN, then the OIDC verifier. The first match wins; a bearer token that matches no static token
// falls through to OIDC, so static and OIDC credentials coexist. A request carrying no
// credential at all gets the anonymous identity only when the policy allows it; a credential
// that matches nothing is always 401, even when a listed client certificate comes with it (the
// certificate identifies a request only when its Authorization header, if any, is valid).
// Failed authentications are counted per client address (fail-limiter.ts): past the limit they
// are 429, and a Basic request that would start a new password check from an address with no
// failure left is refused 429 before bcrypt runs.
// Nothing here logs: auth failures are not logged per request.
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { CacheError } from "../core/errors.js";
import type { Authenticator, AuthMethod } from "./authenticator.js";
import { parseAuthorization, type Credential } from "./authorization-header.js";
import type { BasicVerifier } from "./basic-auth.js";
import type { CertIdentityTable, PeerCertificate } from "./client-cert.js";
import type { AuthFailLimiter } from "./fail-limiter.js";
import { anonymousIdentity, type Identity } from "./identity.js";
import type { StaticTokenTable } from "./static-tokens.js";
import { tokenDigest, type TokenCache } from "./token-cache.js";

/** Verifies bearer tokens the static table does not know (the OIDC verifier). */
export interface BearerVerifier {
  verify(token: string): Promise<Identity>;
}

export interface ChainParts {
  readonly tokens: StaticTokenTable;
  readonly basic: BasicVerifier;
  readonly certs: CertIdentityTable;
  readonly oidc: BearerVerifier | undefined;
  readonly allowAnonymous: boolean;
  readonly allowBasicWithoutTls: boolean;
  /**
   * Static-token matches remembered by token digest, and per connection by its last matched
   * Authorization header; without it every request walks the table.
   */
  readonly tokenCache?: TokenCache;
  /** Counts failures per client address; without it failures are not limited. */
  readonly limiter?: AuthFailLimiter;
  /** Releases what the parts hold (the bcrypt workers); called by Authenticator.close. */
  readonly close?: () => Promise<void>;
}

/** Authentication realm named in WWW-Authenticate challenges. */
export const REALM = "hypercache";

/** A JWT in compact form: three base64url parts. Anything else never reaches the OIDC verifier. */
const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The Authenticator of a chain whose parts are built (see createAuthenticator). */
export function buildChain(parts: ChainParts): Authenticator {
  const { tokens, basic, certs, oidc } = parts;
  const anonymous = anonymousIdentity();
  const methods: AuthMethod[] = [];
  if (tokens.size > 0) methods.push("static_token");
  if (basic.size > 0) methods.push("basic");
  if (certs.size > 0) methods.push("mtls");
  if (oidc) methods.push("oidc");
  const challenge = challengeFor(tokens.size > 0 || oidc !== undefined, basic.size > 0);

  /**
   * Steps after Basic: the certificate, then OIDC, then the verdict. A credential in the
   * Authorization header that did not match is 401 here whatever certificate comes with it: a
   * listed certificate must not turn a wrong password or token into a 200, which would let the
   * guess go uncounted by the failure limiter and make /v1/me an oracle for it.
   */
  const afterBasic = (cred: Credential, cert: PeerCertificate): Identity | Promise<Identity> => {
    const byCert = certs.match(cert);
    if (cred.kind === "bearer" && oidc && COMPACT_JWT.test(cred.token)) {
      // The certificate still comes before OIDC (first match wins), once the token proved valid.
      const verified = oidc.verify(cred.token);
      return byCert ? verified.then(() => byCert) : verified;
    }
    if (cred.kind !== "none") throw unauthorized(refusal(cred, cert));
    if (byCert) return byCert;
    if (!cert.present) {
      if (parts.allowAnonymous) return anonymous;
      throw unauthorized("authentication required");
    }
    throw unauthorized(refusal(cred, cert));
  };

  const cache = parts.tokenCache;
  const matchToken = tokenMatcher(tokens, cache);

  const limiter = parts.limiter;
  /** A failure counted against its client address (keyed by the limiter): the 401 itself, or 429 past the limit. */
  const counted = (address: string | undefined, err: unknown): unknown =>
    limiter !== undefined && err instanceof CacheError && err.code === "UNAUTHORIZED" ? limiter.fail(address, err) : err;

  const resolve = (req: IncomingMessage, address: string | undefined): Identity | Promise<Identity> => {
    const header = req.headers.authorization;
    const known = cache !== undefined && header !== undefined ? cache.connectionHit(req.socket, header) : undefined;
    if (known !== undefined) return known;
    const cred = parseAuthorization(header);
    if (cred.kind === "invalid") throw unauthorized(cred.reason);
    if (cred.kind === "bearer" && tokens.size > 0 && header !== undefined) {
      const byToken = matchToken(cred.token, header, req.socket);
      if (byToken) return byToken;
    }
    const cert = certs.peerCertificate(req.socket);
    if (cred.kind === "basic" && basic.size > 0) {
      if (!parts.allowBasicWithoutTls && (req.socket as TLSSocket).encrypted !== true) {
        throw unauthorized("Basic authentication over plaintext HTTP is refused; use HTTPS");
      }
      const admit = limiter && (() => limiter.admitCheck(address));
      const r = basic.verify(cred.username, cred.password, admit);
      if (r instanceof Promise) return r.then((identity) => identity ?? afterBasic(cred, cert));
      if (r) return r;
    }
    return afterBasic(cred, cert);
  };

  const authenticate = (req: IncomingMessage): Identity | Promise<Identity> => {
    // Read now: a socket that closes during a password or OIDC check reports no address after.
    const address = req.socket.remoteAddress;
    try {
      const r = resolve(req, address);
      return r instanceof Promise
        ? r.catch((err: unknown) => {
            throw counted(address, err);
          })
        : r;
    } catch (err) {
      throw counted(address, err);
    }
  };

  return { enabled: true, methods: Object.freeze(methods), challenge, authenticate, close: parts.close ?? (() => Promise.resolve()) };
}

/**
 * The static table's identity of a bearer token, remembered by digest after a match (and, for
 * the connection that sent it, by its Authorization header: TokenCache.connectionHit).
 */
function tokenMatcher(tokens: StaticTokenTable, cache: TokenCache | undefined): (token: string, header: string, connection: object) => Identity | undefined {
  return (token, header, connection) => {
    if (cache === undefined) return tokens.match(token);
    const { digest, key } = tokenDigest(token);
    let found = cache.get(key);
    if (found === undefined) {
      found = tokens.matchDigest(digest);
      if (found === undefined) return undefined;
      cache.set(key, found);
    }
    cache.rememberConnection(connection, header, key);
    return found;
  };
}

/** WWW-Authenticate: the HTTP schemes a client can use. With neither (mTLS only) Bearer is named. */
export function challengeFor(bearer: boolean, basic: boolean): string {
  const out: string[] = [];
  if (bearer || !basic) out.push(`Bearer realm="${REALM}"`);
  if (basic) out.push(`Basic realm="${REALM}", charset="UTF-8"`);
  return out.join(", ");
}

function refusal(cred: Credential, cert: PeerCertificate): string {
  switch (cred.kind) {
    case "bearer":
      return "bearer token not recognised";
    case "basic":
      return "invalid username or password";
    default:
      return cert.present ? "client certificate not allowed (no cert_identities entry for its subject CN)" : "authentication required";
  }
}

function unauthorized(message: string): CacheError {
  return new CacheError("UNAUTHORIZED", message);
}
