// The Exchange wire that writes and reads Connect envelopes on a raw HTTP/2 stream (used by the
// peer transport without compression), against servers on loopback in this process: it sends the
// bytes and headers Connect's client sends, and it fails a stream with the codes Connect's client
// gives for every way a server or connection can end it (but one: a stream cut without its
// end-of-stream envelope is Unavailable, the peer's failure, where Connect says InvalidArgument).
import http2 from "node:http2";
import type net from "node:net";
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { systemTimers } from "../../src/core/clock.js";
import { CacheError } from "../../src/core/errors.js";
import { fromConnectError } from "../../src/peer/errors.js";
import { clientBytesFrames, clientFrames, RAW_EXCHANGE_SERVICE } from "../../src/peer/exchange-codec.js";
import { envelope } from "../../src/peer/connect-envelopes.js";
import { http2ExchangeWire } from "../../src/peer/exchange-http2-wire.js";
import { peerTokenSigner } from "../../src/peer/peer-auth.js";
import { PeerSession } from "../../src/peer/peer-session.js";
import { AsyncQueue } from "../../src/core/async-queue.js";
import { ExchangeRequestSchema, PeerService, type ExchangeRequest } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";

const PATH = `/internal/${PeerService.typeName}/${PeerService.method.exchange.name}`;
const TOKEN = "wire-token";

interface Seen {
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

/** An HTTP/2 server whose every stream is handled by `answer`; it records what each request sent. */
async function rawServer(answer: (stream: http2.ServerHttp2Stream, seen: Seen) => void): Promise<{ port: number; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    const s: Seen = { headers, body: Buffer.alloc(0) };
    seen.push(s);
    stream.on("data", (c: Buffer) => (s.body = Buffer.concat([s.body, c])));
    answer(stream, s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen,
    // Clients' idle sessions would keep close() waiting.
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sessions) s.destroy();
      }),
  };
}

const OK_HEADERS = { ":status": 200, "content-type": "application/connect+proto" };
const endOk = () => envelope(2, new TextEncoder().encode("{}"));

/** Answers each request envelope with the same bytes back, and ends when the request ends. */
function echo(stream: http2.ServerHttp2Stream): void {
  stream.respond(OK_HEADERS);
  stream.on("data", (c: Buffer) => stream.write(c));
  stream.on("end", () => stream.end(endOk()));
}

function session(port: number): PeerSession {
  return new PeerSession(`http://127.0.0.1:${port}/internal`, { timers: systemTimers, connectTimeoutMs: 2_000, idleTimeoutMs: 60_000, connect: () => ({}) });
}

function request(id: number, key: string): ExchangeRequest {
  return create(ExchangeRequestSchema, { id: BigInt(id), call: { case: "get", value: { keys: [key] } } });
}

/** Opens a wire stream to `port`, sends `frames`, ends the requests, and collects the answers or the failure. */
async function exchange(port: number, frames: readonly Uint8Array[], opts: { keepOpen?: boolean; maxBytes?: number } = {}): Promise<{ answers: Uint8Array[]; error?: ConnectError | CacheError }> {
  const s = session(port);
  const open = http2ExchangeWire(s, { path: PATH, token: TOKEN, maxBytes: opts.maxBytes ?? 1 << 20 });
  const requests = new AsyncQueue<Uint8Array>();
  for (const f of frames) requests.push(f);
  if (!opts.keepOpen) requests.close();
  const answers: Uint8Array[] = [];
  try {
    for await (const a of open(requests)) answers.push(a);
    return { answers };
  } catch (err) {
    return { answers, error: err as ConnectError };
  } finally {
    requests.close();
    s.close();
  }
}

