// Mapping between the service's CacheError codes and Connect codes, both ways.
import { Code, ConnectError } from "@connectrpc/connect";
import { CacheError, isErrorCode, toCacheError, type ErrorCode } from "../core/errors.js";

const TO_CONNECT: Readonly<Record<ErrorCode, Code>> = Object.freeze({
  BAD_REQUEST: Code.InvalidArgument,
  UNAUTHORIZED: Code.Unauthenticated,
  FORBIDDEN: Code.PermissionDenied,
  NOT_FOUND: Code.NotFound,
  LEASE_HELD: Code.NotFound,
  CONFLICT: Code.Aborted,
  PRECONDITION_FAILED: Code.FailedPrecondition,
  PAYLOAD_TOO_LARGE: Code.ResourceExhausted,
  TOO_MANY_REQUESTS: Code.ResourceExhausted,
  UNSUPPORTED_MEDIA_TYPE: Code.InvalidArgument,
  NOT_IMPLEMENTED: Code.Unimplemented,
  DRAINING: Code.Unavailable,
  QUORUM_FAILED: Code.Unavailable,
  UNAVAILABLE: Code.Unavailable,
  INTERNAL: Code.Internal,
});

const CODE_KEY = "hypercache-code";

/** A CacheError as a ConnectError; the service code travels in the error metadata. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const e = toCacheError(err);
  return new ConnectError(e.code === "INTERNAL" ? "internal error" : e.message, TO_CONNECT[e.code], { [CODE_KEY]: e.code });
}

/** A ConnectError from a peer call as a CacheError. */
export function fromConnectError(err: unknown): CacheError {
  if (err instanceof CacheError) return err;
  const ce = ConnectError.from(err);
  const code = ce.metadata.get(CODE_KEY);
  if (code !== null && isErrorCode(code)) return new CacheError(code, ce.rawMessage, undefined, { cause: ce });
  switch (ce.code) {
    case Code.InvalidArgument:
      return new CacheError("BAD_REQUEST", ce.rawMessage, undefined, { cause: ce });
    case Code.NotFound:
      return new CacheError("NOT_FOUND", ce.rawMessage, undefined, { cause: ce });
    default:
      return new CacheError("UNAVAILABLE", `peer call failed: ${ce.rawMessage}`, undefined, { cause: ce });
  }
}

/**
 * True for a stream the peer refused before processing anything on it (HTTP/2 REFUSED_STREAM,
 * also what a client reports for its streams above the last stream id of a GOAWAY): RFC 9113
 * section 8.7 says such a request can be retried safely. Read along the error's causes, as
 * connect-node ("http/2 stream closed with error code REFUSED_STREAM") and Node's http2
 * ("Stream closed with error code NGHTTP2_REFUSED_STREAM") word it.
 */
export function isRefusedStream(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (/\bREFUSED_STREAM\b|NGHTTP2_REFUSED_STREAM/.test(e.message)) return true;
  }
  return false;
}
