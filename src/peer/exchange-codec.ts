// The frames of a binary Exchange stream, read by binary-decoder.ts instead of protobuf-es's
// fromBinary. Connect has no hook for a message codec, so on a binary stream the Exchange method
// is registered (server) and called (client) with google.protobuf.Empty as its request and
// answer type: Empty has no fields, so Connect's own parse keeps every top-level field of a
// frame as it came (an unknown field: number, wire type, bytes), and its serialize writes them
// back as they are. This module turns those fields into the generated ExchangeRequest and
// ExchangeResponse messages and back, so that everything above it (the answer path, the
// channel's calls) sees the types of the contract. The bytes on the wire are the contract's:
// nothing changes for a peer, whatever decoder it uses.
//
// JSON streams keep the generated types end to end (peer-handler.ts sends them to the typed
// router): Empty would read a JSON frame as an empty message.
import { fromBinary, toBinary, type DescMessage, type Message, type UnknownField } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { EmptySchema, type Empty } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ExchangeRequestSchema,
  ExchangeResponseSchema,
  PeerService,
  type ExchangeRequest,
  type ExchangeResponse,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { compileDecoder, type BinaryDecoder } from "./binary-decoder.js";
import { compileEncoder, type BinaryEncoder } from "./binary-encoder.js";
import { wireTypesOf } from "./binary-fields.js";

/** How a side of the stream turns the frames it reads into messages, and its messages into frames. */
export interface FrameCodec<WireIn, In, Out, WireOut> {
  readonly decode: (frame: WireIn) => In;
  readonly encode: (message: Out) => WireOut;
}

/** The generated messages as they are (typed streams: JSON, or a test's own client). */
export function typedFrames<In, Out>(): FrameCodec<In, In, Out, Out> {
  return { decode: (m) => m, encode: (m) => m };
}

/** The Exchange method with Empty frames: the same path, the same bytes. */
export const RAW_EXCHANGE = Object.freeze({ ...PeerService.method.exchange, input: EmptySchema, output: EmptySchema });

/** The peer service with that method alone, for createClient. */
export const RAW_EXCHANGE_SERVICE = Object.freeze({ ...PeerService, methods: [RAW_EXCHANGE], method: Object.freeze({ exchange: RAW_EXCHANGE }) });

/** Content types of the binary protocols (Connect streaming, gRPC, gRPC-Web), parameters dropped. */
const BINARY_STREAM_TYPES: ReadonlySet<string> = new Set([
  "application/connect+proto",
  "application/grpc",
  "application/grpc+proto",
  "application/grpc-web",
  "application/grpc-web+proto",
]);

/** True for a request content type that carries binary protobuf frames. */
export function isBinaryStreamType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(";");
  return BINARY_STREAM_TYPES.has((semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase());
}

/** Bytes of the varint of a tag (field number and wire type). */
function tagBytes(tag: number): number {
  let n = 1;
  for (let v = tag; v >= 0x80; v = Math.floor(v / 0x80)) n++;
  return n;
}