describe("peer exchange wire (Connect envelopes on a raw HTTP/2 stream)", function () {
  this.timeout(10_000);

  it("sends the headers and bytes Connect's client sends for the same frames", async () => {
    const server = await rawServer((stream) => {
      stream.respond(OK_HEADERS);
      stream.on("end", () => stream.end(endOk()));
      stream.resume();
    });
    const messages = [request(1, "a"), request(2, "b".repeat(300))];
    // Connect's client, as the transport used it before (binary, no compression accepted).
    const transport = createConnectTransport({ httpVersion: "2", baseUrl: `http://127.0.0.1:${server.port}/internal`, useBinaryFormat: true, interceptors: [peerTokenSigner(TOKEN)], acceptCompression: [] });
    const connectFrames = clientFrames();
    for await (const _ of createClient(RAW_EXCHANGE_SERVICE, transport).exchange(
      (async function* () {
        for (const m of messages) yield connectFrames.encode(m);
      })(),
      { timeoutMs: 0 },
    ));
    const bytesFrames = clientBytesFrames();
    const out = await exchange(server.port, messages.map((m) => bytesFrames.encode(m)));
    expect(out.error).to.equal(undefined);
    const [viaConnect, viaWire] = server.seen as [Seen, Seen];
    expect(viaWire.body.toString("hex")).to.equal(viaConnect.body.toString("hex"));
    for (const h of [":method", ":path", "content-type", "connect-protocol-version", "authorization", "connect-timeout-ms", "connect-content-encoding", "connect-accept-encoding"]) {
      expect(viaWire.headers[h], h).to.equal(viaConnect.headers[h]);
    }
    await server.close();
  });

  it("hands up each answer envelope's bytes in order, across chunk boundaries, and ends with the end-of-stream envelope", async () => {
    const server = await rawServer(echo);
    const frames = [Uint8Array.of(1), new Uint8Array(70_000).fill(9), Uint8Array.of(2, 3)];
    const out = await exchange(server.port, frames);
    expect(out.error).to.equal(undefined);
    expect(out.answers.map((a) => Buffer.from(a).toString("hex"))).to.deep.equal(frames.map((f) => Buffer.from(f).toString("hex")));
    await server.close();
  });

  it("writes a 15 MiB frame in pieces, so a server that answered its headers first does not reset the stream (ENHANCE_YOUR_CALM)", async () => {
    // Answers its headers at once, then one envelope with the bytes it read.
    const server = await rawServer((stream) => {
      stream.respond(OK_HEADERS);
      let n = 0;
      stream.on("data", (c: Buffer) => (n += c.length));
      stream.on("end", () => stream.end(Buffer.concat([envelope(0, new TextEncoder().encode(String(n))), endOk()])));
    });
    const frame = new Uint8Array(15 * 1024 * 1024).fill(5);
    const out = await exchange(server.port, [frame], { maxBytes: 16 * 1024 * 1024 });
    expect(out.error).to.equal(undefined);
    expect(out.answers.map((a) => Buffer.from(a).toString())).to.deep.equal([String(frame.length + 5)]);
    await server.close();
  });

  const failures: Array<[string, (stream: http2.ServerHttp2Stream) => void, Code, string?]> = [
    ["HTTP 404 (a peer without Exchange) is Unimplemented", (s) => s.respond({ ":status": 404 }, { endStream: true }), Code.Unimplemented],
    ["HTTP 401 (a wrong peer token) is Unauthenticated", (s) => s.respond({ ":status": 401 }, { endStream: true }), Code.Unauthenticated],
    ["HTTP 503 is Unavailable", (s) => s.respond({ ":status": 503 }, { endStream: true }), Code.Unavailable],
    ["an answer that is not Connect streaming protobuf is Internal", (s) => s.respond({ ":status": 200, "content-type": "application/json" }, { endStream: true }), Code.Internal],
    ["a compressed answer stream, which was not accepted, is Internal", (s) => s.respond({ ...OK_HEADERS, "connect-content-encoding": "gzip" }, { endStream: true }), Code.Internal],
    [
      "a compressed envelope, which was not accepted, is Internal",
      (s) => {
        s.respond(OK_HEADERS);
        s.end(envelope(1, Uint8Array.of(1)));
      },
      Code.Internal,
    ],
    [
      "an envelope over the cap is ResourceExhausted",
      (s) => {
        s.respond(OK_HEADERS);
        s.write(Buffer.from([0, 0, 0x10, 0, 1]));
      },
      Code.ResourceExhausted,
    ],
    [
      "a stream that ends without the end-of-stream envelope is Unavailable (Connect's client: InvalidArgument, which would read as the caller's BAD_REQUEST)",
      (s) => {
        s.respond(OK_HEADERS);
        s.end();
      },
      Code.Unavailable,
    ],
    [
      "a stream the server resets is Unavailable",
      (s) => {
        s.on("error", () => undefined);
        s.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      },
      Code.Unavailable,
    ],
    [
      "an end-of-stream envelope with an error is that error, with the metadata the peer's code travels in",
      (s) => {
        s.respond(OK_HEADERS);
        s.end(envelope(2, new TextEncoder().encode(JSON.stringify({ error: { code: "unavailable", message: "draining" }, metadata: { "hypercache-code": ["DRAINING"] } }))));
      },
      Code.Unavailable,
      "DRAINING",
    ],
    [
      "an end-of-stream envelope over 64 KiB is ResourceExhausted: its JSON is not parsed",
      (s) => {
        s.respond(OK_HEADERS);
        s.end(envelope(2, new TextEncoder().encode(JSON.stringify({ metadata: { "x-big": ["a".repeat(200 * 1024)] } }))));
      },
      Code.ResourceExhausted,
    ],
  ];
  for (const [what, answer, code, cacheCode] of failures) {
    it(what, async () => {
      const server = await rawServer(answer);
      const out = await exchange(server.port, [Uint8Array.of(1)], { keepOpen: true, maxBytes: 1 << 20 });
      expect(out.error).to.be.instanceOf(ConnectError);
      expect(ConnectError.from(out.error).code, String(out.error)).to.equal(code);
      if (cacheCode !== undefined) expect(fromConnectError(out.error).code).to.equal(cacheCode);
      await server.close();
    });
  }

  it("a frame to send over the cap fails the stream with ResourceExhausted and sends nothing of it", async () => {
    const server = await rawServer((s) => {
      s.respond(OK_HEADERS);
      s.resume();
    });
    const out = await exchange(server.port, [new Uint8Array(101)], { keepOpen: true, maxBytes: 100 });
    expect(ConnectError.from(out.error).code).to.equal(Code.ResourceExhausted);
    expect(server.seen[0]?.body.length ?? 0).to.equal(0);
    await server.close();
  });

  it("a peer that cannot be reached fails the stream with UNAVAILABLE", async () => {
    const server = await rawServer(echo);
    const port = server.port;
    await server.close();
    const out = await exchange(port, [Uint8Array.of(1)]);
    expect(out.error).to.be.instanceOf(CacheError);
    expect((out.error as CacheError).code).to.equal("UNAVAILABLE");
  });
});
