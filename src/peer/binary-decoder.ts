// A protobuf binary decoder compiled from the generated descriptors, for the messages of the
// Exchange stream. It gives exactly what protobuf-es's fromBinary gives for the same bytes (the
// same plain objects: $typeName, zero values, bigint for 64-bit integers, views into the input
// for bytes, unknown fields in $unknown), without fromBinary's reflection: in a 3-node cluster
// under QUORUM PUTs, fromBinary was the largest item of a replica's protobuf-es time (a frame of
// ten records cost 37 µs on the AMD EPYC machine; this decoder reads it in a fraction of that).
//
// It reads the common, well-formed case only. Whenever the input is anything else (a length or
// varint past the end of its message, a wire type that does not fit the field, a group, a
// singular message field or oneof given twice, which protobuf-es merges, invalid UTF-8, a varint
// longer than ten bytes) it gives up and returns undefined, and the caller decodes with
// fromBinary, which then gives its own result or its own error. So it can never accept bytes
// differently from protobuf-es: test/unit/peer/binary-decoder.test.ts compares both on random
// and corrupted messages. Messages it cannot read by construction (maps, proto2, 32/64-bit fixed
// and float fields, wrapper types) are compiled as "always give up".
import type { DescMessage, Message, UnknownField } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { getTextEncoding, WireType } from "@bufbuild/protobuf/wire";
import { GIVE_UP, IMPLICIT, isProto3, kindOf, wireTypeOf, type FieldPlanBase, type Kind } from "./binary-fields.js";

/** Field numbers the plans index directly (every peer message's are far below it). */
const FIELD_NUMBER_MAX = 1024;
/** protobuf-es's default recursion limit. */
const DEPTH_MAX = 100;

interface FieldPlan extends FieldPlanBase {
  readonly strictUtf8: boolean;
  /** The nested message's plan (message kinds), resolved after every plan of the graph exists. */
  message: MessagePlan | undefined;
}

interface MessagePlan {
  readonly typeName: string;
  readonly readable: boolean;
  /** By field number. */
  readonly fields: ReadonlyArray<FieldPlan | undefined>;
  /** A fresh zero message: what protobuf-es's create(schema) gives. */
  readonly zero: () => Record<string, unknown>;
}

/** The zero value of a singular field with implicit presence, as createZeroMessage sets it. */
function zeroOf(kind: Kind): unknown {
  switch (kind) {
    case "string":
      return "";
    case "bytes":
      return EMPTY_BYTES;
    case "bool":
      return false;
    case "int64":
    case "uint64":
      return 0n;
    default:
      return 0;
  }
}

/** The zero of every empty bytes field (protobuf-es makes one per message; a zero-length array cannot change). */
const EMPTY_BYTES = new Uint8Array(0);

function plan(desc: DescMessage, plans: Map<string, MessagePlan>): MessagePlan {
  const known = plans.get(desc.typeName);
  if (known) return known;
  const fields: Array<FieldPlan | undefined> = [];
  let readable = isProto3(desc);
  for (const f of desc.fields) {
    const kind = kindOf(f);
    // Field numbers index an array: a schema with very high numbers is left to protobuf-es.
    if (kind === undefined || f.number > FIELD_NUMBER_MAX) {
      readable = false;
      continue;
    }
    fields[f.number] = { localName: f.localName, kind, repeated: f.fieldKind === "list", oneof: f.oneof?.localName, strictUtf8: f.fieldKind !== "message" && f.utf8Validation === true, message: undefined };
  }
  // The zero message's members in protobuf-es's order: oneof groups, lists and implicit-presence
  // scalars get their zero value; message fields and explicit-presence scalars stay unset. The
  // immutable zeros are copied from a template; lists and oneof groups are made fresh.
  const template: Record<string, unknown> = { $typeName: desc.typeName };
  const lists: string[] = [];
  const oneofs: string[] = [];
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      template[member.localName] = undefined;
      oneofs.push(member.localName);
    } else if (member.fieldKind === "list") {
      template[member.localName] = undefined;
      lists.push(member.localName);
    } else if (member.fieldKind !== "message" && member.presence === IMPLICIT) {
      const kind = kindOf(member);
      if (kind !== undefined) template[member.localName] = zeroOf(kind);
    }
  }
  const mp: MessagePlan = {
    typeName: desc.typeName,
    readable,
    fields,
    zero: () => {
      const m = { ...template };
      for (const name of lists) m[name] = [];
      for (const name of oneofs) m[name] = { case: undefined };
      return m;
    },
  };
  plans.set(desc.typeName, mp);
  for (const f of desc.fields) {
    const fp = fields[f.number];
    if (fp?.kind === "message" && f.message !== undefined) fp.message = plan(f.message, plans);
  }
  return mp;
}

