// The Exchange stream between nodes, over a real Connect server on loopback (in one process):
// calls multiplexed on one stream, error frames with their codes, per-call timeouts, a failed
// stream failing only its own calls and reopening, and the unary fallback for peers without it.
import http2 from "node:http2";
import type net from "node:net";
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import { WireType } from "@bufbuild/protobuf/wire";
import { connectNodeAdapter, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { AsyncQueue } from "../../src/core/async-queue.js";
import { systemClock, systemTimers } from "../../src/core/clock.js";
import { CacheError } from "../../src/core/errors.js";
import { neverDelivered } from "../../src/transport/index.js";
import { systemRandom } from "../../src/core/random.js";
import { recordingLogger } from "../../src/log/index.js";
import { createNode, type HypercacheNode } from "../../src/node.js";
import { ConnectPeerTransport, createPeerServer, peerServiceImpl, type PeerServer } from "../../src/peer/index.js";
import { ExchangeChannel, typedWire } from "../../src/peer/exchange-channel.js";
import { RAW_EXCHANGE_SERVICE } from "../../src/peer/exchange-codec.js";
import {
  EntrySchema,
  ExchangeRequestSchema,
  ApplyOutcome as WireOutcome,
  ExchangeResponseSchema,
  GetRequestSchema,
  PeerService,
  SetRequestSchema,
  type ExchangeRequest,
  type ExchangeResponse,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { testConfig } from "../helpers/test-config.js";

const DOCS = { client: "", management: "" };

async function serve(handler: Parameters<typeof createPeerServer>[0]): Promise<{ server: PeerServer; address: string }> {
  const server = createPeerServer(handler);
  await new Promise<void>((r) => server.server.listen(0, "127.0.0.1", r));
  return { server, address: `127.0.0.1:${(server.server.address() as net.AddressInfo).port}` };
}

/** A peer whose Exchange stream reads every frame (told to `onFrame`) and never answers. */
function mutePeer(onFrame: () => void = () => undefined): http2.Http2Server {
  return http2.createServer(
    connectNodeAdapter({
      requestPathPrefix: "/internal",
      routes: (router) =>
        router.service(PeerService, {
          exchange: async function* (requests) {
            for await (const _ of requests) onFrame(); // never answer
            yield* [];
          },
        }),
    }),
  );
}

function record(key: string, value: string, version: number) {
  return { key, value, version, origin: "peer-x", lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: false };
}

describe("peer exchange stream", function () {
  this.timeout(20_000);
  let node: HypercacheNode;
  let served: { server: PeerServer; address: string };
  let transport: ConnectPeerTransport;

  before(async () => {
    node = createNode(testConfig({ SERVICE_NODE_ID: "ex1", SERVICE_DIST_ADDR: "127.0.0.1:1", SERVICE_REPLICATION: "1" }), {
      logger: recordingLogger("error"), clock: systemClock, timers: systemTimers, random: systemRandom, documents: DOCS, serviceVersion: "test",
    });
    served = await serve(node.peerHandler);
    transport = new ConnectPeerTransport({ compressionThresholdBytes: 0 });
  });
  after(async () => {
    await transport.close();
    await served.server.close();
    await node.stop();
  });

  it("carries many concurrent set and get calls on one stream, each answered with its own results", async () => {
    const to = { id: "ex1", address: served.address };
    const base = Date.now() * 1000;
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => transport.set(to, "peer-x", [record(`k${i}`, `v${i}`, base + i)])));
    expect(outcomes.every((o) => o.length === 1 && o[0]?.kind === "applied")).to.equal(true);
    const got = await Promise.all(Array.from({ length: 200 }, (_, i) => transport.get(to, [`k${i}`, "missing"])));
    got.forEach((g, i) => {
      expect(g[0]?.record?.value).to.equal(`v${i}`);
      expect(g[1]?.record).to.equal(undefined);
    });
    expect(transport.calls).to.equal(400);
  });

  it("a frame the receiver cannot serve is answered with an error frame carrying its id and service code", async () => {
    const client = createClient(PeerService, createConnectTransport({ httpVersion: "2", baseUrl: `http://${served.address}/internal` }));
    const requests = new AsyncQueue<ExchangeRequest>();
    const responses = client.exchange(requests);
    requests.push(create(ExchangeRequestSchema, { id: 41n }));
    requests.push(create(ExchangeRequestSchema, { id: 42n, call: { case: "get", value: create(GetRequestSchema, { keys: ["nope"] }) } }));
    requests.close();
    const answers = new Map<bigint, ExchangeResponse>();
    for await (const r of responses) answers.set(r.id, r);
    const bad = answers.get(41n)?.result;
    expect(bad?.case).to.equal("error");
    expect(bad?.case === "error" && bad.value.code).to.equal("BAD_REQUEST");
    const ok = answers.get(42n)?.result;
    expect(ok?.case === "get" && ok.value.results[0]?.found).to.equal(false);
  });

  for (const [protocol, make] of [
    ["Connect binary", (baseUrl: string) => createConnectTransport({ httpVersion: "2", baseUrl })],
    ["Connect JSON", (baseUrl: string) => createConnectTransport({ httpVersion: "2", baseUrl, useBinaryFormat: false })],
    ["gRPC", (baseUrl: string) => createGrpcTransport({ baseUrl })],
    ["gRPC-Web", (baseUrl: string) => createGrpcWebTransport({ httpVersion: "2", baseUrl })],
  ] as const) {
    it(`a ${protocol} client is read and answered like a node's own (binary streams take the compiled codec, JSON the generated one)`, async () => {
      const client = createClient(PeerService, make(`http://${served.address}/internal`));
      const base = Date.now() * 1000;
      const key = `proto-${protocol}`;
      const requests = new AsyncQueue<ExchangeRequest>();
      const responses = client.exchange(requests);
      requests.push(create(ExchangeRequestSchema, {
        id: 7n,
        call: { case: "set", value: create(SetRequestSchema, { from: "peer-x", entries: [create(EntrySchema, { key, value: new TextEncoder().encode("vé"), version: BigInt(base), origin: "peer-x", lastUpdatedUnixMs: BigInt(Math.floor(base / 1000)) })] }) },
      }));
      const answers: ExchangeResponse[] = [];
      for await (const r of responses) {
        answers.push(r);
        if (answers.length === 1) {
          requests.push(create(ExchangeRequestSchema, { id: 8n, call: { case: "get", value: create(GetRequestSchema, { keys: [key, "absent"] }) } }));
          requests.close();
        }
      }
      expect(answers.map((a) => a.id)).to.deep.equal([7n, 8n]);
      const set = answers[0]?.result;
      expect(set?.case === "set" && set.value.outcomes).to.deep.equal([WireOutcome.APPLIED]);
      const got = answers[1]?.result;
      expect(got?.case).to.equal("get");
      if (got?.case !== "get") return;
      expect(got.value.results.map((r) => r.found)).to.deep.equal([true, false]);
      expect(new TextDecoder().decode(got.value.results[0]?.entry?.value)).to.equal("vé");
    });
  }

  for (const [what, field] of [
    // The frame is well formed, so Connect's own parse passes it on and the codec refuses it.
    ["its get call (field 5) holds the tag of a varint with the value cut off", { no: 5, wireType: WireType.LengthDelimited, data: new Uint8Array([1, 0x08]) }],
    // Connect's own parse of the frame fails (it says "internal"; the stream says the caller's).
    ["it ends in the tag of its id, the value cut off", { no: 1, wireType: WireType.Varint, data: new Uint8Array(0) }],
  ] as const) {
    it(`a binary frame that is not an ExchangeRequest (${what}) ends the stream with INVALID_ARGUMENT (parse binary), and the next stream is served`, async () => {
      const client = createClient(RAW_EXCHANGE_SERVICE, createConnectTransport({ httpVersion: "2", baseUrl: `http://${served.address}/internal` }));
      const cut = create(EmptySchema);
      cut.$unknown = [{ ...field }];
      const err = await (async () => {
        const frames = new AsyncQueue<typeof cut>();
        frames.push(cut);
        frames.close();
        for await (const _ of client.exchange(frames)) void _;
      })().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConnectError);
      expect((err as ConnectError).code).to.equal(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).to.match(/^parse binary: /);
      const to = { id: "ex1", address: served.address };
      expect(await transport.get(to, ["after"])).to.have.length(1);
    });
  }

  it("the channel turns an error frame into a CacheError with the frame's code", async () => {
    const fake = typedWire(async function* (reqs: AsyncIterable<ExchangeRequest>) {
      for await (const r of reqs) {
        yield create(ExchangeResponseSchema, { id: r.id, result: { case: "error", value: { code: "DRAINING", message: "node is draining" } } });
      }
    });
    const channel = new ExchangeChannel(fake, systemTimers, 1000);
    const err = await channel.call({ case: "get", value: create(GetRequestSchema, { keys: ["k"] }) }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CacheError);
    expect((err as CacheError).code).to.equal("DRAINING");
    channel.close();
  });

  it("rotate() moves the channel to a new stream without failing a call: the old stream answers what it has, then ends", async () => {
    // A receiver that answers each frame only when told, and ends a stream once its caller has.
    const streams: Array<{ ended: boolean; answer: () => void }> = [];
    const fake = typedWire((reqs: AsyncIterable<ExchangeRequest>) => {
      const out = new AsyncQueue<ExchangeResponse>();
      const waiting: ExchangeRequest[] = [];
      const entry = { ended: false, answer: () => void out.push(create(ExchangeResponseSchema, { id: waiting.shift()!.id, result: { case: "get", value: { results: [] } } })) };
      streams.push(entry);
      void (async () => {
        for await (const r of reqs) waiting.push(r);
        entry.ended = true;
        while (waiting.length > 0) entry.answer();
        out.close();
      })();
      return out;
    });
    const channel = new ExchangeChannel(fake, systemTimers, 5000);
    const get = () => channel.call({ case: "get", value: create(GetRequestSchema, { keys: ["k"] }) });
    const before = get();
    await new Promise((r) => setImmediate(r));
    channel.rotate();
    const after = get();
    await new Promise((r) => setImmediate(r));
    expect(streams, "the call after rotate() opened a second stream").to.have.length(2);
    expect(streams[0]!.ended, "the first stream was ended from the caller's side").to.equal(true);
    expect((await before).result.case, "the call pending on the old stream was answered").to.equal("get");
    streams[1]!.answer();
    expect((await after).result.case).to.equal("get");
    channel.close();
  });

  it("forwarded writes are coordinated by the receiver and answer with its version and origin", async () => {
    const to = { id: "ex1", address: served.address };
    const [r] = await transport.forward(to, { from: "peer-x", consistency: "one", writes: [{ kind: "set", key: "fw", value: "hello", ttlMs: 0 }] });
    expect(r?.errorCode).to.equal("");
    expect(r?.origin).to.equal("ex1");
    expect(node.store.get("fw")?.value).to.equal("hello");
  });

  it("a call on a peer that is gone fails with UNAVAILABLE, and once the peer is back the next call opens a new stream", async () => {
    const build = () =>
      createNode(testConfig({ SERVICE_NODE_ID: "ex2", SERVICE_DIST_ADDR: "127.0.0.1:1", SERVICE_REPLICATION: "1" }), {
        logger: recordingLogger("error"), clock: systemClock, timers: systemTimers, random: systemRandom, documents: DOCS, serviceVersion: "test",
      });
    const first = build();
    const s1 = await serve(first.peerHandler);
    const port = Number(s1.address.split(":")[1]);
    const to = { id: "ex2", address: s1.address };
    expect((await transport.set(to, "peer-x", [record("a", "1", Date.now() * 1000)])).map((o) => o.kind)).to.deep.equal(["applied"]);
    await s1.server.close();
    const failed = await transport.set(to, "peer-x", [record("a", "2", Date.now() * 1000 + 1)]).catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(CacheError);
    expect((failed as CacheError).code).to.equal("UNAVAILABLE");

    const second = build();
    const s2 = createPeerServer(second.peerHandler);
    await new Promise<void>((r) => s2.server.listen(port, "127.0.0.1", r));
    let answer: unknown;
    for (let i = 0; i < 20 && !Array.isArray(answer); i++) {
      answer = await transport.set(to, "peer-x", [record("b", "3", Date.now() * 1000 + 2)]).catch((e: unknown) => e);
      if (!Array.isArray(answer)) await new Promise((r) => setTimeout(r, 100));
    }
    expect((answer as Array<{ kind: string }>).map((o) => o.kind)).to.deep.equal(["applied"]);
    expect(second.store.get("b")?.value).to.equal("3");
    await s2.close();
    await first.stop();
    await second.stop();
  });

  // What a replica decides on when an increment's forward fails (transport/delivery.ts).
  for (const threshold of [0, 1024]) {
    it(`a forward to a port nobody listens on is never delivered (compression threshold ${threshold}); one cut or timed out after it went out may have been`, async () => {
      const closed = http2.createServer();
      await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
      const closedPort = (closed.address() as net.AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      // A peer that reads every frame and never answers; its sessions are kept for the test to cut.
      const sessions: http2.ServerHttp2Session[] = [];
      let frames = 0;
      const h2 = mutePeer(() => frames++);
      h2.on("session", (s) => sessions.push(s));
      await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
      const t = new ConnectPeerTransport({ compressionThresholdBytes: threshold, timeoutMs: 400 });
      const req = { from: "x", consistency: "quorum" as const, writes: [{ kind: "incr" as const, key: "c", value: "", ttlMs: 0, delta: 1, initial: 0 }] };
      const refused = await t.forward({ id: "gone", address: `127.0.0.1:${closedPort}` }, req).catch((e: unknown) => e);
      expect((refused as CacheError).code).to.equal("UNAVAILABLE");
      expect(neverDelivered(refused), "connection refused").to.equal(true);
      const to = { id: "mute", address: `127.0.0.1:${(h2.address() as net.AddressInfo).port}` };
      const timedOut = await t.forward(to, req).catch((e: unknown) => e);
      expect((timedOut as CacheError).code).to.equal("UNAVAILABLE");
      expect(neverDelivered(timedOut), "timed out after it went out").to.equal(false);
      const pending = t.forward(to, req).catch((e: unknown) => e);
      // Cut once the peer has read the call (it went out).
      for (let i = 0; i < 300 && frames < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(frames, "the peer read both calls").to.equal(2);
      for (const s of sessions) s.destroy();
      const cut = await pending;
      expect((cut as CacheError).code).to.equal("UNAVAILABLE");
      expect(neverDelivered(cut), "connection lost while it was out").to.equal(false);
      await t.close();
      h2.close();
    });
  }

  it("times a call out after the call timeout even when the stream stays open", async () => {
    const h2 = mutePeer();
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    const slow = new ConnectPeerTransport({ compressionThresholdBytes: 0, timeoutMs: 300 });
    const started = Date.now();
    const err = await slow.set({ id: "slow", address: `127.0.0.1:${(h2.address() as net.AddressInfo).port}` }, "x", [record("a", "1", 1)]).catch((e: unknown) => e);
    expect((err as CacheError).code).to.equal("UNAVAILABLE");
    expect(Date.now() - started).to.be.within(250, 3000);
    await slow.close();
    h2.close();
  });

  it("a call that times out on a connection that answers nothing resets it: the next call opens a new connection", async () => {
    const h2 = mutePeer();
    let connections = 0;
    h2.on("connection", () => connections++);
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    const silent = new ConnectPeerTransport({ compressionThresholdBytes: 0, timeoutMs: 200 });
    const to = { id: "silent", address: `127.0.0.1:${(h2.address() as net.AddressInfo).port}` };
    for (let i = 0; i < 2; i++) expect(((await silent.set(to, "x", [record(`s${i}`, "1", 1)]).catch((e: unknown) => e)) as CacheError).code).to.equal("UNAVAILABLE");
    expect(connections, "each timed-out call on the silent connection dropped it").to.equal(2);
    await silent.close();
    h2.close();
  });

  it("a call that times out while the stream keeps answering others fails alone: the stream and its other pending calls live on", async () => {
    // A peer that never answers key "slow", answers "late" after 150 ms and the rest at once.
    const h2 = http2.createServer(
      connectNodeAdapter({
        requestPathPrefix: "/internal",
        routes: (router) =>
          router.service(PeerService, {
            exchange: async function* (requests) {
              const out = new AsyncQueue<ExchangeResponse>();
              void (async () => {
                for await (const r of requests) {
                  const key = r.call.case === "set" ? r.call.value.entries[0]?.key : "";
                  const answer = create(ExchangeResponseSchema, { id: r.id, result: { case: "set", value: { outcomes: [WireOutcome.APPLIED], node: "busy" } } });
                  if (key === "late") setTimeout(() => out.push(answer), 150);
                  else if (key !== "slow") out.push(answer);
                }
              })();
              yield* out;
            },
          }),
      }),
    );
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    const busy = new ConnectPeerTransport({ compressionThresholdBytes: 0, timeoutMs: 300 });
    const to = { id: "busy", address: `127.0.0.1:${(h2.address() as net.AddressInfo).port}` };
    await busy.set(to, "x", [record("warm", "1", 1)]);
    const slow = busy.set(to, "x", [record("slow", "1", 1)]).catch((e: unknown) => e);
    // answers keep coming on the stream while "slow" waits
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 40));
      await busy.set(to, "x", [record(`fast${i}`, "1", 1)]);
    }
    const late = busy.set(to, "x", [record("late", "1", 1)]); // pending when "slow" times out
    expect(((await slow) as CacheError).code).to.equal("UNAVAILABLE");
    const outcomes = await late;
    expect(outcomes.map((o) => o.kind)).to.deep.equal(["applied"]);
    await busy.close();
    h2.close();
  });

  for (const threshold of [0, 1024]) {
    it(`with SERVICE_COMPRESSION_THRESHOLD=${threshold} the caller ${threshold ? "accepts" : "does not accept"} compressed answers`, async () => {
      const seen: string[] = [];
      const recorded = await serve((req, res) => {
        seen.push(String(req.headers["connect-accept-encoding"] ?? req.headers["accept-encoding"] ?? ""));
        node.peerHandler(req, res);
      });
      const t = new ConnectPeerTransport({ compressionThresholdBytes: threshold });
      await t.set({ id: "ex1", address: recorded.address }, "x", [record("enc", "1", 1)]);
      await t.close();
      await recorded.server.close();
      expect(seen.length).to.be.greaterThan(0);
      for (const accepted of seen) {
        if (threshold) expect(accepted).to.contain("gzip");
        else expect(accepted).to.not.match(/gzip|br/);
      }
    });
  }

  it("falls back to unary calls for a peer that does not implement Exchange", async () => {
    const impl = peerServiceImpl(node.endpoint);
    const { exchange: _omit, ...unaryOnly } = impl;
    void _omit;
    const h2 = http2.createServer(connectNodeAdapter({ requestPathPrefix: "/internal", routes: (router) => router.service(PeerService, unaryOnly) }));
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    const t = new ConnectPeerTransport({ compressionThresholdBytes: 0 });
    const to = { id: "ex1", address: `127.0.0.1:${(h2.address() as net.AddressInfo).port}` };
    const out = await t.set(to, "peer-x", [record("fallback", "v", Date.now() * 1000 + 99)]);
    expect(out.map((o) => o.kind)).to.deep.equal(["applied"]);
    expect((await t.get(to, ["fallback"]))[0]?.record?.value).to.equal("v");
    await t.close();
    h2.close();
  });
});
