// What the compiled protobuf codecs (binary-decoder.ts, binary-encoder.ts) know of a field: the
// kinds they read and write themselves, and which descriptors they leave to protobuf-es.
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";

/** protobuf-es's edition number for proto3 files (google.protobuf.Edition.EDITION_PROTO3). */
export const EDITION_PROTO3 = 999;
/** The largest field number protobuf allows (2^29 - 1). */
export const FIELD_NUMBER_LIMIT = 536_870_911;
/** google.protobuf.FeatureSet.FieldPresence.IMPLICIT: proto3 scalars without `optional`. */
export const IMPLICIT = 2;

/** The value kinds the codecs handle (an open enum is an int32). */
export type Kind = "string" | "bytes" | "bool" | "int32" | "uint32" | "int64" | "uint64" | "message";

const SCALAR_KINDS: ReadonlyMap<ScalarType, Kind> = new Map([
  [ScalarType.STRING, "string"],
  [ScalarType.BYTES, "bytes"],
  [ScalarType.BOOL, "bool"],
  [ScalarType.INT32, "int32"],
  [ScalarType.UINT32, "uint32"],
  [ScalarType.INT64, "int64"],
  [ScalarType.UINT64, "uint64"],
]);

/** A message type the codecs leave to protobuf-es: groups, and the well-known types it treats specially. */
function specialMessage(f: { readonly delimitedEncoding: boolean; readonly message: DescMessage }): boolean {
  return f.delimitedEncoding || f.message.typeName.startsWith("google.protobuf.");
}

/**
 * The kind of a field's values (each element's, for a list), or undefined for a field the codecs
 * do not handle (maps, closed enums, 64-bit integers as strings, fixed-width and floating-point
 * scalars, groups, well-known types): a message with such a field is left to protobuf-es.
 */
export function kindOf(f: DescField): Kind | undefined {
  switch (f.fieldKind) {
    case "enum":
      return f.enum.open ? "int32" : undefined;
    case "message":
      return specialMessage(f) ? undefined : "message";
    case "scalar":
      return f.longAsString ? undefined : SCALAR_KINDS.get(f.scalar);
    case "list":
      if (f.listKind === "enum") return f.enum.open ? "int32" : undefined;
      if (f.listKind === "message") return specialMessage(f) ? undefined : "message";
      return f.longAsString ? undefined : SCALAR_KINDS.get(f.scalar);
    default:
      return undefined;
  }
}

/** The wire type of one value of `kind`. */
export function wireTypeOf(kind: Kind): WireType {
  return kind === "string" || kind === "bytes" || kind === "message" ? WireType.LengthDelimited : WireType.Varint;
}

/** True when `desc`'s file is proto3, the only syntax the codecs handle (no default values, no presence chain). */
export function isProto3(desc: DescMessage): boolean {
  return desc.file.edition === EDITION_PROTO3;
}

/** Thrown inside a compiled codec to give up (the caller falls back to protobuf-es); never leaves it. */
class GiveUp {}
export const GIVE_UP = new GiveUp();

/** What both codecs plan for a field. */
export interface FieldPlanBase {
  readonly localName: string;
  readonly kind: Kind;
  readonly repeated: boolean;
  /** The oneof group's local name, for a member of one. */
  readonly oneof: string | undefined;
}

/** The wire type of one value of a scalar type (an enum is an int32). */
function scalarWireType(t: ScalarType): WireType {
  switch (t) {
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return WireType.Bit32;
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return WireType.LengthDelimited;
    default:
      return WireType.Varint;
  }
}

/**
 * The wire types a field may arrive with: its values' own, and for a repeated scalar also the
 * packed form (a parser takes both).
 */
export function wireTypesOf(f: DescField): ReadonlySet<WireType> {
  const message = (m: { readonly delimitedEncoding: boolean }) => new Set([m.delimitedEncoding ? WireType.StartGroup : WireType.LengthDelimited]);
  switch (f.fieldKind) {
    case "message":
      return message(f);
    case "map":
      return new Set([WireType.LengthDelimited]);
    case "enum":
      return new Set([WireType.Varint]);
    case "scalar":
      return new Set([scalarWireType(f.scalar)]);
    case "list":
      if (f.listKind === "message") return message(f);
      return new Set([f.listKind === "enum" ? WireType.Varint : scalarWireType(f.scalar), WireType.LengthDelimited]);
  }
}
