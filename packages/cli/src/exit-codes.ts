// Exit codes of the hypercache command, and the one stderr line that explains a failure.
import { AllEndpointsFailedError, BadAnswerError, ClientConfigError, HypercacheError, NotFoundError, TokenRequestError, TransportError } from "@hypercache/client/node";

export const EXIT = Object.freeze({
  OK: 0,
  /** The server refused or failed the request (any error answer other than below). */
  SERVER_ERROR: 1,
  /** Bad arguments, flags or configuration; a local file, or stdout, that cannot be read or written. */
  USAGE: 2,
  /** A key that does not exist: `get` of a missing key, `del` of a key that did not exist. */
  NOT_FOUND: 3,
  /** 401 or 403, or no token from the OIDC issuer. */
  AUTH: 4,
  ALL_ENDPOINTS_FAILED: 5,
  /** Part of the work failed: `load` with bad lines or failed items, `keys` with partial nodes. */
  PARTIAL: 6,
  /** A condition did not hold (412: --if-match, --if-none-match): nothing was changed. */
  PRECONDITION: 7,
  INTERRUPTED: 130,
});

/**
 * The key a command needed does not exist: the SDK answered "missing" (`get` gave undefined, which
 * it does only for hypercache's own key miss, values.ts isMissingKey). The only error that exits 3.
 */
export class KeyMissingError extends NotFoundError {
  override readonly name = "KeyMissingError";
}

/** A usage error found by the CLI itself (not by commander). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The operator interrupted the command (Ctrl-C where the terminal delivers no SIGINT: the password prompt). */
export class InterruptedError extends Error {
  override readonly name = "InterruptedError";
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof InterruptedError) return EXIT.INTERRUPTED;
  if (err instanceof HypercacheError) {
    // A 429 is a limit (failed logins from this address, or a rate limit), not a refused
    // credential: the server refused the request (1).
    if (err.status === 401 || err.status === 403) return EXIT.AUTH;
    // Any other 404 (a proxy's page, a wrong path prefix, an unknown route) is not a missing key.
    if (err instanceof KeyMissingError) return EXIT.NOT_FOUND;
    if (err.code === "PRECONDITION_FAILED") return EXIT.PRECONDITION;
    return EXIT.SERVER_ERROR;
  }
  if (err instanceof AllEndpointsFailedError) return EXIT.ALL_ENDPOINTS_FAILED;
  if (err instanceof TokenRequestError) return EXIT.AUTH;
  if (err instanceof UsageError || err instanceof ClientConfigError || err instanceof TypeError) return EXIT.USAGE;
  return EXIT.SERVER_ERROR;
}

const HINTS: Readonly<Record<string, string>> = Object.freeze({
  BAD_REQUEST: "check the key, --ttl and the other arguments",
  UNAUTHORIZED: "check --token / HYPERCACHE_TOKEN, or --user with HYPERCACHE_PASSWORD",
  FORBIDDEN: "the identity lacks the scope this command needs (see `hypercache me`)",
  NOT_FOUND: "no such key",
  CONFLICT: "the key holds a value that is not a counter, the counter would pass ±(2^53 − 1), or the --idempotency-key was used with another request",
  PRECONDITION_FAILED: "the item changed (or exists, or does not): nothing was changed; read it again for its current ETag",
  PAYLOAD_TOO_LARGE: "the value or batch is over the server's size limit",
  UNSUPPORTED_MEDIA_TYPE: "the server expected another content type",
  TOO_MANY_REQUESTS: "a rate limit, or too many failed logins from this address: wait for Retry-After (and check the credentials)",
  NOT_IMPLEMENTED: "this node does not implement the route",
  DRAINING: "the node named in the message is draining (the one called, or the key's owner it forwarded to): retry in a moment, its keys move to other owners",
  QUORUM_FAILED: "too few owners acknowledged: retry, or use --consistency one",
  UNAVAILABLE: "no owner of the key could be reached: check the cluster with `hypercache members`",
  INTERNAL: "the node failed: see its log",
  UNKNOWN: "the answer was not from hypercache-server (a proxy?): check --endpoints",
});

/** One failed attempt in words: status and code, with the reason when the answer was not hypercache's. */
function attemptText(e: HypercacheError | TransportError): string {
  if (!(e instanceof HypercacheError)) return e.message;
  return e instanceof BadAnswerError ? `${e.status} ${e.code} (${e.message.slice(e.message.indexOf(": ") + 2)})` : `${e.status} ${e.code}`;
}

/** One line: what failed, with status, code, endpoint and a hint. */
export function errorLine(err: unknown): string {
  if (err instanceof HypercacheError) {
    return `hypercache: ${err.status} ${err.code} from ${err.endpoint}: ${err.message} (hint: ${HINTS[err.code] ?? "see the server's log"})`;
  }
  if (err instanceof AllEndpointsFailedError) {
    const list = err.attempts.map((a) => `${a.endpoint} ${attemptText(a.error)}`).join("; ");
    return `hypercache: all endpoints failed: ${list || "no endpoint"} (hint: check --endpoints / HYPERCACHE_ENDPOINTS and that the nodes run)`;
  }
  if (err instanceof TransportError) return `hypercache: ${err.endpoint}: ${err.message}`;
  if (err instanceof TokenRequestError) return `hypercache: ${err.message} (hint: check --oidc-issuer, --client-id and HYPERCACHE_CLIENT_SECRET)`;
  if (err instanceof UsageError || err instanceof ClientConfigError || err instanceof TypeError) return `hypercache: ${err.message} (hint: see hypercache --help)`;
  return `hypercache: ${(err as Error)?.message ?? String(err)}`;
}
