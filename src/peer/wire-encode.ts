// Hand-written protobuf encoding of the messages every replicated write sends: Entry (pushed
// records) and ClientWrite (forwarded writes but increments). Answers are written by the
// compiled encoder of the Exchange stream (binary-encoder.ts). They are the same bytes protobuf-es writes for these messages
// (test/unit/peer/wire-encode.test.ts compares them), without its per-field reflection and one
// small array per field: in the profile of a 3-node cluster under QUORUM PUTs, encoding these
// messages was the largest item of the peer path after the socket writes.
//
// The encoded repeated elements reach protobuf-es as unknown fields of the enclosing message
// ($unknown: field number, wire type, and the bytes after the tag), which it writes as they
// are; a reader sees the usual repeated field. Only elements are encoded here, never a whole
// frame, so the generated types stay the contract. A record pushed to two replicas is encoded
// once (entryField caches per record object).
import type { UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import type { IdempotentStamp, VersionedRecord } from "../store/index.js";
import type { ClientWrite, WriteCondition } from "../transport/index.js";
import { KIND_TO_WIRE } from "./convert.js";

const SCRATCH_KEEP_BYTES = 1 << 20;

/**
 * Writes one flat message into the scratch buffer from `startLength()` on; `done*()` copies it out
 * and resets. Not reentrant. A throw part-way (a fraction where an integer goes) leaves bytes
 * behind that the next message starts after and the reset drops.
 */
class Writer {
  pos = 0;
  /** Grows as needed; shrunk back after a message larger than SCRATCH_KEEP_BYTES. */
  private scratch = Buffer.allocUnsafe(4096);

  private need(n: number): void {
    if (this.pos + n <= this.scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.scratch.length * 2, this.pos + n));
    this.scratch.copy(grown, 0, 0, this.pos);
    this.scratch = grown;
  }

  /** A varint of a non-negative integer up to 2^64 - 1 given as a number (exact up to 2^53). */
  varint(v: number): void {
    this.need(10);
    const b = this.scratch;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[p++] = v;
    this.pos = p;
  }

  tag(field: number, wireType: WireType): void {
    this.varint(field * 8 + wireType);
  }

  /** uint64 / int64 / enum field; omitted when 0 (proto3 implicit presence). */
  int(field: number, v: number): void {
    if (v === 0) return;
    // As the generated path (BigInt(v)) does: a fraction is a bug, not something to round.
    if (!Number.isInteger(v)) throw new RangeError(`${v} is not an integer: cannot encode it as a protobuf integer field`);
    this.tag(field, WireType.Varint);
    if (v > 0) this.varint(v);
    else this.negative(v);
  }

  /** A negative int64: ten bytes of two's complement. */
  private negative(v: number): void {
    let u = BigInt.asUintN(64, BigInt(v));
    this.need(10);
    while (u >= 0x80n) {
      this.scratch[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.scratch[this.pos++] = Number(u);
  }

  bool(field: number, v: boolean): void {
    if (!v) return;
    this.tag(field, WireType.Varint);
    this.varint(1);
  }

  /** A string field; omitted when empty unless `always` (an element of a repeated field). */
  string(field: number, s: string, always = false): void {
    if (s === "" && !always) return;
    this.tag(field, WireType.LengthDelimited);
    const n = s.length;
    this.need(5 + n);
    // Short ASCII byte for byte; the length varint of up to 127 bytes is one byte.
    if (n < 0x80) {
      const b = this.scratch;
      const start = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        b[start + i] = c;
      }
      if (i === n) {
        b[this.pos] = n;
        this.pos = start + n;
        return;
      }
    }
    const bytes = Buffer.byteLength(s, "utf8");
    this.varint(bytes);
    this.need(bytes);
    this.pos += this.scratch.write(s, this.pos, bytes, "utf8");
  }

  /** A bytes field from a byte string (one char per byte); omitted when empty. */
  latin1(field: number, s: string): void {
    if (s === "") return;
    this.tag(field, WireType.LengthDelimited);
    this.varint(s.length);
    this.need(s.length);
    this.pos += this.scratch.write(s, this.pos, s.length, "latin1");
  }

  /** Already encoded bytes, as they are. */
  append(bytes: Uint8Array): void {
    this.need(bytes.length);
    this.scratch.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Starts a length-delimited value: returns where its content starts (see doneWithLength). */
  startLength(): number {
    return this.pos;
  }

  /**
   * The content written since `start`, copied out with its length varint in front: the `data`
   * of an unknown length-delimited field. Resets the writer.
   */
  doneWithLength(start: number): Uint8Array {
    const len = this.pos - start;
    let prefix = 1;
    for (let v = len; v >= 0x80; v = Math.floor(v / 0x80)) prefix++;
    const out = new Uint8Array(prefix + len);
    let p = 0;
    let v = len;
    while (v >= 0x80) {
      out[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    out[p++] = v;
    out.set(this.scratch.subarray(start, this.pos), p);
    this.reset();
    return out;
  }

  private reset(): void {
    this.pos = 0;
    if (this.scratch.length > SCRATCH_KEEP_BYTES) this.scratch = Buffer.allocUnsafe(4096);
  }
}

function lengthDelimited(no: number, data: Uint8Array): UnknownField {
  return { no, wireType: WireType.LengthDelimited, data };
}

/**
 * The ClientWrite fields handWriteField encodes, and those that send a write to the generated
 * path (an increment's; handWriteField tests each of them), and those that never leave the node. The type below refuses to compile
 * while a field of ClientWrite is in neither list, so a new field cannot be dropped on the wire
 * unnoticed.
 */
type ByHand = "kind" | "key" | "value" | "ttlMs" | "condition" | "persist" | "leaseToken" | "sender";
type Generated = "delta" | "initial" | "idempotencyKey";
/** Fields of the stamping node's own writes, never forwarded (a counter's kept expiry). */
type LocalOnly = "expiresAtMs" | "idempotent";
type Unclassified = Exclude<keyof ClientWrite, ByHand | Generated | LocalOnly>;
const _everyFieldClassified: [Unclassified] extends [never] ? true : never = true;

/**
 * The encoder of one peer transport: its scratch buffer, and the encodings of the records its
 * calls under way push (a coordinator pushes the same record to every other owner).
 */
export class WireEncoder {
  private readonly w = new Writer();
  private readonly entryFields = new WeakMap<VersionedRecord, UnknownField>();

  /**
   * `rec` as an element of SetRequest.entries (an Entry message, what toBinary(EntrySchema,
   * toEntry(rec)) gives), encoded once per record object. The caller forgets the records once
   * their call is over (forgetEntries): a record that waits as a hint must not keep an encoded
   * copy of its value alive beside it.
   */
  entryField(rec: VersionedRecord): UnknownField {
    const cached = this.entryFields.get(rec);
    if (cached !== undefined) return cached;
    // The writer is not reentrant: the nested message is encoded first.
    const idempotent = rec.idempotent === undefined ? undefined : this.idempotentBytes(rec.idempotent);
    const w = this.w;
    const start = w.startLength();
    w.string(1, rec.key);
    if (!rec.tombstone) w.latin1(2, rec.value);
    w.int(3, rec.version);
    w.string(4, rec.origin);
    w.int(5, rec.expiresAtMs);
    w.int(6, rec.lastUpdatedMs);
    w.bool(7, rec.tombstone);
    if (idempotent !== undefined) {
      w.tag(8, WireType.LengthDelimited);
      w.append(idempotent);
    }
    const field = lengthDelimited(1, w.doneWithLength(start));
    this.entryFields.set(rec, field);
    return field;
  }

  /** Drops the cached encodings of `records` (a later push encodes them again). */
  forgetEntries(records: readonly VersionedRecord[]): void {
    for (const r of records) this.entryFields.delete(r);
  }

  /** A tombstone as an element of RemoveRequest.deletions (a Deletion message). */
  deletionField(rec: VersionedRecord): UnknownField {
    const w = this.w;
    const start = w.startLength();
    w.string(1, rec.key);
    w.int(2, rec.version);
    w.string(3, rec.origin);
    w.int(4, rec.lastUpdatedMs);
    return lengthDelimited(1, w.doneWithLength(start));
  }

  /**
   * A set, remove or touch (conditions, lease tokens and the sender's view included) as an
   * element of ForwardRequest.writes (a ClientWrite message); undefined for an increment, which
   * takes the generated path.
   */
  handWriteField(write: ClientWrite): UnknownField | undefined {
    if (write.kind === "incr" || write.delta !== undefined || write.initial !== undefined || write.idempotencyKey !== undefined) return undefined;
    // The writer is not reentrant: the nested message is encoded first.
    const condition = write.condition === undefined ? undefined : this.preconditionBytes(write.condition);
    const w = this.w;
    const start = w.startLength();
    w.int(1, KIND_TO_WIRE[write.kind]);
    w.string(2, write.key);
    if (write.kind === "set") w.latin1(3, write.value);
    w.int(4, write.ttlMs);
    if (condition !== undefined) {
      w.tag(5, WireType.LengthDelimited);
      w.append(condition);
    }
    w.bool(6, write.persist === true);
    w.string(10, write.leaseToken ?? "");
    const view = write.sender;
    if (view !== undefined) {
      for (const id of view.owners) w.string(11, id, true);
      w.int(12, view.baseVersion);
      w.string(13, view.baseOrigin);
    }
    return lengthDelimited(1, w.doneWithLength(start));
  }

  /**
   * A write as an element of ForwardRequest.writes: sets, removes and touches by hand
   * (handWriteField), increments from the bytes of the generated ClientWrite message
   * (`generated`), so that one increment does not make the whole batch encode again, and the
   * writes keep their order.
   */
  writeField(write: ClientWrite, generated: (w: ClientWrite) => Uint8Array): UnknownField {
    const byHand = this.handWriteField(write);
    if (byHand !== undefined) return byHand;
    const start = this.w.startLength();
    this.w.append(generated(write));
    return lengthDelimited(1, this.w.doneWithLength(start));
  }

  /** An IdempotentResult message with its length in front (field 8 of Entry). */
  private idempotentBytes(stamp: IdempotentStamp): Uint8Array {
    const w = this.w;
    const start = w.startLength();
    w.string(1, stamp.idemKey);
    w.string(2, stamp.fingerprint);
    w.int(3, stamp.value);
    w.string(4, stamp.appliedBy);
    return w.doneWithLength(start);
  }

  /** A Precondition message with its length in front (field 5 of ClientWrite). */
  private preconditionBytes(c: WriteCondition): Uint8Array {
    const w = this.w;
    const start = w.startLength();
    if (c.ifMatch !== undefined && c.ifMatch !== "*") for (const tag of c.ifMatch) w.string(1, tag, true);
    w.bool(2, c.ifMatch === "*");
    w.bool(3, c.ifNoneMatch === "*");
    return w.doneWithLength(start);
  }
}
