import { expect } from "chai";
import { create, toBinary } from "@bufbuild/protobuf";
import { envelope } from "../../../src/peer/connect-envelopes.js";
import { ExchangeResponseSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { encodeSegment } from "../../fuzz/case-arbitraries.js";
import { serialize, type HttpCase, type StreamCase } from "../../fuzz/fuzz-case.js";
import { EXCHANGE_PATH, type StreamExchange } from "../../fuzz/h2-stream.js";
import { judgeStream } from "../../fuzz/stream-oracle.js";
import { failureSignature, judge, type OracleContext } from "../../fuzz/oracle.js";
import { parseAnswer, type Exchange } from "../../fuzz/raw-exchange.js";

const ctx: OracleContext = { documented: [200, 400, 401, 403, 404, 503], allDocumented: [200, 400, 401, 403, 404, 413, 415, 501, 503] };

function httpCase(over: Partial<HttpCase> = {}): HttpCase {
  return { kind: "http", listener: "client", operation: "client GET /v1/cache/{key}", method: "GET", target: "/v1/cache/k0", headers: [], body: "", framing: "length", mutations: [], ...over };
}

function answered(status: number, body: unknown, contentType = "application/json; charset=utf-8"): Exchange {
  return { answer: { status, headers: { "content-type": contentType }, body: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)) }, closedWithoutAnswer: false, timedOut: false, elapsedMs: 3 };
}

describe("fuzz oracle", () => {
  it("accepts a documented error with the envelope", () => {
    expect(judge(httpCase(), answered(404, { error: "no such key", code: "NOT_FOUND" }), ctx)).to.deep.equal([]);
  });

  it("rejects a 500, a hang, and a connection closed without an answer", () => {
    expect(judge(httpCase(), answered(500, { error: "x", code: "INTERNAL" }), ctx).join()).to.match(/500/);
    expect(judge(httpCase(), { closedWithoutAnswer: false, timedOut: true, elapsedMs: 10_000 }, ctx).join()).to.match(/hang/);
    expect(judge(httpCase(), { closedWithoutAnswer: true, timedOut: false, elapsedMs: 1 }, ctx).join()).to.match(/closed without an answer/);
  });

  it("lets junk bytes and a half-closed truncated body be answered by a close", () => {
    const closed: Exchange = { closedWithoutAnswer: true, timedOut: false, elapsedMs: 1 };
    expect(judge({ kind: "bytes", listener: "dist", bytes: "", mutations: ["junk"] }, closed, ctx)).to.deep.equal([]);
    expect(judge(httpCase({ framing: "truncated" }), closed, ctx)).to.deep.equal([]);
  });

  it("rejects an error without the envelope, with an unknown code, or with a code that does not match the status", () => {
    expect(judge(httpCase(), answered(400, "Bad Request", "text/plain"), ctx).join()).to.match(/JSON content type/);
    expect(judge(httpCase(), answered(400, { error: "x", code: "OOPS" }), ctx).join()).to.match(/unknown code/);
    expect(judge(httpCase(), answered(400, { error: "x", code: "NOT_FOUND" }), ctx).join()).to.match(/does not match/);
    expect(judge(httpCase(), answered(400, { code: "BAD_REQUEST" }), ctx).join()).to.match(/string "error"/);
  });

  it("accepts 417 with BAD_REQUEST (the Expect answer)", () => {
    expect(judge(httpCase(), answered(417, { error: "x", code: "BAD_REQUEST" }), ctx)).to.deep.equal([]);
  });

  it("rejects a status the operation does not document, unless the route itself was mutated", () => {
    const reply = answered(415, { error: "x", code: "UNSUPPORTED_MEDIA_TYPE" });
    expect(judge(httpCase(), answered(501, { error: "x", code: "NOT_IMPLEMENTED" }), ctx).join()).to.match(/not documented/);
    expect(judge(httpCase({ mutations: ["method:PATCH"] }), reply, ctx)).to.deep.equal([]);
  });

  it("accepts a documented non-envelope error body (a probe's 503) only for the operation that documents it, with its required fields", () => {
    const health = httpCase({ listener: "mgmt", operation: "mgmt GET /health", target: "/health" });
    const probe: OracleContext = { ...ctx, bodies: { 503: ["status"] } };
    expect(judge(health, answered(503, { status: "draining" }), probe)).to.deep.equal([]);
    expect(judge(health, answered(503, { state: "draining" }), probe).join()).to.match(/without "status"/);
    expect(judge(health, answered(503, { status: "draining" }), ctx).join()).to.match(/string "error"/);
    expect(judge(health, answered(400, { status: "draining" }), probe).join()).to.match(/string "error"/);
    // A path mutation may land on the same route (`/health/`): its body or the envelope, nothing else.
    expect(judge({ ...health, target: "/health/", mutations: ["path:dots"] }, answered(503, { status: "draining" }), probe)).to.deep.equal([]);
    expect(judge({ ...health, target: "/health/", mutations: ["path:dots"] }, answered(503, { state: "draining" }), probe).join()).to.match(/string "error"/);
    expect(judge({ ...health, mutations: ["method:POST"], method: "POST" }, answered(503, { status: "draining" }), { ...probe, method: "GET" }).join()).to.match(/string "error"/);
    // A method "mutation" to the operation's own method changes nothing (campaign fuzz seed 30001
    // found GET /readyz of a draining node, labelled method:GET, judged against the envelope).
    expect(judge({ ...health, mutations: ["method:GET"] }, answered(503, { status: "draining" }), { ...probe, method: "GET" })).to.deep.equal([]);
    expect(judge({ ...health, mutations: ["method:get"], method: "get" }, answered(503, { status: "draining" }), { ...probe, method: "GET" }).join()).to.match(/string "error"/);
    // Junk in the query string leaves the route, and so its documented bodies (fuzz seed 21000
    // found GET /readyz?&&&=& of a draining node judged against the envelope).
    expect(judge({ ...health, target: "/health?&&&=&", mutations: ["path:query-junk"] }, answered(503, { status: "draining" }), probe)).to.deep.equal([]);
  });

  it("names a failure by listener, mutation and problem class", () => {
    expect(failureSignature(httpCase({ mutations: ["body:nested"] }), ["the connection closed without an answer"])).to.equal("client|body:nested|closed");
    expect(failureSignature(httpCase(), ['500 Internal Server Error: "x"'])).to.equal("client|none|500");
  });
});

