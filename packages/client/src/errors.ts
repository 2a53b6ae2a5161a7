// Typed errors: one class per error code of the server's envelope `{error, code, details?}`,
// transport failures, and the error a request ends with when every endpoint failed.
import type { components } from "./gen/client.js";

/** The codes the server puts in its error envelope. */
export type ErrorCode = components["schemas"]["ErrorCode"];

/** Longest slice of a non-JSON error body kept on the error (characters). */
export const ERROR_BODY_CHARS_MAX = 256;

/** An error answer of a node: HTTP status, envelope code, message, details and who answered. */
export class HypercacheError extends Error {
  override readonly name: string = "HypercacheError";
  /** HTTP status of the answer. */
  readonly status: number;
  /** Envelope code; `"UNKNOWN"` when the body was not the envelope (a proxy's page, for example). */
  readonly code: ErrorCode | "UNKNOWN";
  /** Structured context from the envelope, such as the limit that was exceeded. */
  readonly details: Record<string, unknown> | undefined;
  /** Base URL of the endpoint that answered. */
  readonly endpoint: string;
  /** The body when it was not the JSON envelope, cut to {@link ERROR_BODY_CHARS_MAX} characters. */
  readonly body: string | undefined;

  constructor(init: { status: number; code: ErrorCode | "UNKNOWN"; message: string; details?: Record<string, unknown> | undefined; endpoint: string; body?: string | undefined }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.endpoint = init.endpoint;
    this.body = init.body;
  }
}

export class BadRequestError extends HypercacheError { override readonly name = "BadRequestError"; }
export class UnauthorizedError extends HypercacheError { override readonly name = "UnauthorizedError"; }
export class ForbiddenError extends HypercacheError { override readonly name = "ForbiddenError"; }
export class NotFoundError extends HypercacheError { override readonly name: string = "NotFoundError"; }
/** 404 LEASE_HELD: a lease read missed while another caller holds the key's lease (Retry-After says when it ends at the latest). */
export class LeaseHeldError extends NotFoundError { override readonly name = "LeaseHeldError"; }
/** 409: the write conflicts with the key's state (counters and leases; see the OpenAPI document). */
export class ConflictError extends HypercacheError { override readonly name = "ConflictError"; }
/** 412: an If-Match / If-None-Match condition did not hold; `details.current_etag` names the current ETag (absent when there is no item). Nothing was changed. */
export class PreconditionFailedError extends HypercacheError {
  override readonly name = "PreconditionFailedError";
  /** The current item's ETag (`details.current_etag`); undefined when the key holds no live item. */
  get currentEtag(): string | undefined {
    const tag = this.details?.current_etag;
    return typeof tag === "string" ? tag : undefined;
  }
}
export class PayloadTooLargeError extends HypercacheError { override readonly name = "PayloadTooLargeError"; }
export class UnsupportedMediaTypeError extends HypercacheError { override readonly name = "UnsupportedMediaTypeError"; }
/** 429: too many failed authentications from this address (or a rate limit); see `retryAfterMs`-style Retry-After. */
export class TooManyRequestsError extends HypercacheError { override readonly name = "TooManyRequestsError"; }
export class NotImplementedError extends HypercacheError { override readonly name = "NotImplementedError"; }
export class DrainingError extends HypercacheError { override readonly name = "DrainingError"; }
export class QuorumFailedError extends HypercacheError { override readonly name = "QuorumFailedError"; }
export class UnavailableError extends HypercacheError { override readonly name = "UnavailableError"; }
export class InternalError extends HypercacheError { override readonly name = "InternalError"; }

/**
 * An answer no hypercache node sends: a body that is not the JSON the route answers, a value that
 * is not base64, a page that loops, an answer over the size bound, a redirect. Code "UNKNOWN";
 * `status` is the answer's.
 */
export class BadAnswerError extends HypercacheError { override readonly name = "BadAnswerError"; }

/** The BadAnswerError of an answer of `endpoint` with `status`. */
export function badAnswer(status: number, endpoint: string, message: string, options?: { cause?: unknown }): BadAnswerError {
  const e = new BadAnswerError({ status, code: "UNKNOWN", message: `${endpoint} answered ${status}: ${message}`, endpoint });
  if (options?.cause !== undefined) Object.defineProperty(e, "cause", { value: options.cause, configurable: true, writable: true });
  return e;
}

type ErrorClass = new (init: ConstructorParameters<typeof HypercacheError>[0]) => HypercacheError;