/** A cursor over the input. Every read checks against `end`, the end of the message being read. */
class Reader {
  pos = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly utf8: (bytes: Uint8Array, strict?: boolean) => string,
  ) {}

  /**
   * A 32-bit varint as protobuf-es's uint32() reads it: the fifth byte gives four bits, and the
   * bytes after it (up to ten in all: a negative int32 takes ten) are read and dropped.
   */
  varint32(end: number): number {
    const buf = this.buf;
    let result = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (this.pos >= end) throw GIVE_UP;
      const b = buf[this.pos++] as number;
      result |= (b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    if (this.pos >= end) throw GIVE_UP;
    let b = buf[this.pos++] as number;
    result |= (b & 0x0f) << 28;
    for (let read = 5; b >= 0x80; read++) {
      if (read === 10 || this.pos >= end) throw GIVE_UP;
      b = buf[this.pos++] as number;
    }
    return result >>> 0;
  }

  /** A 64-bit varint as protobuf-es's varint64read splits it: [low 32 bits, high 32 bits], signed. */
  varint64(end: number): [number, number] {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (this.pos >= end) throw GIVE_UP;
      const b = buf[this.pos++] as number;
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) return [lo, hi];
    }
    if (this.pos >= end) throw GIVE_UP;
    const middle = buf[this.pos++] as number;
    lo |= (middle & 0x0f) << 28;
    hi = (middle & 0x70) >> 4;
    if (middle < 0x80) return [lo, hi];
    for (let shift = 3; shift <= 31; shift += 7) {
      if (this.pos >= end) throw GIVE_UP;
      const b = buf[this.pos++] as number;
      // The tenth byte holds one bit of the 64; protobuf-es drops the others silently: give up.
      if (shift === 31 && b > 1) throw GIVE_UP;
      hi |= (b & 0x7f) << shift;
      if (b < 0x80) return [lo, hi];
    }
    throw GIVE_UP;
  }

  /** The end of a length-delimited value starting here (its length read). */
  lengthEnd(end: number): number {
    const len = this.varint32(end);
    const e = this.pos + len;
    if (e > end) throw GIVE_UP;
    return e;
  }

  /** Skips an unknown field's value as protobuf-es's skip() does (groups give up). */
  skip(wireType: number, end: number): void {
    switch (wireType) {
      case WireType.Varint:
        this.varint64(end);
        return;
      case WireType.Bit64:
        this.pos += 8;
        break;
      case WireType.Bit32:
        this.pos += 4;
        break;
      case WireType.LengthDelimited:
        this.pos = this.lengthEnd(end);
        return;
      default:
        throw GIVE_UP;
    }
    if (this.pos > end) throw GIVE_UP;
  }
}

function uint64Of([lo, hi]: [number, number]): bigint {
  const h = hi >>> 0;
  if (h < 0x200000) return BigInt(h * 0x100000000 + (lo >>> 0));
  return (BigInt(h) << 32n) | BigInt(lo >>> 0);
}

function int64Of(v: [number, number]): bigint {
  return v[1] < 0 ? BigInt.asIntN(64, uint64Of(v)) : uint64Of(v);
}

/** One value of a scalar or enum field; `wireType` already checked to fit. */
function readScalar(r: Reader, f: FieldPlan, end: number): unknown {
  switch (f.kind) {
    case "string": {
      const e = r.lengthEnd(end);
      const bytes = r.buf.subarray(r.pos, e);
      r.pos = e;
      try {
        return r.utf8(bytes, f.strictUtf8);
      } catch {
        throw GIVE_UP;
      }
    }
    case "bytes": {
      const e = r.lengthEnd(end);
      const bytes = r.buf.subarray(r.pos, e);
      r.pos = e;
      return bytes;
    }
    case "bool": {
      const [lo, hi] = r.varint64(end);
      return lo !== 0 || hi !== 0;
    }
    case "int32":
      return r.varint32(end) | 0;
    case "uint32":
      return r.varint32(end);
    case "int64":
      return int64Of(r.varint64(end));
    case "uint64":
      return uint64Of(r.varint64(end));
    default:
      throw GIVE_UP;
  }
}

