// One error type for the whole service. Its code decides the HTTP status; the envelope
// `{ error, code, details? }` is written from it by the HTTP layer.

/** Every error code the service answers with. */
export type ErrorCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "LEASE_HELD"
  | "CONFLICT"
  | "PRECONDITION_FAILED"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_MANY_REQUESTS"
  | "NOT_IMPLEMENTED"
  | "DRAINING"
  | "QUORUM_FAILED"
  | "UNAVAILABLE"
  | "INTERNAL";

const STATUS: Readonly<Record<ErrorCode, number>> = Object.freeze({
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  LEASE_HELD: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  DRAINING: 503,
  QUORUM_FAILED: 503,
  UNAVAILABLE: 503,
});

/** The only code-to-status map. */
export function httpStatusFor(code: ErrorCode): number {
  return STATUS[code];
}

/** True for a string that names one of the service's error codes. */
export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(STATUS, value);
}

/** An error the service reports to its caller. */
export class CacheError extends Error {
  override readonly name = "CacheError";
  /** Seconds the caller should wait before retrying, sent as `Retry-After` (429 and some 503s). */
  readonly retryAfterS: number | undefined;
  /** More response headers the answer carries (the RateLimit-* headers of a rate-limit 429). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown; retryAfterS?: number; headers?: Readonly<Record<string, string>> },
  ) {
    super(message, options);
    this.retryAfterS = options?.retryAfterS;
    this.headers = options?.headers;
  }

  get status(): number {
    return httpStatusFor(this.code);
  }
}

/**
 * The only place a stray exception becomes INTERNAL. The message of an unknown error is not
 * exposed to callers; the original stays available as `cause` for the log.
 */
export function toCacheError(err: unknown): CacheError {
  if (err instanceof CacheError) return err;
  return new CacheError("INTERNAL", "internal error", undefined, { cause: err });
}

/** Shorthand for a 400. */
export function badRequest(message: string, details?: Record<string, unknown>): CacheError {
  return new CacheError("BAD_REQUEST", message, details);
}

/** Causes followed at most by hasCause (a cycle or a very deep chain ends the walk). */
const CAUSE_DEPTH_MAX = 8;

/** True when `err` or an error in its cause chain (at most CAUSE_DEPTH_MAX deep) passes `test`. */
export function hasCause(err: unknown, test: (e: Error) => boolean): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < CAUSE_DEPTH_MAX; e = e.cause, depth++) {
    if (test(e)) return true;
  }
  return false;
}
