// The receiving side of the Exchange stream for the requests every node sends (HTTP/2, Connect
// streaming protobuf, no compression, no deadline): the envelopes are read from the request and
// written to the answer directly, the other half of exchange-http2-wire.ts. Connect's handler
// runs every frame through its pipeline of async generators on the way in and out; on a replica
// that was the largest part of the exchange's cost after the codec (docs/design.md).
//
// Everything else on the Exchange path (gRPC, gRPC-Web, Connect JSON, a compressed stream, a
// caller's deadline, HTTP/1.1) goes to Connect's handler as before. The answers are the same
// bytes Connect's handler writes: status 200, `application/connect+proto`, one envelope per
// answer, and the end-of-stream envelope (`{}`, or the error that ended the stream).
import type { Http2ServerRequest, Http2ServerResponse, ServerHttp2Stream } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { endStreamFlag, endStreamToJson } from "@connectrpc/connect/protocol-connect";
import { AsyncQueue } from "../core/async-queue.js";
import { compressedFlag } from "@connectrpc/connect/protocol";
import { checkWriteSize, envelope, EnvelopeReader, writeEnvelope } from "./connect-envelopes.js";

/** Frames read and not yet taken by the handler past which the request is paused (HTTP/2 flow control reaches the caller). */
const QUEUED_FRAMES_MAX = 256;

/** The handler of the stream's frames: request bytes in, answer bytes out (exchange-server.ts). */
export type ExchangeFrames = (requests: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array>;

/**
 * True for a request this module serves: HTTP/2, `application/connect+proto`, and neither a
 * compressed body nor a deadline (the exchange streams of hypercache-server nodes).
 */
export function isPlainConnectStream(req: { readonly httpVersionMajor: number; readonly method?: string; readonly headers: Record<string, string | string[] | undefined> }): boolean {
  const h = req.headers;
  if (req.httpVersionMajor !== 2 || req.method !== "POST") return false;
  if (typeof h["content-type"] !== "string" || h["content-type"].toLowerCase() !== "application/connect+proto") return false;
  const encoding = h["connect-content-encoding"];
  if (encoding !== undefined && (typeof encoding !== "string" || encoding.toLowerCase() !== "identity")) return false;
  return h["connect-timeout-ms"] === undefined;
}

function endStream(error: ConnectError | undefined): Buffer {
  return envelope(endStreamFlag, new TextEncoder().encode(JSON.stringify(endStreamToJson(new Headers(), error, undefined))));
}

/** Serves one Exchange stream with `frames`, reading envelopes of at most `maxBytes`. */
export function serveExchangeStream(req: Http2ServerRequest, res: Http2ServerResponse, frames: ExchangeFrames, maxBytes: number): void {
  const requests = new AsyncQueue<Uint8Array>();
  const reader = new EnvelopeReader(maxBytes);
  const onEnvelope = (flags: number, data: Uint8Array) => {
    if (flags & compressedFlag) throw new ConnectError("received a compressed envelope, but the stream declared no compression", Code.InvalidArgument);
    if (flags !== 0) throw new ConnectError(`unexpected envelope flags ${flags}`, Code.InvalidArgument);
    requests.push(data);
  };
  req.on("data", (chunk: Buffer) => {
    if (requests.isClosed) return;
    try {
      reader.push(chunk, onEnvelope);
    } catch (err) {
      requests.fail(err);
      return;
    }
    if (requests.size >= QUEUED_FRAMES_MAX) {
      req.pause();
      void requests.whenShorterThan(QUEUED_FRAMES_MAX / 2).then(() => req.resume());
    }
  });
  req.on("end", () => {
    if (reader.pending > 0) requests.fail(new ConnectError("the request ended inside an envelope", Code.InvalidArgument));
    else requests.close();
  });
  // The caller went away (a reset or a closed connection): the handler stops with its calls.
  req.on("close", () => requests.fail(new ConnectError("the caller closed the stream", Code.Canceled)));
  void answer(res.stream, frames(requests), maxBytes);
}

/**
 * Writes the answers to the HTTP/2 stream itself (the compat response has no `destroyed` to watch
 * on Node 20), then the end-of-stream envelope. When the caller goes away the loop stops, and
 * leaving it ends the handler's generator.
 */
async function answer(stream: ServerHttp2Stream, answers: AsyncIterable<Uint8Array>, maxBytes: number): Promise<void> {
  // The headers leave with the first answer, as Connect's handler sends them: a caller still
  // writing a large first frame in one piece is not answered while its output is queued.
  let responded = false;
  const respond = () => {
    if (responded) return;
    responded = true;
    stream.respond({ ":status": 200, "content-type": "application/connect+proto" });
  };
  const gone = () => stream.destroyed || stream.closed;
  let error: ConnectError | undefined;
  try {
    for await (const frame of answers) {
      if (gone()) return;
      checkWriteSize(frame, maxBytes);
      respond();
      const full = writeEnvelope(stream, 0, frame);
      if (full) await full;
    }
  } catch (err) {
    error = ConnectError.from(err);
  }
  if (gone()) return;
  respond();
  stream.end(endStream(error));
}
