// HTTP/2 stream cases for the dist listener, mostly the Exchange path the nodes use between them:
// envelopes of random ExchangeRequest messages (every call, unknown fields included), of junk, or
// of a message with bytes flipped, cut or added; flags and declared lengths that lie; the body cut
// into random pieces (down to one byte each); headers that send the stream to the raw path or to
// Connect's handler (a deadline, compression, gRPC, JSON), with an Expect header or an authority
// that is not a host now and then; and a caller that ends or resets.
import { gzipSync } from "node:zlib";
import { toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { ExchangeRequestSchema } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { messageArb } from "../helpers/protobuf-arbitraries.js";
import { CANARY_PREFIX, PEER_METHODS, PEER_PREFIX, type Tokens } from "./case-arbitraries.js";
import type { StreamCase } from "./fuzz-case.js";
import { EXCHANGE_PATH } from "./h2-stream.js";

/** The largest envelope the dist listener reads (PEER_BODY_BYTES_MAX). */
const READ_MAX_BYTES = 16 * 1024 * 1024;

const frameArb: fc.Arbitrary<Uint8Array> = messageArb(ExchangeRequestSchema, { unknown: true }).map((m) => toBinary(ExchangeRequestSchema, m as never));

/** A message's bytes with one change: bytes flipped, cut short, or junk inserted. */
const mutatedFrameArb: fc.Arbitrary<[Uint8Array, string]> = fc
  .tuple(frameArb, fc.constantFrom("flip", "cut", "insert"), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 }))
  .map(([frame, how, at, junk]): [Uint8Array, string] => {
    const b = Buffer.from(frame);
    const i = b.length === 0 ? 0 : at % b.length;
    if (how === "flip" && b.length > 0) b[i] = (b[i] as number) ^ (junk[0] as number || 0xff);
    if (how === "cut") return [b.subarray(0, i), "frame-cut"];
    if (how === "insert") return [Buffer.concat([b.subarray(0, i), junk, b.subarray(i)]), "frame-insert"];
    return [b, "frame-flip"];
  });

const payloadArb: fc.Arbitrary<[Uint8Array, string]> = fc.oneof(
  { weight: 6, arbitrary: frameArb.map((f): [Uint8Array, string] => [f, "frame"]) },
  { weight: 2, arbitrary: mutatedFrameArb },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((u): [Uint8Array, string] => [u, "junk"]) },
);

const flagsArb = fc.oneof({ weight: 14, arbitrary: fc.constant(0) }, fc.constantFrom(1, 2, 3, 0x80), fc.integer({ min: 0, max: 255 }));

/** The declared length: the payload's own, or off by a little, or past the read cap, or the largest there is. */
const lengthArb = fc.oneof(
  { weight: 14, arbitrary: fc.constant<number | "exact">("exact") },
  fc.integer({ min: -4, max: 6 }).filter((d) => d !== 0),
  fc.constantFrom(READ_MAX_BYTES, READ_MAX_BYTES + 1, 0xffffffff),
);

interface Envelope {
  payload: [Uint8Array, string];
  flags: number;
  length: number | "exact";
  /** Compress a payload flagged compressed when the stream declared gzip. */
  gzipFlagged: boolean;
}

const envelopeArb: fc.Arbitrary<Envelope> = fc.record({ payload: payloadArb, flags: flagsArb, length: lengthArb, gzipFlagged: fc.boolean() });

function encode(e: Envelope, gzipDeclared: boolean): { bytes: Buffer; mutation?: string } {
  const [message, kind] = e.payload;
  // the canaries are never written: a message that names one is sent empty (checked before any
  // compression hides it)
  const raw = Buffer.from(message).includes(CANARY_PREFIX) ? new Uint8Array() : message;
  const data = gzipDeclared && e.gzipFlagged && (e.flags & 1) === 1 ? gzipSync(raw) : Buffer.from(raw);
  const declared = e.length === "exact" ? data.length : e.length > 0xffff ? e.length : Math.max(0, data.length + e.length);
  const head = Buffer.alloc(5);
  head[0] = e.flags;
  head.writeUInt32BE(declared >>> 0, 1);
  const lies = [...(kind !== "frame" ? [kind] : []), ...(e.flags !== 0 ? [`flags-${e.flags}`] : []), ...(declared !== data.length ? ["length-lie"] : [])];
  return { bytes: Buffer.concat([head, data]), ...(lies.length > 0 ? { mutation: lies.join("+") } : {}) };
}

/** Cuts `body` at the given points; "bytes" cuts it into one-byte pieces (small bodies only). */
function cut(body: Buffer, how: "whole" | "random" | "bytes", points: readonly number[]): Buffer[] {
  if (body.length === 0 || how === "whole") return [body];
  if (how === "bytes" && body.length <= 512) return [...body].map((b) => Buffer.of(b));
  const at = [...new Set(points.map((p) => p % body.length))].filter((p) => p > 0).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const p of at) {
    pieces.push(body.subarray(from, p));
    from = p;
  }
  pieces.push(body.subarray(from));
  return pieces;
}

