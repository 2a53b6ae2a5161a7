// Why an attempt failed, as the failover transport reports it: its own error, a timeout or a
// transport failure; and whether the failed attempt can have applied anything on a node.
import { HypercacheError, TimeoutError, TransportError } from "./errors.js";
import { isTimeout } from "./fetch-types.js";

/** The error of an attempt that threw: its own, a timeout, or a transport failure. */
export function attemptError(err: unknown, timedOut: boolean, timeoutMs: number, endpoint: string): HypercacheError | TransportError {
  if (err instanceof HypercacheError) return err;
  if (timedOut || isTimeout(err)) return new TimeoutError(`no answer within ${timeoutMs} ms`, endpoint, { cause: err });
  return new TransportError(transportMessage(err), endpoint, { cause: err });
}

/** Error codes of a connection that was never made: the request did not reach any server. */
const UNSENT_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** True when the attempt failed before its request could reach a server. */
export function neverSent(error: HypercacheError | TransportError): boolean {
  if (!(error instanceof TransportError)) return false;
  const c = error.cause as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = c?.cause?.code ?? c?.code;
  return typeof code === "string" && UNSENT_CODES.has(code);
}

/**
 * True when the failed attempt applied nothing: it never left, or a node refused it as draining
 * before applying anything (an answer after it is then no replay of an applied request).
 */
export function notApplied(error: HypercacheError | TransportError): boolean {
  return neverSent(error) || (error instanceof HypercacheError && error.code === "DRAINING");
}

/** "fetch failed: ECONNREFUSED" rather than the bare "fetch failed" of undici. */
function transportMessage(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } };
  const detail = e.cause?.code ?? e.cause?.message ?? e.code;
  const message = e.message ?? String(err);
  return detail && !message.includes(detail) ? `${message}: ${detail}` : message;
}