/** The bytes a frame's top-level fields make (tag and bytes of each, in order). */
function frameBytes(frame: Empty): Uint8Array {
  const fields: readonly UnknownField[] = frame.$unknown ?? [];
  let size = 0;
  for (const f of fields) size += tagBytes(f.no * 8 + f.wireType) + f.data.length;
  const out = new Uint8Array(size);
  let p = 0;
  for (const f of fields) {
    let v = f.no * 8 + f.wireType;
    while (v >= 0x80) {
      out[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    out[p++] = v;
    out.set(f.data, p);
    p += f.data.length;
  }
  return out;
}

/** The top-level fields of an encoded message, as an Empty frame carries them. */
function frameOf(bytes: Uint8Array): Empty {
  return fromBinary(EmptySchema, bytes);
}

/**
 * Refuses a frame with a known top-level field of the wrong wire type. Connect split the frame by
 * the wire type of each tag, and frameBytes writes each tag back in its shortest form; fromBinary
 * reads a known field by its declared type whatever its tag says. Were both let through, the two
 * would cut the frame in different places, and a shortened tag could end up inside a value: the
 * bytes decoded would not be the bytes sent. With the wire types checked they cut it alike (a
 * field's bytes are kept as they came). protobuf-es would take some such frames (an id sent as a
 * fixed64, say); no protobuf encoder writes them, and the stream refuses them as malformed.
 */
function frameChecker(schema: DescMessage, code: Code): (frame: Empty) => void {
  const expected = new Map(schema.fields.map((f) => [f.number, wireTypesOf(f)]));
  return (frame) => {
    for (const u of frame.$unknown ?? []) {
      const allowed = expected.get(u.no);
      if (allowed !== undefined && !allowed.has(u.wireType)) {
        throw new ConnectError(`parse binary: field ${schema.typeName}.${u.no} with wire type ${u.wireType}`, code);
      }
    }
  };
}

/** A frame's decoder: its fields checked, its bytes rebuilt and decoded. */
function frameDecoder<T extends Message>(schema: GenMessage<T>, code: Code): (frame: Empty) => T {
  const check = frameChecker(schema, code);
  const decode = decoderOf(schema, code);
  return (frame) => {
    check(frame);
    return decode(frameBytes(frame));
  };
}

/**
 * A decoder that falls back to fromBinary, failing as Connect's own parse fails ("parse binary:
 * ..."), with `code`: a server answers a frame it cannot read as the caller's error, a client
 * takes an answer it cannot read as the peer's.
 */
function decoderOf<T extends Message>(schema: GenMessage<T>, code: Code): (bytes: Uint8Array) => T {
  const fast: BinaryDecoder<T> = compileDecoder(schema);
  return (bytes) => {
    const quick = fast(bytes);
    if (quick !== undefined) return quick;
    try {
      return fromBinary(schema, bytes);
    } catch (e) {
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, code);
    }
  };
}

/** An encoder of a message's own bytes, falling back to toBinary. */
function bytesEncoderOf<T extends Message>(schema: GenMessage<T>): (message: T) => Uint8Array {
  const fast: BinaryEncoder<T> = compileEncoder(schema);
  return (message) => fast(message) ?? toBinary(schema, message);
}

/** The same bytes as an Empty frame's top-level fields (for Connect's pipeline). */
function encoderOf<T extends Message>(schema: GenMessage<T>): (message: T) => Empty {
  const encode = bytesEncoderOf(schema);
  return (message) => frameOf(encode(message));
}

/** The server side: requests in, answers out. */
export function serverFrames(): FrameCodec<Empty, ExchangeRequest, ExchangeResponse, Empty> {
  return { decode: frameDecoder(ExchangeRequestSchema, Code.InvalidArgument), encode: encoderOf(ExchangeResponseSchema) };
}

/** The calling side: answers in, requests out. */
export function clientFrames(): FrameCodec<Empty, ExchangeResponse, ExchangeRequest, Empty> {
  return { decode: frameDecoder(ExchangeResponseSchema, Code.Internal), encode: encoderOf(ExchangeRequestSchema) };
}

/**
 * The two sides on a stream that carries each message's own bytes (exchange-http2-wire.ts and
 * exchange-http2-handler.ts): no Empty in between, so nothing to split, check or rebuild.
 */
export function serverBytesFrames(): FrameCodec<Uint8Array, ExchangeRequest, ExchangeResponse, Uint8Array> {
  return { decode: decoderOf(ExchangeRequestSchema, Code.InvalidArgument), encode: bytesEncoderOf(ExchangeResponseSchema) };
}

export function clientBytesFrames(): FrameCodec<Uint8Array, ExchangeResponse, ExchangeRequest, Uint8Array> {
  return { decode: decoderOf(ExchangeResponseSchema, Code.Internal), encode: bytesEncoderOf(ExchangeRequestSchema) };
}
