// connect-es answers a request body that is not valid protobuf ("parse binary: ...") or not valid
// gzip ("decompression failed") with "internal": HTTP 500 on the Connect protocol, grpc-status 13
// on gRPC and gRPC-Web, while a malformed JSON body gets invalid_argument. A body the caller got
// wrong is the caller's error: this turns that one answer into invalid_argument on every protocol
// (Connect 400, grpc-status 3), so the peer port never answers "internal" for bad input (found by
// the route fuzzer for Connect, by the exchange fuzz family for gRPC). Every other error passes as
// it is, the `internal` the gRPC specification prescribes for a compressed message on a call that
// declared no compression included.
import { Code, ConnectError } from "@connectrpc/connect";
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerResponse } from "node:http2";

type AnyResponse = ServerResponse | Http2ServerResponse;
type Headers = Record<string, string | string[] | number>;

/** Connect's messages for a request it could not read (see above). */
const CALLER_PARSE_ERROR = /^(parse binary: |decompression failed)/;
const GRPC_INTERNAL = "13";
const GRPC_INVALID_ARGUMENT = "3";
/** The flags of a gRPC-Web trailer frame. */
const GRPC_WEB_TRAILER_FLAG = 0x80;

/** gRPC status headers (trailers, or the headers of a trailers-only answer) with the correction. */
function correctGrpcStatus<H extends Headers | OutgoingHttpHeaders | undefined>(headers: H): H {
  if (headers === undefined || String(headers["grpc-status"]) !== GRPC_INTERNAL) return headers;
  const message = headers["grpc-message"];
  if (typeof message !== "string" || !CALLER_PARSE_ERROR.test(decodeMessage(message))) return headers;
  return { ...headers, "grpc-status": GRPC_INVALID_ARGUMENT };
}

function decodeMessage(message: string): string {
  try {
    return decodeURIComponent(message);
  } catch {
    return message;
  }
}

/** A gRPC-Web trailer frame (the whole chunk) with the correction, or undefined when it needs none. */
function correctGrpcWebTrailer(chunk: unknown): Buffer | undefined {
  if (!(chunk instanceof Uint8Array) || chunk.length < 5 || chunk[0] !== GRPC_WEB_TRAILER_FLAG) return undefined;
  const frame = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  if (frame.readUInt32BE(1) !== frame.length - 5) return undefined;
  const lines = frame.subarray(5).toString("utf8").split("\r\n");
  const fields: Headers = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (correctGrpcStatus(fields) === fields) return undefined;
  const text = lines.map((line) => (/^grpc-status\s*:/i.test(line) ? `grpc-status: ${GRPC_INVALID_ARGUMENT}` : line)).join("\r\n");
  const data = Buffer.from(text, "utf8");
  const out = Buffer.allocUnsafe(5 + data.length);
  out[0] = GRPC_WEB_TRAILER_FLAG;
  out.writeUInt32BE(data.length, 1);
  data.copy(out, 5);
  return out;
}

/**
 * Watches `res`: a 500 whose first chunk is such a Connect error leaves as a 400, and such a gRPC
 * status (trailers, trailers-only headers, or a gRPC-Web trailer frame) leaves as 3.
 */
export function correctParseErrors(res: AnyResponse): void {
  const r = res as ServerResponse;
  const writeHead = r.writeHead.bind(r) as (status: number, headers?: Headers) => ServerResponse;
  const write = r.write.bind(r) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const addTrailers = r.addTrailers.bind(r);
  let held: { headers: Headers | undefined } | undefined;
  r.writeHead = ((status: number, headers?: Headers) => {
    if (status !== 500) return writeHead(status, correctGrpcStatus(headers));
    held = { headers };
    return r;
  }) as typeof r.writeHead;
  r.addTrailers = (headers: OutgoingHttpHeaders | ReadonlyArray<[string, string]>) => addTrailers(Array.isArray(headers) ? headers : correctGrpcStatus(headers as OutgoingHttpHeaders));
  r.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (held) {
      const h = held;
      held = undefined;
      const text = Buffer.from(chunk as Uint8Array).toString("utf8");
      if (/"code":"internal","message":"(parse binary: |decompression failed)/.test(text)) {
        const body = text.replace('"code":"internal"', '"code":"invalid_argument"');
        const headers = { ...h.headers };
        for (const k of Object.keys(headers)) if (k.toLowerCase() === "content-length") headers[k] = Buffer.byteLength(body);
        writeHead(400, headers);
        return write(body, ...rest);
      }
      writeHead(500, h.headers);
    }
    return write(correctGrpcWebTrailer(chunk) ?? chunk, ...rest);
  }) as typeof r.write;
}

/**
 * The same correction for a stream: an error met while reading a stream's request frames that is
 * Connect's "internal" parse or decompression error becomes invalid_argument; others pass as they
 * are (a frame over the size cap stays resource_exhausted).
 */
export function asCallerReadError(err: unknown): unknown {
  if (err instanceof ConnectError && err.code === Code.Internal && CALLER_PARSE_ERROR.test(err.rawMessage)) {
    return new ConnectError(err.rawMessage, Code.InvalidArgument, err.metadata, undefined, err.cause);
  }
  return err;
}
