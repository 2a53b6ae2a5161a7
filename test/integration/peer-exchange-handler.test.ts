// The receiving side of Exchange for the nodes' own streams (HTTP/2, Connect protobuf, no
// compression, no deadline), which reads and writes the envelopes without Connect's pipeline:
// it answers the bytes Connect's handler answers, refuses a malformed stream as the caller's
// error, survives a caller that resets, and stops reading a caller that does not read its answers.
import http2 from "node:http2";
import net from "node:net";
import { expect } from "chai";
import { create, toBinary } from "@bufbuild/protobuf";
import { systemClock, systemTimers } from "../../src/core/clock.js";
import { systemRandom } from "../../src/core/random.js";
import { recordingLogger } from "../../src/log/index.js";
import { createNode, type HypercacheNode } from "../../src/node.js";
import { createPeerServer, type PeerServer } from "../../src/peer/index.js";
import { createPeerHandler } from "../../src/peer/peer-handler.js";
import { envelope, EnvelopeReader } from "../../src/peer/connect-envelopes.js";
import { isPlainConnectStream, serveExchangeStream } from "../../src/peer/exchange-http2-handler.js";
import type { PeerEndpoint } from "../../src/transport/index.js";
import { ExchangeRequestSchema, ExchangeResponseSchema, PeerService, SetRequestSchema } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromBinary } from "@bufbuild/protobuf";
import { testConfig } from "../helpers/test-config.js";
import { frame as h2Frame, headerBlock, PREFACE } from "../helpers/h2-frames.js";

const PATH = `/internal/${PeerService.typeName}/${PeerService.method.exchange.name}`;
const PLAIN = { ":method": "POST", ":path": PATH, "content-type": "application/connect+proto", "connect-protocol-version": "1" };
/** The same stream with a deadline: Connect's handler serves it. */
const VIA_CONNECT = { ...PLAIN, "connect-timeout-ms": "5000" };
const GATE = { token: undefined, mutualTls: false, insecure: true };

function frame(id: number, call: Parameters<typeof create<typeof ExchangeRequestSchema>>[1] extends infer I ? (I extends { call?: infer C } ? C : never) : never): Uint8Array {
  return toBinary(ExchangeRequestSchema, create(ExchangeRequestSchema, { id: BigInt(id), call }));
}

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

/** Sends `body` on one stream with `headers` (the request ends after it) and reads the whole answer. */
function send(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    let got: Answer = { status: 0, headers: {}, body: Buffer.alloc(0) };
    stream.on("response", (h) => (got = { ...got, status: Number(h[":status"]), headers: h }));
    stream.on("data", (c: Buffer) => (got.body = Buffer.concat([got.body, c])));
    stream.on("end", () => resolve(got));
    stream.on("error", reject);
    stream.end(body);
  });
}

/** The envelopes of an answer body: flags and data. */
function envelopes(body: Buffer): Array<{ flags: number; data: Uint8Array }> {
  const out: Array<{ flags: number; data: Uint8Array }> = [];
  new EnvelopeReader(1 << 30).push(body, (flags, data) => out.push({ flags, data }));
  return out;
}

/** The JSON of the end-of-stream envelope, which must be the last one. */
function endOf(body: Buffer): { error?: { code: string; message?: string } } {
  const all = envelopes(body);
  const last = all[all.length - 1];
  expect(last?.flags, "the last envelope ends the stream").to.equal(2);
  return JSON.parse(Buffer.from((last as { data: Uint8Array }).data).toString("utf8")) as { error?: { code: string } };
}

