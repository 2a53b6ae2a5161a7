// A protobuf binary encoder compiled from the generated descriptors, for the messages of the
// Exchange stream: the bytes protobuf-es's toBinary writes for the same message (fields in
// number order, zero values of implicit-presence fields left out, packed repeated scalars,
// unknown fields last), without toBinary's reflection and its writer's chunk list. It measures
// the message first and writes it into one array of that size. After the decoder, toBinary was
// the largest item of a replica's protobuf-es time: every answer and every push passes here.
//
// A value that is not what the generated type says (a number where a bigint goes, an integer
// out of range, a message of another type) makes it give up and return undefined; the caller
// then encodes with toBinary, which writes what it writes or throws its own error.
// test/unit/peer/binary-encoder.test.ts compares the bytes with toBinary's on random messages.
import type { DescMessage, Message, UnknownField } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { getTextEncoding, WireType } from "@bufbuild/protobuf/wire";
import { FIELD_NUMBER_LIMIT, GIVE_UP, IMPLICIT, isProto3, kindOf, wireTypeOf, type FieldPlanBase, type Kind } from "./binary-fields.js";

interface FieldPlan extends FieldPlanBase {
  readonly packed: boolean;
  /** Implicit presence: a zero value is not written. */
  readonly implicit: boolean;
  /** The tag's varint value (field number and wire type). */
  readonly tag: number;
  /** The tag of one element of a repeated scalar written unpacked. */
  readonly elementTag: number;
  message: MessagePlan | undefined;
}

interface MessagePlan {
  readonly typeName: string;
  readonly readable: boolean;
  /** In field-number order, as toBinary writes them. */
  readonly fields: readonly FieldPlan[];
}

function plan(desc: DescMessage, plans: Map<string, MessagePlan>): MessagePlan {
  const known = plans.get(desc.typeName);
  if (known) return known;
  const fields: FieldPlan[] = [];
  let readable = isProto3(desc);
  for (const f of [...desc.fields].sort((a, b) => a.number - b.number)) {
    const kind = kindOf(f);
    if (kind === undefined) {
      readable = false;
      continue;
    }
    const repeated = f.fieldKind === "list";
    const packed = repeated && kind !== "message" && kind !== "string" && kind !== "bytes" && f.packed;
    fields.push({
      localName: f.localName,
      kind,
      repeated,
      packed,
      implicit: f.presence === IMPLICIT,
      oneof: f.oneof?.localName,
      tag: f.number * 8 + (packed ? WireType.LengthDelimited : wireTypeOf(kind)),
      elementTag: f.number * 8 + wireTypeOf(kind),
      message: undefined,
    });
  }
  const byNumber = new Map(fields.map((fp) => [fp.tag >>> 3, fp]));
  const mp: MessagePlan = { typeName: desc.typeName, readable, fields };
  plans.set(desc.typeName, mp);
  for (const f of desc.fields) {
    const fp = byNumber.get(f.number);
    if (fp?.kind === "message" && f.message !== undefined) fp.message = plan(f.message, plans);
  }
  return mp;
}

