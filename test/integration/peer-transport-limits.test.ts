// Peer transport limits and compression, over a real Connect server on loopback: request bodies
// above SERVICE_COMPRESSION_THRESHOLD are gzipped (and accepted), smaller ones are not; bodies
// over 16 MiB are refused both ways.
import http2 from "node:http2";
import type net from "node:net";
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { systemClock, systemTimers } from "../../src/core/clock.js";
import { CacheError } from "../../src/core/errors.js";
import { PEER_BODY_BYTES_MAX } from "../../src/core/limits.js";
import { systemRandom } from "../../src/core/random.js";
import { recordingLogger } from "../../src/log/index.js";
import { createNode, type HypercacheNode } from "../../src/node.js";
import { ConnectPeerTransport, peerServiceImpl } from "../../src/peer/index.js";
import { EntrySchema, PeerService, SetRequestSchema } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { testConfig } from "../helpers/test-config.js";

describe("peer transport: compression threshold and body caps", function () {
  this.timeout(30_000);
  let node: HypercacheNode;
  let server: http2.Http2Server;
  let address: string;
  const seen: Array<{ method: string; encoding: string | null }> = [];

  before(async () => {
    node = createNode(testConfig({ SERVICE_NODE_ID: "lim1", SERVICE_DIST_ADDR: "127.0.0.1:1", SERVICE_REPLICATION: "1" }), {
      logger: recordingLogger("error"), clock: systemClock, timers: systemTimers, random: systemRandom, documents: { client: "", management: "" }, serviceVersion: "test",
    });
    // Records how each call's body was encoded (unary: Content-Encoding; streams: Connect-Content-Encoding).
    const recordEncoding: Interceptor = (next) => async (req) => {
      seen.push({ method: req.method.name, encoding: req.header.get("content-encoding") ?? req.header.get("connect-content-encoding") });
      return next(req);
    };
    server = http2.createServer(
      connectNodeAdapter({
        requestPathPrefix: "/internal",
        readMaxBytes: PEER_BODY_BYTES_MAX,
        writeMaxBytes: PEER_BODY_BYTES_MAX,
        interceptors: [recordEncoding],
        routes: (router) => router.service(PeerService, peerServiceImpl(node.endpoint)),
      }),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await node.stop();
  });

  const record = (key: string, bytes: number, version: number) => ({
    key, value: "x".repeat(bytes), version, origin: "t", lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: false,
  });

  it("with a threshold the exchange stream negotiates gzip (Connect-Content-Encoding) and both large and small pushes are applied", async () => {
    // On a stream, Connect compresses each message above compressMinBytes inside its envelope;
    // the per-message choice by size is shown on the unary path below.
    const t = new ConnectPeerTransport({ compressionThresholdBytes: 1024 });
    const to = { id: "lim1", address };
    seen.length = 0;
    const base = Date.now() * 1000;
    expect((await t.set(to, "t", [record("big", 64 * 1024, base)])).map((o) => o.kind)).to.deep.equal(["applied"]);
    expect((await t.set(to, "t", [record("small", 10, base + 1)])).map((o) => o.kind)).to.deep.equal(["applied"]);
    expect(seen.filter((s) => s.method === "Exchange")).to.deep.equal([{ method: "Exchange", encoding: "gzip" }]);
    expect(node.store.get("big")?.value.length).to.equal(64 * 1024);
    expect(node.store.get("small")?.value).to.equal("x".repeat(10));
    await t.close();
  });

  it("unary calls above the threshold carry Content-Encoding: gzip (the fallback path for peers without Exchange)", async () => {
    const client = createClient(PeerService, createConnectTransport({ httpVersion: "2", baseUrl: `http://${address}/internal`, sendCompression: (await import("@connectrpc/connect-node")).compressionGzip, compressMinBytes: 1024, useBinaryFormat: true }));
    seen.length = 0;
    const big = create(SetRequestSchema, { from: "t", entries: [create(EntrySchema, { key: "unary-big", value: new Uint8Array(8 * 1024).fill(65), version: BigInt(Date.now()) * 1000n, origin: "t" })] });
    await client.set(big);
    expect(seen.at(-1)).to.deep.equal({ method: "Set", encoding: "gzip" });
    const small = create(SetRequestSchema, { from: "t", entries: [create(EntrySchema, { key: "unary-small", value: new Uint8Array(10), version: BigInt(Date.now()) * 1000n + 5n, origin: "t" })] });
    await client.set(small);
    expect(seen.at(-1)?.encoding ?? null).to.equal(null);
  });

  it("without a threshold (0, the default) nothing is compressed", async () => {
    const t = new ConnectPeerTransport({ compressionThresholdBytes: 0 });
    seen.length = 0;
    await t.set({ id: "lim1", address }, "t", [record("plain", 64 * 1024, Date.now() * 1000 + 7)]);
    expect(seen.every((s) => s.encoding === null)).to.equal(true);
    await t.close();
  });

  it("a request body over 16 MiB is refused by the receiver (resource exhausted), and the node keeps serving", async () => {
    const client = createClient(PeerService, createConnectTransport({ httpVersion: "2", baseUrl: `http://${address}/internal`, useBinaryFormat: true }));
    const huge = create(SetRequestSchema, { from: "t", entries: [create(EntrySchema, { key: "huge", value: new Uint8Array(PEER_BODY_BYTES_MAX + 1024), version: 1n, origin: "t" })] });
    const err = await client.set(huge).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).code).to.equal(Code.ResourceExhausted);
    expect(node.store.peek("huge")).to.equal(undefined);
    const t = new ConnectPeerTransport({ compressionThresholdBytes: 0 });
    expect((await t.get({ id: "lim1", address }, ["big"]))[0]?.record?.key).to.equal("big");
    await t.close();
  });

  it("a push over 16 MiB fails with a CacheError without being stored, and the channel keeps working", async () => {
    const t = new ConnectPeerTransport({ compressionThresholdBytes: 0 });
    seen.length = 0;
    const err = await t.set({ id: "lim1", address }, "t", [record("too-big", PEER_BODY_BYTES_MAX + 1024, 9)]).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CacheError);
    expect(node.store.peek("too-big")).to.equal(undefined);
    // The channel is still usable afterwards.
    expect((await t.set({ id: "lim1", address }, "t", [record("after-too-big", 10, Date.now() * 1000 + 11)])).map((o) => o.kind)).to.deep.equal(["applied"]);
    await t.close();
  });
});
