// Mapping between the service's CacheError codes and Connect codes, both ways.
import { Code, ConnectError } from "@connectrpc/connect";
import { CacheError, hasCause, isErrorCode, toCacheError, type ErrorCode } from "../core/errors.js";

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

/** What Node's http2 says of a stream closed with REFUSED_STREAM (an Error with code ERR_HTTP2_STREAM_ERROR). */
const REFUSED_MESSAGE = "Stream closed with error code NGHTTP2_REFUSED_STREAM";

/**
 * True for a stream the peer refused before processing anything on it (HTTP/2 REFUSED_STREAM,
 * also what the client reports for its streams above the last stream id of a GOAWAY): RFC 9113
 * section 8.7 says such a request can be retried safely. Judged by the local Node error in the
 * cause chain (its string `code` ERR_HTTP2_STREAM_ERROR), never by message text alone: a peer's
 * own error text travels in ConnectError messages and could otherwise make this node send a call
 * it already processed again (a review finding).
 */
export function isRefusedStream(err: unknown): boolean {
  return hasCause(err, (e) => (e as { code?: unknown }).code === "ERR_HTTP2_STREAM_ERROR" && e.message === REFUSED_MESSAGE);
}