const headersArb = fc.record({
  contentType: fc.oneof(
    { weight: 12, arbitrary: fc.constant("application/connect+proto") },
    fc.constantFrom("application/connect+json", "application/grpc", "application/grpc+proto", "application/grpc-web+proto", "application/proto", "text/plain", "APPLICATION/CONNECT+PROTO", ""),
  ),
  version: fc.oneof({ weight: 8, arbitrary: fc.constant("1") }, fc.constantFrom("", "2")),
  timeout: fc.oneof({ weight: 8, arbitrary: fc.constant("") }, fc.constantFrom("5000", "0", "-1", "abc", "99999999999")),
  encoding: fc.oneof({ weight: 8, arbitrary: fc.constant("") }, fc.constantFrom("identity", "gzip", "br")),
  auth: fc.oneof({ weight: 8, arbitrary: fc.constant("peer") }, fc.constantFrom("none", "wrong")),
  // Node's compat layer answers Expect itself; Connect builds a URL from the authority
  expect: fc.oneof({ weight: 9, arbitrary: fc.constant("") }, fc.constantFrom("100-continue", "200-ok")),
  authority: fc.oneof({ weight: 9, arbitrary: fc.constant("") }, fc.constantFrom("[", "a b", "%", "x:99999", "::1")),
});

/** Stream cases for the dist listener; `tokens.peer` is the node's peer token. */
export function streamCaseArb(tokens: Tokens): fc.Arbitrary<StreamCase> {
  return fc
    .record({
      path: fc.oneof({ weight: 9, arbitrary: fc.constant(EXCHANGE_PATH) }, fc.constantFrom(...PEER_METHODS).map((m) => PEER_PREFIX + m)),
      headers: headersArb,
      envelopes: fc.array(envelopeArb, { maxLength: 8 }),
      trailing: fc.oneof({ weight: 6, arbitrary: fc.constant(new Uint8Array()) }, fc.uint8Array({ minLength: 1, maxLength: 7 })),
      cutting: fc.constantFrom<"whole" | "random" | "bytes">("whole", "random", "random", "bytes"),
      points: fc.array(fc.nat(), { maxLength: 12 }),
      finish: fc.constantFrom<StreamCase["finish"]>("end", "end", "end", "end", "end", "end", "end", "end", "reset", "reset-early"),
    })
    .map(({ path, headers: h, envelopes, trailing, cutting, points, finish }): StreamCase => {
      const grpc = h.contentType.startsWith("application/grpc");
      const gzipDeclared = h.encoding === "gzip";
      const encoded = envelopes.map((e) => encode(e, gzipDeclared));
      let body = Buffer.concat([...encoded.map((e) => e.bytes), Buffer.from(trailing)]);
      // the canaries are never written: a case that would name one sends nothing instead
      if (body.includes(CANARY_PREFIX)) body = Buffer.alloc(0);
      const headers: [string, string][] = [];
      if (h.contentType !== "") headers.push(["content-type", h.contentType]);
      if (!grpc && h.version !== "") headers.push(["connect-protocol-version", h.version]);
      if (grpc) headers.push(["te", "trailers"]);
      if (h.timeout !== "") headers.push([grpc ? "grpc-timeout" : "connect-timeout-ms", grpc ? `${h.timeout}m` : h.timeout]);
      if (h.encoding !== "") headers.push([grpc ? "grpc-encoding" : "connect-content-encoding", h.encoding]);
      if (h.expect !== "") headers.push(["expect", h.expect]);
      if (h.authority !== "") headers.push([":authority", h.authority]);
      if (h.auth === "peer") headers.push(["authorization", `Bearer ${tokens.peer}`]);
      if (h.auth === "wrong") headers.push(["authorization", "Bearer not-the-token"]);
      const mutations = [
        "h2",
        ...(h.contentType !== "application/connect+proto" ? [`type:${h.contentType || "none"}`] : []),
        ...(h.timeout !== "" ? ["deadline"] : []),
        ...(h.encoding !== "" ? [`encoding:${h.encoding}`] : []),
        ...(h.auth !== "peer" ? [`auth:${h.auth}`] : []),
        ...(h.expect !== "" ? [`expect:${h.expect}`] : []),
        ...(h.authority !== "" ? [`authority:${h.authority}`] : []),
        ...encoded.flatMap((e) => (e.mutation ? [e.mutation] : [])),
        ...(trailing.length > 0 ? ["trailing-bytes"] : []),
        ...(cutting !== "whole" ? [`cut:${cutting}`] : []),
        ...(finish !== "end" ? [finish] : []),
      ];
      return { kind: "h2", listener: "dist", path, headers, pieces: cut(body, cutting, points).map((p) => p.toString("base64")), finish, mutations };
    });
}
