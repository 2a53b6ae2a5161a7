// A request message the caller got wrong (not protobuf) is the caller's error on every protocol
// the dist listener speaks: Connect answers 400 invalid_argument, gRPC and gRPC-Web grpc-status 3
// (INVALID_ARGUMENT), where connect-es says internal (HTTP 500, grpc-status 13). The exchange
// fuzz family found the gRPC ones. A compressed message on a call that declared no compression
// stays INTERNAL, as the gRPC specification prescribes.
import http2 from "node:http2";
import type net from "node:net";
import { expect } from "chai";
import { systemClock, systemTimers } from "../../src/core/clock.js";
import { systemRandom } from "../../src/core/random.js";
import { recordingLogger } from "../../src/log/index.js";
import { createNode, type HypercacheNode } from "../../src/node.js";
import { createPeerServer, type PeerServer } from "../../src/peer/index.js";
import { createPeerHandler } from "../../src/peer/peer-handler.js";
import { PeerService } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { envelopesOf, GRPC_WEB_TRAILER, trailerFields } from "../helpers/grpc-web.js";
import { testConfig } from "../helpers/test-config.js";

const FORWARD = `/internal/${PeerService.typeName}/${PeerService.method.forward.name}`;
/** A length-prefixed message that is not protobuf (field number 0). */
const NOT_PROTOBUF = Buffer.from([0, 0, 0, 0, 2, 0, 0]);
const COMPRESSED_UNDECLARED = Buffer.from([1, 0, 0, 0, 2, 0, 0]);

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}

function send(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": FORWARD, ...headers });
    const got: Answer = { status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0) };
    stream.on("response", (h) => ((got.status = Number(h[":status"])), (got.headers = h)));
    stream.on("trailers", (t) => (got.trailers = t));
    stream.on("data", (c: Buffer) => (got.body = Buffer.concat([got.body, c])));
    stream.on("end", () => resolve(got));
    stream.on("error", reject);
    stream.end(body);
  });
}

/** grpc-status and grpc-message of a gRPC answer (trailers, or headers for a trailers-only answer). */
function grpcStatus(a: Answer): { status: string; message: string } {
  const from = a.trailers["grpc-status"] !== undefined ? a.trailers : a.headers;
  return { status: String(from["grpc-status"]), message: decodeURIComponent(String(from["grpc-message"] ?? "")) };
}

/** grpc-status and grpc-message of a gRPC-Web answer's trailer frame (flags 0x80), its last envelope. */
function grpcWebStatus(a: Answer): { status: string; message: string } {
  const { envelopes, problem } = envelopesOf(a.body);
  expect(problem, "the trailer frame's length is the bytes that follow it").to.equal(undefined);
  const trailer = envelopes[envelopes.length - 1];
  if (!trailer || (trailer.flags & GRPC_WEB_TRAILER) === 0) throw new Error("no trailer frame");
  const fields = trailerFields(trailer.data);
  return { status: String(fields.get("grpc-status")), message: decodeURIComponent(fields.get("grpc-message") ?? "") };
}

describe("peer listener: a request message that is not protobuf is the caller's error on every protocol", function () {
  this.timeout(20_000);
  let node: HypercacheNode;
  let served: PeerServer;
  let session: http2.ClientHttp2Session;

  before(async () => {
    node = createNode(testConfig({ SERVICE_NODE_ID: "pe1", SERVICE_DIST_ADDR: "127.0.0.1:1", SERVICE_REPLICATION: "1" }), {
      logger: recordingLogger("error"), clock: systemClock, timers: systemTimers, random: systemRandom, documents: { client: "", management: "" }, serviceVersion: "test",
    });
    served = createPeerServer(createPeerHandler(node.endpoint, { token: undefined, mutualTls: false, insecure: true }));
    await new Promise<void>((r) => served.server.listen(0, "127.0.0.1", r));
    session = http2.connect(`http://127.0.0.1:${(served.server.address() as net.AddressInfo).port}`);
  });
  after(async () => {
    session.destroy();
    await served.close();
    await node.stop();
  });

  it("Connect: 400 invalid_argument", async () => {
    const a = await send(session, { "content-type": "application/proto", "connect-protocol-version": "1" }, NOT_PROTOBUF.subarray(5));
    expect(a.status).to.equal(400);
    expect(JSON.parse(a.body.toString())).to.include({ code: "invalid_argument" });
  });

  it("gRPC: grpc-status 3 (INVALID_ARGUMENT) with Connect's message", async () => {
    const a = await send(session, { "content-type": "application/grpc", te: "trailers" }, NOT_PROTOBUF);
    expect(a.status).to.equal(200);
    const s = grpcStatus(a);
    expect(s.status, s.message).to.equal("3");
    expect(s.message).to.match(/^parse binary: /);
  });

  it("gRPC-Web: grpc-status 3 in the trailer frame, whose length is rewritten with it", async () => {
    const a = await send(session, { "content-type": "application/grpc-web+proto" }, NOT_PROTOBUF);
    expect(a.status).to.equal(200);
    const s = grpcWebStatus(a);
    expect(s.status, s.message).to.equal("3");
    expect(s.message).to.match(/^parse binary: /);
  });

  it("gRPC: a compressed message on a call that declared no compression stays INTERNAL (13), as the gRPC specification prescribes", async () => {
    const a = await send(session, { "content-type": "application/grpc", te: "trailers" }, COMPRESSED_UNDECLARED);
    expect(grpcStatus(a).status).to.equal("13");
  });
});
