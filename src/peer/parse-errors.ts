// connect-es answers a request body that is not valid protobuf ("parse binary: ...") or not valid
// gzip ("decompression failed") with 500 "internal", while a malformed JSON body gets 400
// "invalid_argument". A body the caller got
// wrong is the caller's error: this turns that one answer into 400 invalid_argument, so the
// peer port never answers 500 for bad input (found by the route fuzzer).
import { Code, ConnectError } from "@connectrpc/connect";
import type { ServerResponse } from "node:http";
import type { Http2ServerResponse } from "node:http2";

type AnyResponse = ServerResponse | Http2ServerResponse;
type Headers = Record<string, string | string[] | number>;

/** Watches `res`: a 500 whose first chunk is such a Connect error leaves as a 400. */
export function correctParseErrors(res: AnyResponse): void {
  const r = res as ServerResponse;
  const writeHead = r.writeHead.bind(r) as (status: number, headers?: Headers) => ServerResponse;
  const write = r.write.bind(r) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let held: { headers: Headers | undefined } | undefined;
  r.writeHead = ((status: number, headers?: Headers) => {
    if (status !== 500) return writeHead(status, headers);
    held = { headers };
    return r;
  }) as typeof r.writeHead;
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
    return write(chunk, ...rest);
  }) as typeof r.write;
}

/** Connect's messages for a request it could not read (see above). */
const CALLER_PARSE_ERROR = /^(parse binary: |decompression failed)/;

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