describe("fuzz wire helpers", () => {
  it("parses a Content-Length answer after a 100 Continue, and a chunked one", () => {
    const buf = Buffer.from("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}");
    expect(parseAnswer(buf, false, false)).to.deep.include({ status: 404 });
    const chunked = Buffer.from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    expect(parseAnswer(chunked, false, false)?.body.toString()).to.equal("abc");
    expect(parseAnswer(Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"), false, false)).to.equal(undefined);
  });

  it("serializes the framing a case asks for", () => {
    const c = httpCase({ method: "POST", body: Buffer.from("abc").toString("base64") });
    expect(serialize({ ...c, framing: "duplicate-length" }, "h").bytes.toString()).to.contain("Content-Length: 3\r\nContent-Length: 4\r\n");
    expect(serialize({ ...c, framing: "chunked" }, "h").bytes.toString()).to.match(/Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n$/);
    expect(serialize({ ...c, framing: "truncated" }, "h")).to.include({ halfClose: true });
  });

  it("percent-encodes every byte outside the unreserved set", () => {
    expect(encodeSegment("a/b c")).to.equal("a%2Fb%20c");
    expect(encodeSegment("é")).to.equal("%C3%A9");
  });
});

describe("fuzz oracle: the codes it knows", () => {
  it("knows every error code the server defines, at the server's status (a new code must reach the oracle too)", async () => {
    const { CODE_STATUS } = await import("../../fuzz/oracle.js");
    const { httpStatusFor, isErrorCode } = await import("../../../src/core/errors.js");
    const source = (await import("node:fs")).readFileSync(new URL("../../../src/core/errors.ts", import.meta.url), "utf8");
    const block = /export type ErrorCode =([^;]+);/.exec(source)?.[1] ?? "";
    const codes = [...block.matchAll(/"([A-Z_]+)"/g)].map((m) => m[1] as string);
    expect(codes.length).to.be.greaterThan(10);
    for (const code of codes) {
      expect(isErrorCode(code), code).to.equal(true);
      expect(CODE_STATUS[code], `the oracle does not know ${code}`).to.include(httpStatusFor(code as Parameters<typeof httpStatusFor>[0]));
    }
  });
});

describe("fuzz stream oracle (HTTP/2 streams on the dist listener)", () => {
  const streamCase = (over: Partial<StreamCase> = {}): StreamCase => ({ kind: "h2", listener: "dist", path: EXCHANGE_PATH, headers: [], pieces: [], finish: "end", mutations: ["h2"], ...over });
  const endStream = (json: unknown) => envelope(2, Buffer.from(JSON.stringify(json)));
  const answerFrame = (r: Parameters<typeof create<typeof ExchangeResponseSchema>>[1]) => envelope(0, toBinary(ExchangeResponseSchema, create(ExchangeResponseSchema, r)));
  const streamed = (body: Buffer, type = "application/connect+proto", over: Partial<StreamExchange> = {}): StreamExchange => ({
    answer: { status: 200, headers: { "content-type": type }, body, trailers: {} },
    timedOut: false,
    elapsedMs: 2,
    ...over,
  });
  const grpc = (status: string, message: string, type = "application/grpc"): StreamExchange => ({
    answer: { status: 200, headers: { "content-type": type }, body: Buffer.alloc(0), trailers: { "grpc-status": status, "grpc-message": encodeURIComponent(message) } },
    timedOut: false,
    elapsedMs: 2,
  });

  it("accepts whole answers ending with the end-of-stream envelope, an error from the caller's mistake included", () => {
    const body = Buffer.concat([answerFrame({ id: 1n, result: { case: "get", value: {} } }), endStream({})]);
    expect(judgeStream(streamCase(), streamed(body))).to.deep.equal([]);
    expect(judgeStream(streamCase(), streamed(endStream({ error: { code: "invalid_argument", message: "bad frame" } })))).to.deep.equal([]);
    expect(judgeStream(streamCase(), streamed(endStream({ error: { code: "internal", message: "received compressed envelope, but do not know how to decompress" } })))).to.deep.equal([]);
  });

  it("rejects an internal end of stream, an INTERNAL answer, a cut answer and a missing end of stream", () => {
    expect(judgeStream(streamCase(), streamed(endStream({ error: { code: "internal", message: "boom" } }))).join()).to.match(/end-of-stream error internal/);
    expect(judgeStream(streamCase(), streamed(endStream({ error: { code: "unknown", message: "x" } }))).join()).to.match(/end-of-stream error unknown/);
    const internal = Buffer.concat([answerFrame({ id: 1n, result: { case: "error", value: { code: "INTERNAL", message: "oops" } } }), endStream({})]);
    expect(judgeStream(streamCase(), streamed(internal)).join()).to.match(/code INTERNAL/);
    expect(judgeStream(streamCase(), streamed(endStream({}).subarray(0, 4))).join()).to.match(/ends inside an envelope/);
    expect(judgeStream(streamCase(), streamed(answerFrame({ id: 1n }))).join()).to.match(/without its end-of-stream envelope/);
  });

  it("rejects a hang, a 500, a failed session, a GOAWAY, a server reset and a session that serves nothing afterwards", () => {
    expect(judgeStream(streamCase(), { timedOut: true, elapsedMs: 15_000 }).join()).to.match(/hang/);
    expect(judgeStream(streamCase(), { answer: { status: 500, headers: {}, body: Buffer.alloc(0), trailers: {} }, timedOut: false, elapsedMs: 1 }).join()).to.match(/^500/);
    expect(judgeStream(streamCase(), streamed(endStream({}), undefined, { sessionError: "ECONNRESET" })).join()).to.match(/session failed/);
    expect(judgeStream(streamCase(), streamed(endStream({}), undefined, { goaway: 2 })).join()).to.match(/GOAWAY/);
    expect(judgeStream(streamCase(), { resetCode: 2, timedOut: false, elapsedMs: 1 }).join()).to.match(/reset the stream/);
    expect(judgeStream(streamCase(), streamed(endStream({}), undefined, { followUp: "status 503" })).join()).to.match(/well-formed stream afterwards/);
  });

  it("lets nghttp2 refuse an authority HTTP/2 does not allow with PROTOCOL_ERROR, and no other stream", () => {
    const reset: StreamExchange = { resetCode: 1, timedOut: false, elapsedMs: 1 };
    expect(judgeStream(streamCase({ mutations: ["h2", "authority:a b"] }), reset)).to.deep.equal([]);
    expect(judgeStream(streamCase(), reset).join()).to.match(/reset the stream \(code 1\)/);
    expect(judgeStream(streamCase({ mutations: ["h2", "authority:a b"] }), { ...reset, resetCode: 2 }).join()).to.match(/code 2/);
  });

  it("asks nothing of the answer to a stream the caller reset, but still wants its session to serve", () => {
    expect(judgeStream(streamCase({ finish: "reset" }), { resetCode: 8, timedOut: false, elapsedMs: 1 })).to.deep.equal([]);
    expect(judgeStream(streamCase({ finish: "reset-early" }), { timedOut: false, elapsedMs: 1, followUp: "closed without an answer" }).join()).to.match(/afterwards/);
  });

  it("judges gRPC and gRPC-Web statuses: INTERNAL from a parse error is a defect, the prescribed one is not", () => {
    expect(judgeStream(streamCase(), grpc("3", "parse binary: premature EOF"))).to.deep.equal([]);
    expect(judgeStream(streamCase(), grpc("13", "parse binary: premature EOF")).join()).to.match(/grpc-status 13/);
    expect(judgeStream(streamCase(), grpc("13", "received compressed envelope, but do not know how to decompress"))).to.deep.equal([]);
    const webTrailer = (text: string) => Buffer.concat([Buffer.from([0x80, 0, 0, 0, Buffer.byteLength(text)]), Buffer.from(text)]);
    expect(judgeStream(streamCase(), streamed(webTrailer("grpc-status: 13\r\ngrpc-message: x\r\n"), "application/grpc-web+proto")).join()).to.match(/grpc-status 13/);
    expect(judgeStream(streamCase(), streamed(webTrailer("grpc-status: 0\r\n"), "application/grpc-web+proto"))).to.deep.equal([]);
    expect(judgeStream(streamCase(), streamed(Buffer.alloc(0), "application/grpc")).join()).to.match(/without grpc-status/);
  });
});