describe("peer exchange handler (envelopes without Connect's pipeline)", function () {
  this.timeout(20_000);
  let node: HypercacheNode;
  let getCalls = 0;
  let served: PeerServer;
  let session: http2.ClientHttp2Session;

  before(async () => {
    node = createNode(testConfig({ SERVICE_NODE_ID: "hx1", SERVICE_DIST_ADDR: "127.0.0.1:1", SERVICE_REPLICATION: "1", SERVICE_MAX_VALUE_BYTES: "15MiB" }), {
      logger: recordingLogger("error"), clock: systemClock, timers: systemTimers, random: systemRandom, documents: { client: "", management: "" }, serviceVersion: "test",
    });
    // The node's endpoint, with its reads counted.
    const endpoint: PeerEndpoint = Object.create(node.endpoint) as PeerEndpoint;
    endpoint.getRecords = (keys) => {
      getCalls++;
      return node.endpoint.getRecords(keys);
    };
    served = createPeerServer(createPeerHandler(endpoint, GATE));
    await new Promise<void>((r) => served.server.listen(0, "127.0.0.1", r));
    session = http2.connect(`http://127.0.0.1:${(served.server.address() as net.AddressInfo).port}`);
    const big = create(SetRequestSchema, { from: "peer-x", entries: [{ key: "big", value: new Uint8Array(64 * 1024).fill(7), version: BigInt(Date.now() * 1000), origin: "peer-x", lastUpdatedUnixMs: BigInt(Date.now()) }] });
    const setAnswer = await send(session, PLAIN, envelope(0, frame(1, { case: "set", value: big })));
    expect(endOf(setAnswer.body).error).to.equal(undefined);
  });
  after(async () => {
    session.destroy();
    await served.close();
    await node.stop();
  });

  it("serves only HTTP/2 Connect protobuf streams with neither compression nor a deadline", () => {
    const req = (headers: Record<string, string>, httpVersionMajor = 2) => ({ httpVersionMajor, method: "POST", headers });
    const plain = { "content-type": "application/connect+proto" };
    expect(isPlainConnectStream(req(plain))).to.equal(true);
    expect(isPlainConnectStream(req({ ...plain, "connect-content-encoding": "identity" }))).to.equal(true);
    expect(isPlainConnectStream(req(plain, 1))).to.equal(false);
    expect(isPlainConnectStream({ ...req(plain), method: "GET" })).to.equal(false);
    expect(isPlainConnectStream(req({ ...plain, "connect-content-encoding": "gzip" }))).to.equal(false);
    expect(isPlainConnectStream(req({ ...plain, "connect-timeout-ms": "100" }))).to.equal(false);
    for (const type of ["application/connect+json", "application/grpc", "application/grpc-web+proto", "application/connect+proto; charset=x"]) {
      expect(isPlainConnectStream(req({ "content-type": type })), type).to.equal(false);
    }
  });

  it("with a peer token configured, a plain stream without it (or with a wrong one) is refused with 401 before a frame is read (SPEC-NOTES: auth before body)", async () => {
    const guarded = createPeerServer(createPeerHandler(Object.assign(Object.create(node.endpoint) as PeerEndpoint, { getRecords: (keys: readonly string[]) => (getCalls++, node.endpoint.getRecords(keys)) }), { token: "hx-token", mutualTls: false, insecure: false }));
    await new Promise<void>((r) => guarded.server.listen(0, "127.0.0.1", r));
    const client = http2.connect(`http://127.0.0.1:${(guarded.server.address() as net.AddressInfo).port}`);
    const body = envelope(0, frame(1, { case: "get", value: { keys: ["big"] } }));
    const before = getCalls;
    for (const authorization of [undefined, "Bearer wrong"]) {
      const refused = await send(client, { ...PLAIN, ...(authorization ? { authorization } : {}) }, body);
      expect(refused.status, String(authorization)).to.equal(401);
    }
    expect(getCalls, "no frame of a refused stream was served").to.equal(before);
    const served = await send(client, { ...PLAIN, authorization: "Bearer hx-token" }, body);
    expect(served.status).to.equal(200);
    expect(endOf(served.body).error).to.equal(undefined);
    expect(getCalls).to.equal(before + 1);
    client.destroy();
    await guarded.close();
  });

  it("answers the bytes Connect's handler answers, frame by frame and at the end of the stream", async () => {
    const bodies = [
      envelope(0, frame(7, { case: "get", value: { keys: ["big", "missing"] } })),
      envelope(0, frame(8, { case: undefined })),
      Buffer.concat([envelope(0, frame(9, { case: "get", value: { keys: ["missing"] } })), envelope(0, Uint8Array.of(0x0a, 0xff))]),
    ];
    for (const body of bodies) {
      const plain = await send(session, PLAIN, body);
      const viaConnect = await send(session, VIA_CONNECT, body);
      expect(plain.status).to.equal(200);
      expect(plain.headers["content-type"]).to.equal(viaConnect.headers["content-type"]);
      expect(plain.body.toString("hex")).to.equal(viaConnect.body.toString("hex"));
    }
    const [first] = envelopes((await send(session, PLAIN, bodies[0] as Buffer)).body);
    const answer = fromBinary(ExchangeResponseSchema, (first as { data: Uint8Array }).data);
    expect(answer.result.case === "get" && answer.result.value.results.map((r) => r.found)).to.deep.equal([true, false]);
  });

  const malformed: Array<[string, Buffer, string]> = [
    ["a compressed envelope on a stream that declared no compression", envelope(1, frame(1, { case: "get", value: { keys: ["a"] } })), "invalid_argument"],
    ["an end-of-stream envelope from the caller", envelope(2, new Uint8Array(0)), "invalid_argument"],
    ["a request that ends inside an envelope", envelope(0, frame(1, { case: "get", value: { keys: ["a"] } })).subarray(0, 9), "invalid_argument"],
    ["an envelope over the 16 MiB cap (refused from its header)", Buffer.from([0, 0x01, 0x00, 0x00, 0x01]), "resource_exhausted"],
    ["a frame that is not an ExchangeRequest", envelope(0, Uint8Array.of(0x0a, 0xff)), "invalid_argument"],
  ];
  for (const [what, body, code] of malformed) {
    it(`${what} ends the stream with ${code}, and the next stream is served`, async () => {
      const bad = await send(session, PLAIN, body);
      expect(bad.status).to.equal(200);
      expect(endOf(bad.body).error?.code).to.equal(code);
      const good = await send(session, PLAIN, envelope(0, frame(3, { case: "get", value: { keys: ["big"] } })));
      expect(endOf(good.body).error).to.equal(undefined);
      expect(envelopes(good.body)).to.have.length(2);
    });
  }

  it("writes a 15 MiB answer in pieces, so the session stays under its memory limit and takes new streams meanwhile (no ENHANCE_YOUR_CALM)", async () => {
    const now = Date.now();
    const huge = create(SetRequestSchema, { from: "peer-x", entries: [{ key: "huge", value: new Uint8Array(15 * 1024 * 1024).fill(3), version: BigInt(now * 1000), origin: "peer-x", lastUpdatedUnixMs: BigInt(now) }] });
    expect(endOf((await send(session, PLAIN, envelope(0, frame(1, { case: "set", value: huge })))).body).error).to.equal(undefined);
    const stream = session.request(PLAIN);
    const answers: number[] = [];
    const reader = new EnvelopeReader(1 << 30);
    const done = new Promise<void>((r) => stream.on("end", () => r()));
    // The answer's headers come with its first piece; then the caller stops reading this stream.
    const answered = new Promise<void>((r) => stream.once("response", () => r()));
    stream.end(envelope(0, frame(2, { case: "get", value: { keys: ["huge"] } })));
    await answered;
    stream.pause();
    await new Promise((r) => setTimeout(r, 100));
    // A new stream on the same session while most of the 15 MiB answer waits to be sent.
    const other = await send(session, PLAIN, envelope(0, frame(3, { case: "get", value: { keys: ["missing"] } })));
    expect(endOf(other.body).error).to.equal(undefined);
    stream.on("data", (c: Buffer) => reader.push(c, (flags, data) => answers.push(flags === 0 ? data.length : -1)));
    stream.resume();
    await done;
    expect(answers).to.have.length(2);
    expect(answers[0]).to.be.greaterThan(15 * 1024 * 1024);
  });

  it("a caller that resets its stream mid-way leaves the node serving", async () => {
    const stream = session.request(PLAIN);
    stream.on("error", () => undefined);
    stream.write(envelope(0, frame(1, { case: "get", value: { keys: ["big"] } })));
    stream.write(Buffer.from([0, 0, 0, 1]));
    await new Promise<void>((r) => stream.once("response", () => r()));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    const good = await send(session, PLAIN, envelope(0, frame(3, { case: "get", value: { keys: ["big"] } })));
    expect(endOf(good.body).error).to.equal(undefined);
  });

  for (const reading of [true, false]) {
    it(`a caller that resets while answers are still coming (${reading ? "reading them" : "not reading them"}) ends the handler's answers`, async () => {
      let returned = 0;
      // Answers forever, on a timer, until the stream ends it.
      const frames = (requests: AsyncIterable<Uint8Array>) =>
        (async function* () {
          try {
            void (async () => {
              try {
                for await (const _ of requests);
              } catch {
                // the caller went
              }
            })();
            for (;;) {
              await new Promise((r) => setTimeout(r, 2));
              yield new Uint8Array(reading ? 100 : 200 * 1024).fill(1);
            }
          } finally {
            returned++;
          }
        })();
      const server = http2.createServer((req, res) => serveExchangeStream(req, res, frames, 1 << 24));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const client = http2.connect(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      const stream = client.request(PLAIN);
      stream.on("error", () => undefined);
      stream.write(envelope(0, Uint8Array.of(8, 1)));
      await new Promise<void>((r) => stream.once("response", () => r()));
      if (reading) stream.resume();
      await new Promise((r) => setTimeout(r, 100));
      stream.close(http2.constants.NGHTTP2_CANCEL);
      for (let i = 0; i < 50 && returned === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(returned, "the answers' generator was ended").to.equal(1);
      client.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    });
  }

  it("an answer over the cap is not written: the stream ends with resource_exhausted after the answers before it", async () => {
    const frames = () =>
      (async function* () {
        yield new Uint8Array(100).fill(1);
        yield new Uint8Array(101).fill(2);
        yield new Uint8Array(1).fill(3);
      })();
    const server = http2.createServer((req, res) => serveExchangeStream(req, res, frames, 100));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
    const answer = await send(client, PLAIN, Buffer.alloc(0));
    expect(envelopes(answer.body).map((e) => [e.flags, e.data.length])).to.deep.equal([[0, 100], [2, envelopes(answer.body)[1]?.data.length]]);
    expect(endOf(answer.body).error?.code).to.equal("resource_exhausted");
    client.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("reads an envelope sent as 200,000 one-byte DATA frames without stalling the event loop (work in proportion to the bytes)", async () => {
    const port = (served.server.address() as net.AddressInfo).port;
    const frames = 200_000;
    // A raw HTTP/2 caller: preface, SETTINGS, HEADERS, then the envelope one byte per DATA frame.
    const h2frame = h2Frame;
    const headers = [[":method", "POST"], [":scheme", "http"], [":authority", `127.0.0.1:${port}`], [":path", PATH], ["content-type", "application/connect+proto"]] as const;
    const sock = net.connect(port, "127.0.0.1");
    await new Promise<void>((r) => sock.once("connect", () => r()));
    const windows = { connection: 65_535, stream: 65_535 };
    let answered = false;
    let rx = Buffer.alloc(0);
    const windowOpened: Array<() => void> = [];
    sock.on("data", (c: Buffer) => {
      rx = Buffer.concat([rx, c]);
      while (rx.length >= 9 && rx.length >= 9 + rx.readUIntBE(0, 3)) {
        const len = rx.readUIntBE(0, 3);
        const [type, flags, sid] = [rx[3], rx[4] as number, rx.readUInt32BE(5) & 0x7fffffff];
        const payload = rx.subarray(9, 9 + len);
        rx = rx.subarray(9 + len);
        if (type === 4 && !(flags & 1)) sock.write(h2frame(4, 1, 0, Buffer.alloc(0)));
        if (type === 8) {
          windows[sid === 0 ? "connection" : "stream"] += payload.readUInt32BE(0) & 0x7fffffff;
          windowOpened.splice(0).forEach((w) => w());
        }
        if ((type === 0 || type === 1) && flags & 1) answered = true;
      }
    });
    sock.write(Buffer.concat([PREFACE, h2frame(4, 0, 0, Buffer.alloc(0)), h2frame(1, 4, 1, headerBlock(headers))]));
    // The envelope's header, itself cut into one-byte frames, declares a body of `frames - 5` bytes.
    const header = Buffer.alloc(5);
    header.writeUInt32BE(frames - 5, 1);
    const byteAt = (i: number) => (i < 5 ? (header[i] as number) : 0x07);
    // A side loop: the longest gap between its ticks while the frames are read.
    let worst = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 5);
    let sent = 0;
    while (sent < frames) {
      // Flow control: both windows start at 65,535 and grow by the server's updates.
      const can = Math.min(windows.connection, windows.stream, frames - sent, 20_000);
      if (can <= 0) {
        await new Promise<void>((r) => windowOpened.push(r));
        continue;
      }
      const batch = Buffer.concat(Array.from({ length: can }, (_, i) => h2frame(0, sent + i === frames - 1 ? 1 : 0, 1, Buffer.from([byteAt(sent + i)]))));
      await new Promise<void>((r) => (sock.write(batch) ? r() : sock.once("drain", () => r())));
      windows.connection -= can;
      windows.stream -= can;
      sent += can;
      await new Promise((r) => setImmediate(r));
    }
    for (let i = 0; i < 500 && !answered; i++) await new Promise((r) => setTimeout(r, 20));
    clearInterval(tick);
    sock.destroy();
    expect(answered, "the stream was answered (a bad frame ends it with an error envelope)").to.equal(true);
    expect(worst, "longest gap of a 5 ms side loop, ms").to.be.lessThan(250);
  });

  it("stops reading a caller that does not read its answers, and answers every frame once it does", async () => {
    const frames = 3000;
    const stream = session.request(PLAIN);
    let answered = 0;
    const reader = new EnvelopeReader(1 << 20);
    const ended = new Promise<void>((r) => stream.on("end", () => r()));
    stream.pause();
    stream.write(Buffer.concat(Array.from({ length: frames }, (_, i) => envelope(0, frame(i + 1, { case: "get", value: { keys: ["big"] } })))));
    stream.end();
    const before = getCalls;
    // Until the reads stop growing: the answers wait in the HTTP/2 window and the handler's bound.
    let last = -1;
    while (getCalls !== last) {
      last = getCalls;
      await new Promise((r) => setTimeout(r, 200));
    }
    const served = getCalls - before;
    // 64 pending calls and 16 MiB of unsent answers (about 256 answers of 64 KiB), with room for what HTTP/2 buffers.
    expect(served).to.be.lessThan(500);
    stream.on("data", (c: Buffer) => reader.push(c, (flags) => (answered += flags === 0 ? 1 : 0)));
    stream.resume();
    await ended;
    expect(answered).to.equal(frames);
  });

  it("stops taking frames from a caller while its calls wait, so the caller's own sends back up (HTTP/2 flow control)", async () => {
    const frames = 20_000;
    const stream = session.request(PLAIN);
    const ended = new Promise<void>((r) => stream.on("end", () => r()));
    stream.pause();
    const body = Buffer.concat(Array.from({ length: frames }, (_, i) => envelope(0, frame(i + 1, { case: "get", value: { keys: ["missing"] } }))));
    stream.end(body);
    let last = -1;
    while (getCalls !== last) {
      last = getCalls;
      await new Promise((r) => setTimeout(r, 200));
    }
    // The handler took at most its pending calls and queue; the rest of the body is still the caller's.
    expect(stream.bufferSize, "bytes the caller could not send yet").to.be.greaterThan(body.length / 2);
    let answered = 0;
    const reader = new EnvelopeReader(1 << 20);
    stream.on("data", (c: Buffer) => reader.push(c, (flags) => (answered += flags === 0 ? 1 : 0)));
    stream.resume();
    await ended;
    expect(answered).to.equal(frames);
  });
});
