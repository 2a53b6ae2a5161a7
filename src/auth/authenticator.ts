// Resolves the caller of a request. The chain of credential checks lives behind this interface;
// with authentication off every caller is the anonymous identity.
import type { IncomingMessage } from "node:http";
import { anonymousIdentity, type Identity } from "./identity.js";

/** A credential kind the chain accepts, in chain order. */
export type AuthMethod = "static_token" | "basic" | "mtls" | "oidc";

export interface Authenticator {
  /** False when the API is open (no authentication configured). */
  readonly enabled: boolean;
  /** The credential kinds configured, in chain order (empty when open). */
  readonly methods: readonly AuthMethod[];
  /**
   * The caller's identity, or a CacheError UNAUTHORIZED when no credential matches. Returns a
   * plain value when no I/O is needed, so the hot path does not pay for a promise.
   */
  authenticate(req: IncomingMessage): Identity | Promise<Identity>;
  /** Value of the WWW-Authenticate header sent with 401 answers. */
  readonly challenge: string;
  /** Releases the authenticator's resources (the bcrypt worker pool); call once at stop. */
  close(): Promise<void>;
}

/** No authentication: every caller is `anonymous` with every scope. */
export function openAuthenticator(): Authenticator {
  const anonymous = anonymousIdentity();
  return { enabled: false, methods: [], authenticate: () => anonymous, challenge: "", close: () => Promise.resolve() };
}