function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  let n = 5;
  for (let x = Math.floor(v / 0x800000000); x > 0; x = Math.floor(x / 0x80)) n++;
  return n;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** A 64-bit value as the unsigned integer its varint carries (two's complement for negatives). */
function unsigned64(kind: Kind, v: unknown): bigint {
  if (typeof v !== "bigint") throw GIVE_UP;
  if (kind === "uint64" ? v < 0n || v > UINT64_MAX : v < INT64_MIN || v > INT64_MAX) throw GIVE_UP;
  return v < 0n ? BigInt.asUintN(64, v) : v;
}

/** What one encoding pass remembers for the next: nested lengths and non-ASCII strings, in order. */
interface Measure {
  readonly lengths: number[];
  readonly texts: Uint8Array[];
  readonly encodeUtf8: (s: string) => Uint8Array;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function scalarSize(kind: Kind, v: unknown, m: Measure): number {
  switch (kind) {
    case "string": {
      if (typeof v !== "string") throw GIVE_UP;
      if (isAscii(v)) return varintSize(v.length) + v.length;
      const bytes = m.encodeUtf8(v);
      m.texts.push(bytes);
      return varintSize(bytes.length) + bytes.length;
    }
    case "bytes":
      if (!(v instanceof Uint8Array)) throw GIVE_UP;
      return varintSize(v.length) + v.length;
    case "bool":
      if (typeof v !== "boolean") throw GIVE_UP;
      return 1;
    case "int32":
      if (typeof v !== "number" || !Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw GIVE_UP;
      return v < 0 ? 10 : varintSize(v);
    case "uint32":
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0xffffffff) throw GIVE_UP;
      return varintSize(v);
    case "int64":
    case "uint64": {
      const u = unsigned64(kind, v);
      return u <= 0xffffffffn ? varintSize(Number(u)) : varintSize(Number(u >> 32n) * 0x100000000);
    }
    default:
      throw GIVE_UP;
  }
}

/** The value toBinary writes for `f`, or undefined when it writes nothing. */
function valueOf(f: FieldPlan, msg: Record<string, unknown>): unknown {
  if (f.oneof !== undefined) {
    const o = msg[f.oneof] as { case: unknown; value?: unknown } | undefined;
    if (typeof o !== "object" || o === null) throw GIVE_UP;
    if (o.case !== f.localName) return undefined;
    // A case without a value: toBinary writes an empty message, or throws.
    if (o.value === undefined) throw GIVE_UP;
    return o.value;
  }
  const v = msg[f.localName];
  if (f.repeated) {
    if (!Array.isArray(v)) throw GIVE_UP;
    return v.length === 0 ? undefined : v;
  }
  if (f.kind === "message" || !f.implicit) return v === undefined || !Object.prototype.hasOwnProperty.call(msg, f.localName) ? undefined : v;
  // Implicit presence: zero values are not written.
  return isZero(f.kind, v) ? undefined : v;
}

/** Whether `v` is the zero value of `kind`; a value of another type gives up. */
function isZero(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case "string":
      if (typeof v !== "string") throw GIVE_UP;
      return v === "";
    case "bytes":
      if (!(v instanceof Uint8Array)) throw GIVE_UP;
      return v.length === 0;
    case "bool":
      if (typeof v !== "boolean") throw GIVE_UP;
      return !v;
    case "int64":
    case "uint64":
      if (typeof v !== "bigint") throw GIVE_UP;
      return v === 0n;
    default:
      if (typeof v !== "number") throw GIVE_UP;
      return v === 0;
  }
}

/** The tag of an unknown field: one toBinary writes the same way, else give up. */
function unknownTag(u: UnknownField): number {
  if (!Number.isInteger(u.no) || u.no < 1 || u.no > FIELD_NUMBER_LIMIT || !Number.isInteger(u.wireType) || u.wireType < 0 || u.wireType > WireType.Bit32 || !(u.data instanceof Uint8Array)) throw GIVE_UP;
  return u.no * 8 + u.wireType;
}

function measureMessage(p: MessagePlan, msg: unknown, m: Measure): number {
  if (!p.readable || typeof msg !== "object" || msg === null || (msg as Message).$typeName !== p.typeName) throw GIVE_UP;
  const rec = msg as Record<string, unknown>;
  let n = 0;
  for (const f of p.fields) {
    const v = valueOf(f, rec);
    if (v === undefined) continue;
    const tagSize = varintSize(f.tag);
    if (f.kind === "message") {
      const items = f.repeated ? (v as unknown[]) : [v];
      for (const item of items) n += tagSize + measureNested(f.message as MessagePlan, item, m);
    } else if (f.packed) {
      const at = m.lengths.length;
      m.lengths.push(0);
      let body = 0;
      for (const item of v as unknown[]) body += scalarSize(f.kind, item, m);
      m.lengths[at] = body;
      n += tagSize + varintSize(body) + body;
    } else if (f.repeated) {
      for (const item of v as unknown[]) n += varintSize(f.elementTag) + scalarSize(f.kind, item, m);
    } else {
      n += tagSize + scalarSize(f.kind, v, m);
    }
  }
  const unknown = (msg as Message).$unknown;
  if (unknown !== undefined) {
    if (!Array.isArray(unknown)) throw GIVE_UP;
    for (const u of unknown) n += varintSize(unknownTag(u)) + u.data.length;
  }
  return n;
}

function measureNested(p: MessagePlan, msg: unknown, m: Measure): number {
  const at = m.lengths.length;
  m.lengths.push(0);
  const size = measureMessage(p, msg, m);
  m.lengths[at] = size;
  return varintSize(size) + size;
}

/** Writes into one array measured beforehand, taking the lengths and texts in measuring order. */
class Writer {
  pos = 0;
  private length = 0;
  private text = 0;
  constructor(
    readonly out: Uint8Array,
    private readonly m: Measure,
  ) {}

  varint(v: number): void {
    const out = this.out;
    while (v >= 0x80) {
      out[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    out[this.pos++] = v;
  }

  varint64(u: bigint): void {
    if (u <= 0x1fffffffffffffn) return this.varint(Number(u));
    const out = this.out;
    while (u >= 0x80n) {
      out[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    out[this.pos++] = Number(u);
  }

  nextLength(): number {
    return this.m.lengths[this.length++] as number;
  }

  scalar(kind: Kind, v: unknown): void {
    switch (kind) {
      case "string": {
        const s = v as string;
        if (isAscii(s)) {
          this.varint(s.length);
          for (let i = 0; i < s.length; i++) this.out[this.pos++] = s.charCodeAt(i);
        } else {
          this.bytes(this.m.texts[this.text++] as Uint8Array);
        }
        return;
      }
      case "bytes":
        return this.bytes(v as Uint8Array);
      case "bool":
        this.out[this.pos++] = v ? 1 : 0;
        return;
      case "int32":
        if ((v as number) < 0) return this.varint64(BigInt.asUintN(64, BigInt(v as number)));
        return this.varint(v as number);
      case "uint32":
        return this.varint(v as number);
      default:
        return this.varint64(unsigned64(kind, v));
    }
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.out.set(b, this.pos);
    this.pos += b.length;
  }

  unknown(u: UnknownField): void {
    this.varint(unknownTag(u));
    this.out.set(u.data, this.pos);
    this.pos += u.data.length;
  }
}

function writeMessage(p: MessagePlan, msg: Record<string, unknown>, w: Writer): void {
  for (const f of p.fields) {
    const v = valueOf(f, msg);
    if (v === undefined) continue;
    if (f.kind === "message") {
      const items = f.repeated ? (v as Array<Record<string, unknown>>) : [v as Record<string, unknown>];
      for (const item of items) {
        w.varint(f.tag);
        w.varint(w.nextLength());
        writeMessage(f.message as MessagePlan, item, w);
      }
    } else if (f.packed) {
      w.varint(f.tag);
      w.varint(w.nextLength());
      for (const item of v as unknown[]) w.scalar(f.kind, item);
    } else if (f.repeated) {
      for (const item of v as unknown[]) {
        w.varint(f.elementTag);
        w.scalar(f.kind, item);
      }
    } else {
      w.varint(f.tag);
      w.scalar(f.kind, v);
    }
  }
  const unknown = (msg as Message).$unknown;
  if (unknown !== undefined) for (const u of unknown) w.unknown(u);
}

/** An encoder of `schema`'s messages: their bytes, or undefined where toBinary must decide. */
export type BinaryEncoder<T extends Message> = (message: T) => Uint8Array | undefined;

/** Compiles an encoder for `schema` and every message type it contains. */
export function compileEncoder<T extends Message>(schema: GenMessage<T>): BinaryEncoder<T> {
  const root = plan(schema, new Map());
  return (message) => {
    const m: Measure = { lengths: [], texts: [], encodeUtf8: getTextEncoding().encodeUtf8 };
    try {
      const out = new Uint8Array(measureMessage(root, message, m));
      writeMessage(root, message as unknown as Record<string, unknown>, new Writer(out, m));
      return out;
    } catch (err) {
      if (err === GIVE_UP) return undefined;
      throw err;
    }
  };
}