/** The class of each envelope code; the exhaustive record makes a new code a compile error here. */
export const ERROR_CLASSES: Readonly<Record<ErrorCode, ErrorClass>> = Object.freeze({
  BAD_REQUEST: BadRequestError,
  UNAUTHORIZED: UnauthorizedError,
  FORBIDDEN: ForbiddenError,
  NOT_FOUND: NotFoundError,
  LEASE_HELD: LeaseHeldError,
  CONFLICT: ConflictError,
  PRECONDITION_FAILED: PreconditionFailedError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaTypeError,
  TOO_MANY_REQUESTS: TooManyRequestsError,
  NOT_IMPLEMENTED: NotImplementedError,
  DRAINING: DrainingError,
  QUORUM_FAILED: QuorumFailedError,
  UNAVAILABLE: UnavailableError,
  INTERNAL: InternalError,
});

/** HEAD answers carry no body: their class comes from the status alone. */
const CODE_OF_BODYLESS_STATUS: Readonly<Record<number, ErrorCode>> = Object.freeze({
  400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT", 412: "PRECONDITION_FAILED", 413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE", 429: "TOO_MANY_REQUESTS", 500: "INTERNAL", 501: "NOT_IMPLEMENTED", 503: "UNAVAILABLE",
});

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_CLASSES, code);
}

/**
 * The error for an error answer. `body` is the answer's text (empty for HEAD); the envelope gives
 * the class; an empty body (HEAD) takes the class of its status; anything else is kept, cut to
 * 256 characters, on a plain {@link HypercacheError} with code "UNKNOWN".
 */
export function errorFromAnswer(status: number, body: string, endpoint: string): HypercacheError {
  let envelope: unknown;
  try {
    envelope = body === "" ? undefined : JSON.parse(body);
  } catch {
    envelope = undefined;
  }
  if (envelope !== null && typeof envelope === "object") {
    const e = envelope as { error?: unknown; code?: unknown; details?: unknown };
    if (isErrorCode(e.code)) {
      const details = e.details !== null && typeof e.details === "object" ? (e.details as Record<string, unknown>) : undefined;
      const message = typeof e.error === "string" ? e.error : e.code;
      return new ERROR_CLASSES[e.code]({ status, code: e.code, message, details, endpoint });
    }
  }
  const byStatus = body === "" ? CODE_OF_BODYLESS_STATUS[status] : undefined;
  if (byStatus) return new ERROR_CLASSES[byStatus]({ status, code: byStatus, message: `HTTP ${status} (${byStatus})`, endpoint });
  const cut = body.slice(0, ERROR_BODY_CHARS_MAX);
  return new HypercacheError({ status, code: "UNKNOWN", message: cut === "" ? `HTTP ${status}` : `HTTP ${status}: ${cut}`, endpoint, body: cut });
}

/** The request never got an HTTP answer: connection refused or reset, DNS, TLS, timeout. */
export class TransportError extends Error {
  override readonly name: string = "TransportError";
  readonly endpoint: string;
  constructor(message: string, endpoint: string, options?: { cause?: unknown }) {
    super(message, options);
    this.endpoint = endpoint;
  }
}

/** No answer within the attempt's time limit. */
export class TimeoutError extends TransportError {
  override readonly name = "TimeoutError";
}

/** One failed attempt of a request. */
export interface FailedAttempt {
  readonly endpoint: string;
  /** The 5xx answer as a typed error, or the transport failure. */
  readonly error: HypercacheError | TransportError;
  readonly durationMs: number;
}

/** Every endpoint was tried (after a discovery refresh) and none gave a usable answer. */
export class AllEndpointsFailedError extends Error {
  override readonly name = "AllEndpointsFailedError";
  readonly attempts: readonly FailedAttempt[];
  constructor(attempts: readonly FailedAttempt[]) {
    const list = attempts.map((a) => `${a.endpoint}: ${describe(a.error)}`).join("; ");
    super(attempts.length === 0 ? "no endpoint to try" : `all endpoints failed (${attempts.length} attempts): ${list}`);
    this.attempts = attempts;
  }

  /** The error of the last attempt (what the caller most likely wants to show), if any. */
  get last(): HypercacheError | TransportError | undefined {
    return this.attempts.at(-1)?.error;
  }
}

function describe(e: HypercacheError | TransportError): string {
  return e instanceof HypercacheError ? `${e.status} ${e.code} ${e.message}` : e.message;
}

/** A client option is wrong (for example Basic credentials over `http:`). */
export class ClientConfigError extends Error {
  override readonly name: string = "ClientConfigError";
}

/** The client was closed: calls made after close(), and calls and watches in flight when it was closed, end with it. */
export class ClientClosedError extends ClientConfigError {
  override readonly name = "ClientClosedError";
  constructor(message = "the client is closed") {
    super(message);
  }
}
