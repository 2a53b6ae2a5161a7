// Random protobuf-es messages of any proto3 message type, built from its descriptor (fast-check
// arbitraries): for the property tests of the compiled codecs (src/peer/binary-*.ts).
import { create, ScalarType, type DescField, type DescMessage, type Message, type UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";

function scalarArb(scalar: ScalarType): fc.Arbitrary<unknown> {
  switch (scalar) {
    case ScalarType.STRING:
      return fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 8 }), fc.string({ minLength: 60, maxLength: 90 }));
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 40 });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.INT32:
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case ScalarType.UINT32:
      return fc.oneof(fc.nat(300), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
    case ScalarType.INT64:
      return fc.oneof(fc.bigInt({ min: -300n, max: 300n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
    case ScalarType.UINT64:
      return fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 53n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
    default:
      throw new Error(`no arbitrary for scalar ${scalar}`);
  }
}

/** Unknown fields as protobuf-es keeps them in $unknown (numbers the schemas do not use). */
const unknownFieldListArb: fc.Arbitrary<UnknownField[]> = fc.array(
  fc.oneof(
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(([no, v]) => ({ no, wireType: WireType.Varint, data: Uint8Array.from(varint(v)) })),
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.uint8Array({ maxLength: 20 })).map(([no, d]) => ({ no, wireType: WireType.LengthDelimited, data: Uint8Array.from([...varint(BigInt(d.length)), ...d]) })),
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.uint8Array({ minLength: 4, maxLength: 4 })).map(([no, data]) => ({ no, wireType: WireType.Bit32, data })),
  ),
  { maxLength: 2 },
);

function fieldArb(f: DescField, depth: number, unknown: boolean): fc.Arbitrary<unknown> {
  switch (f.fieldKind) {
    case "scalar":
      return scalarArb(f.scalar);
    case "enum":
      return fc.oneof(fc.constantFrom(...f.enum.values.map((v) => v.number)), fc.integer({ min: -3, max: 40 }));
    case "message":
      return messageArb(f.message, { depth: depth + 1, unknown });
    case "list":
      if (f.listKind === "message") return fc.array(messageArb(f.message, { depth: depth + 1, unknown }), { maxLength: depth > 2 ? 1 : 4 });
      if (f.listKind === "enum") return fc.array(fc.integer({ min: -2, max: 6 }), { maxLength: 5 });
      return fc.array(scalarArb(f.scalar), { maxLength: 5 });
    default:
      throw new Error(`no arbitrary for ${f.fieldKind}`);
  }
}

/**
 * Random messages of `desc`: each field set or left at zero, one member (or none) of each oneof;
 * with `unknown`, each message (nested ones too) may carry unknown fields in $unknown.
 */
export function messageArb(desc: DescMessage, opts: { depth?: number; unknown?: boolean } = {}): fc.Arbitrary<Message> {
  const depth = opts.depth ?? 0;
  const unknown = opts.unknown ?? false;
  const plain: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of desc.fields) if (f.oneof === undefined) plain[f.localName] = depth > 4 && f.fieldKind === "message" ? fc.constant(undefined) : fc.option(fieldArb(f, depth, unknown), { nil: undefined });
  const oneofs = desc.oneofs.map((o) =>
    fc.oneof(
      fc.constant(undefined),
      ...o.fields.map((f) => fieldArb(f, depth, unknown).map((value) => ({ name: o.localName, value: { case: f.localName, value } }))),
    ),
  );
  return fc.tuple(fc.record(plain), fc.tuple(...oneofs), unknown ? unknownFieldListArb : fc.constant<UnknownField[]>([])).map(([fields, chosen, extra]) => {
    const init: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) init[k] = v;
    for (const c of chosen) if (c !== undefined) init[c.name] = c.value;
    const msg = create(desc, init as never) as Message;
    if (extra.length > 0) msg.$unknown = extra;
    return msg;
  });
}

/** Extra bytes of unknown fields (numbers the schemas do not use), each a whole field. */
export const unknownFieldsArb = fc.array(
  fc.oneof(
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(([no, v]) => {
      const out = [...varint(BigInt(no * 8))];
      for (const b of varint(v)) out.push(b);
      return out;
    }),
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.uint8Array({ maxLength: 20 })).map(([no, data]) => [...varint(BigInt(no * 8 + 2)), ...varint(BigInt(data.length)), ...data]),
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.uint8Array({ minLength: 4, maxLength: 4 })).map(([no, data]) => [...varint(BigInt(no * 8 + 5)), ...data]),
    fc.tuple(fc.integer({ min: 40, max: 5000 }), fc.uint8Array({ minLength: 8, maxLength: 8 })).map(([no, data]) => [...varint(BigInt(no * 8 + 1)), ...data]),
  ),
  { maxLength: 3 },
);

function varint(v: bigint): number[] {
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

/** Every message type reachable from `desc`. */
export function reachable(desc: DescMessage, seen = new Map<string, DescMessage>()): Map<string, DescMessage> {
  if (seen.has(desc.typeName)) return seen;
  seen.set(desc.typeName, desc);
  for (const f of desc.fields) if (f.message !== undefined) reachable(f.message, seen);
  return seen;
}