const PACKABLE: ReadonlySet<Kind> = new Set(["bool", "int32", "uint32", "int64", "uint64"]);

function readField(r: Reader, msg: Record<string, unknown>, f: FieldPlan, wireType: number, end: number, depth: number): void {
  if (f.kind === "message") {
    if (wireType !== WireType.LengthDelimited || f.message === undefined) throw GIVE_UP;
    const e = r.lengthEnd(end);
    const value = readMessage(r, f.message, e, depth + 1);
    if (f.repeated) (msg[f.localName] as unknown[]).push(value);
    else if (f.oneof !== undefined) {
      // A oneof set twice is merged or replaced by protobuf-es: left to it.
      if ((msg[f.oneof] as { case: unknown }).case !== undefined) throw GIVE_UP;
      msg[f.oneof] = { case: f.localName, value };
    } else {
      if (msg[f.localName] !== undefined) throw GIVE_UP;
      msg[f.localName] = value;
    }
    return;
  }
  if (f.repeated) {
    const list = msg[f.localName] as unknown[];
    if (wireType === WireType.LengthDelimited && PACKABLE.has(f.kind)) {
      const e = r.lengthEnd(end);
      while (r.pos < e) list.push(readScalar(r, f, e));
      return;
    }
    if (wireType !== wireTypeOf(f.kind)) throw GIVE_UP;
    list.push(readScalar(r, f, end));
    return;
  }
  if (wireType !== wireTypeOf(f.kind)) throw GIVE_UP;
  const value = readScalar(r, f, end);
  if (f.oneof !== undefined) {
    if ((msg[f.oneof] as { case: unknown }).case !== undefined) throw GIVE_UP;
    msg[f.oneof] = { case: f.localName, value };
  } else {
    msg[f.localName] = value;
  }
}

function readMessage(r: Reader, p: MessagePlan, end: number, depth: number): Record<string, unknown> {
  if (!p.readable || depth > DEPTH_MAX) throw GIVE_UP;
  const msg = p.zero();
  let unknown: UnknownField[] | undefined;
  while (r.pos < end) {
    const tagStart = r.pos;
    const tag = r.varint32(end);
    // protobuf-es refuses a tag longer than five bytes, or whose fifth byte carries more than the
    // four bits of a uint32.
    const tagBytes = r.pos - tagStart;
    if (tagBytes > 5 || (tagBytes === 5 && (r.buf[r.pos - 1] as number) > 0x0f)) throw GIVE_UP;
    const no = tag >>> 3;
    const wireType = tag & 7;
    if (no === 0 || wireType > WireType.Bit32) throw GIVE_UP;
    const f = no <= FIELD_NUMBER_MAX ? p.fields[no] : undefined;
    if (f === undefined) {
      const start = r.pos;
      r.skip(wireType, end);
      (unknown ??= []).push({ no, wireType, data: r.buf.subarray(start, r.pos) });
      continue;
    }
    readField(r, msg, f, wireType, end, depth);
  }
  if (unknown !== undefined) msg.$unknown = unknown;
  return msg;
}

/** A decoder of `schema`'s binary form: the message, or undefined where fromBinary must decide. */
export type BinaryDecoder<T extends Message> = (bytes: Uint8Array) => T | undefined;

/** Compiles a decoder for `schema` and every message type it contains. */
export function compileDecoder<T extends Message>(schema: GenMessage<T>): BinaryDecoder<T> {
  const root = plan(schema, new Map());
  return (bytes) => {
    const r = new Reader(bytes, getTextEncoding().decodeUtf8);
    try {
      return readMessage(r, root, bytes.length, 1) as T;
    } catch (err) {
      if (err === GIVE_UP) return undefined;
      throw err;
    }
  };
}
