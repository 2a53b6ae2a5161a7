// The dashboard's client: the SDK's browser build (@hypercache/client/browser), management-only and
// pinned to the listener that served the page. The page's CSP (`default-src 'self'`) allows no
// other origin, so the client gets that one management endpoint, no client endpoint and no
// discovery: it never fails over elsewhere. Errors of every kind become one Problem to show.
import { AllEndpointsFailedError, HypercacheClient, HypercacheError, TransportError } from "@hypercache/client/browser";
import { credentialOptions, type Credential } from "./credential.js";

export type { HypercacheClient };

/** What went wrong, as a view shows it: "message (code)". */
export interface Problem {
  readonly message: string;
  readonly code: string;
}

/** A client of the management listener at `origin` sending `credential`; throws ClientConfigError for an unusable credential. */
export function createClient(origin: string, credential: Credential): HypercacheClient {
  return new HypercacheClient({ managementEndpoints: [origin], ...credentialOptions(credential) });
}

/**
 * The Problem of a failed call: the node's envelope (message and code), NETWORK when the node did
 * not answer, or the error's own message. With one endpoint, "all endpoints failed" is that
 * endpoint's failure.
 */
export function problemOf(err: unknown): Problem {
  const e = err instanceof AllEndpointsFailedError ? (err.last ?? err) : err;
  if (e instanceof HypercacheError) return { message: e.message, code: e.code };
  if (e instanceof TransportError) return { message: "the node did not answer", code: "NETWORK" };
  if (e instanceof Error) return { message: e.message, code: e.name };
  return { message: String(e), code: "ERROR" };
}
