// The calling side of the Exchange stream on a plain HTTP/2 stream of the peer's session,
// speaking the Connect streaming protocol (application/connect+proto) itself: each frame is one
// envelope (a flags byte, a 4-byte big-endian length, the encoded message) written straight to
// the stream, and each envelope read is handed up as the message's bytes. Connect's client runs
// every frame through a pipeline of async generators (serialize, envelope, split, parse) and
// WHATWG-style stream adapters on both sides of the call: on the node coordinating a write, that
// was the largest part of the exchange's cost after the codec (profile in docs/design.md).
//
// The bytes on the wire are the ones Connect's client sends: same path, headers and envelopes, so
// the server side (Connect's handler) is unchanged, and peers of any version understand it. What
// it leaves out, the caller must not need:
// - compression: it sends no envelope compressed and accepts none (no `connect-accept-encoding`,
//   so the server answers uncompressed). With SERVICE_COMPRESSION_THRESHOLD set, the transport
//   keeps Connect's client for the stream (client.ts).
// - deadlines: the stream has none; each call has its own timeout (exchange-channel.ts).
// Errors come back with the codes Connect's client gives: an HTTP status other than 200 is the
// code Connect maps it to (404 is Unimplemented, so the channel falls back to unary calls), an
// end-of-stream envelope with an error is that error with its metadata, and a reset or broken
// stream is Unavailable. One difference, on purpose: a stream that ends without its end-of-stream
// envelope is Unavailable (the peer failed; its calls may be retried or hinted), where Connect's
// client says InvalidArgument, which a node would take as its own caller's BAD_REQUEST. Envelopes
// after the end-of-stream envelope are ignored. The end-of-stream envelope (JSON: an error and its
// metadata, well under a kilobyte from a node) is read only up to END_STREAM_BYTES_MAX, refused
// from its header, so a peer cannot hold the event loop, or memory, with megabytes of it: a
// larger one is ResourceExhausted. (With compression on, Connect's client reads it, uncapped.)
import http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus, endStreamFlag, endStreamFromJson } from "@connectrpc/connect/protocol-connect";
import { AsyncQueue } from "../core/async-queue.js";
import { notDelivered } from "../transport/index.js";
import { compressedFlag } from "@connectrpc/connect/protocol";
import { checkWriteSize, EnvelopeReader, writeEnvelope } from "./connect-envelopes.js";

/** The largest end-of-stream envelope whose JSON is parsed. */
export const END_STREAM_BYTES_MAX = 64 * 1024;

/** What the wire needs of the peer's session (peer-session.ts). */
export interface StreamSession {
  request(method: string, path: string, headers: http2.OutgoingHttpHeaders, options: Omit<http2.ClientSessionRequestOptions, "signal">): Promise<http2.ClientHttp2Stream>;
  /** Counts a response chunk read: a sign of life of the connection. */
  notifyResponseByteRead(): void;
}

export interface Http2WireOptions {
  /** The method's path, `/internal/hypercache.peer.v1.PeerService/Exchange`. */
  readonly path: string;
  /** The peer bearer token, sent as `Authorization: Bearer`. */
  readonly token?: string;
  /** The largest envelope read or written (PEER_BODY_BYTES_MAX). */
  readonly maxBytes: number;
}

/** An HTTP/2 stream failure as Connect's client reports it. */
function streamFailure(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  return new ConnectError(err instanceof Error ? err.message : String(err), Code.Unavailable, undefined, undefined, err);
}

/**
 * Opens Exchange streams on `session`: the frames pushed to `requests` go out as envelopes, the
 * answers come back as the bytes of each message.
 */
export function http2ExchangeWire(session: StreamSession, opts: Http2WireOptions): (requests: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array> {
  const headers: http2.OutgoingHttpHeaders = {
    "content-type": "application/connect+proto",
    "connect-protocol-version": "1",
    ...(opts.token !== undefined ? { authorization: `Bearer ${opts.token}` } : {}),
  };
  return (requests) => {
    const answers = new AsyncQueue<Uint8Array>();
    void run(session, opts, headers, requests, answers);
    return answers;
  };
}

async function run(session: StreamSession, opts: Http2WireOptions, headers: http2.OutgoingHttpHeaders, requests: AsyncIterable<Uint8Array>, answers: AsyncQueue<Uint8Array>): Promise<void> {
  let stream: http2.ClientHttp2Stream;
  try {
    stream = await session.request("POST", opts.path, headers, {});
  } catch (err) {
    // No stream: none of its calls left this node.
    answers.fail(notDelivered(err));
    return;
  }
  let ended = false;
  const fail = (err: ConnectError) => {
    if (ended) return;
    ended = true;
    answers.fail(err);
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
  };
  const reader = new EnvelopeReader(opts.maxBytes, END_STREAM_BYTES_MAX);
  const onEnvelope = (flags: number, data: Uint8Array) => {
    if (flags & endStreamFlag) {
      const end = endStreamFromJson(data);
      if (end.error) {
        const error = end.error;
        end.metadata.forEach((value, key) => error.metadata.set(key, value));
        fail(error);
        return;
      }
      ended = true;
      answers.close();
      return;
    }
    if (flags & compressedFlag) throw new ConnectError("received a compressed envelope, but no compression was accepted", Code.Internal);
    answers.push(data);
  };
  stream.on("response", (h) => {
    const status = Number(h[":status"]);
    if (status !== 200) return fail(new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status)));
    const type = String(h["content-type"] ?? "");
    if (!/^application\/connect\+proto\s*(;|$)/i.test(type)) return fail(new ConnectError(`unsupported content type ${type}`, Code.Internal));
    const encoding = h["connect-content-encoding"];
    if (encoding !== undefined && String(encoding).toLowerCase() !== "identity") fail(new ConnectError(`unsupported response encoding ${String(encoding)}`, Code.Internal));
  });
  stream.on("data", (chunk: Buffer) => {
    session.notifyResponseByteRead();
    if (ended) return;
    try {
      reader.push(chunk, onEnvelope);
    } catch (err) {
      fail(streamFailure(err));
    }
  });
  stream.on("error", (err) => fail(streamFailure(err)));
  // The answers ended (or the stream closed) before the end-of-stream envelope came.
  const cut = () => fail(new ConnectError("protocol error: missing end-of-stream envelope", Code.Unavailable));
  stream.on("end", cut);
  stream.on("close", cut);
  try {
    for await (const frame of requests) {
      if (ended || stream.destroyed) break;
      checkWriteSize(frame, opts.maxBytes);
      // The next frame waits while the stream cannot take more (see connect-envelopes.ts).
      const full = writeEnvelope(stream, 0, frame);
      if (full) await full;
    }
  } catch (err) {
    fail(streamFailure(err));
  } finally {
    if (!stream.destroyed && !stream.writableEnded) stream.end();
  }
}
