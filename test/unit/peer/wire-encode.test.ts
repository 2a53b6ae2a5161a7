// The hand-written encoding of the write path's peer messages gives the bytes protobuf-es gives
// for each element, and whole messages carrying them decode to the messages the generated path
// builds.
import { create, equals, fromBinary, toBinary, type Message, type UnknownField } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { expect } from "chai";
import {
  ClientWriteSchema,
  DeletionSchema,
  EntrySchema,
  ForwardRequestSchema,
  RemoveRequestSchema,
  SetRequestSchema,
} from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromEntry, toDeletion, toEntry, toWireWrite } from "../../../src/peer/convert.js";
import { WireEncoder } from "../../../src/peer/wire-encode.js";
import type { VersionedRecord } from "../../../src/store/index.js";
import type { ClientWrite } from "../../../src/transport/index.js";

/** Whether `msg` (hand-encoded parts) and `want` (generated) decode to the same message after a trip over the wire. */
function sameOnWire<T extends Message>(schema: GenMessage<T>, msg: T, want: T): boolean {
  return equals(schema, fromBinary(schema, toBinary(schema, msg)), fromBinary(schema, toBinary(schema, want)));
}

/** The bytes of a length-delimited unknown field's data without its length varint. */
function content(data: Uint8Array): Uint8Array {
  let i = 0;
  let len = 0;
  let shift = 1;
  for (;;) {
    const b = data[i++] as number;
    len += (b & 0x7f) * shift;
    shift *= 128;
    if (b < 0x80) break;
  }
  expect(data.length - i, "length prefix").to.equal(len);
  return data.subarray(i);
}

const binary = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
const records: VersionedRecord[] = [
  { key: "bench-1", value: "v".repeat(100), version: 1_732_400_000_000_123, origin: "bench-1", lastUpdatedMs: 1_732_400_000_000, expiresAtMs: 0, tombstone: false },
  { key: "k\u00e9y \u4e2d", value: binary, version: Number.MAX_SAFE_INTEGER, origin: "n\u00f6de", lastUpdatedMs: 1, expiresAtMs: 2 ** 32, tombstone: false },
  { key: "x".repeat(300), value: "z".repeat(200_000), version: 2 ** 32 - 1, origin: "o", lastUpdatedMs: 127, expiresAtMs: 128, tombstone: false },
  { key: "", value: "", version: 0, origin: "", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false },
  { key: "gone", value: "", version: 5, origin: "a", lastUpdatedMs: 9, expiresAtMs: 0, tombstone: true },
  { key: "lone \ud800", value: "a", version: 300, origin: "b", lastUpdatedMs: 16_383, expiresAtMs: 16_384, tombstone: false },
  // An increment's record carrying its result (Entry.idempotent), a negative value too.
  { key: "ctr", value: "\u0000hc-counter/1\u0000{}", version: 7_000, origin: "n2", lastUpdatedMs: 7, expiresAtMs: 0, tombstone: false, idempotent: { idemKey: "k".repeat(43), fingerprint: "[1,0,0,null]", value: 12, appliedBy: "n2" } },
  { key: "ctr-", value: "x", version: 7_001, origin: "n2", lastUpdatedMs: 7, expiresAtMs: 9, tombstone: false, idempotent: { idemKey: "i", fingerprint: "", value: -9_007_199_254_740_991, appliedBy: "n\u00f6de" } },
];

describe("peer/wire-encode", () => {
  const wire = new WireEncoder();

  it("encodes an Entry to the bytes of the generated encoder", () => {
    for (const rec of records) {
      const want = toBinary(EntrySchema, toEntry(rec));
      expect(Buffer.from(content(wire.entryField(rec).data)).equals(Buffer.from(want)), rec.key.slice(0, 20)).to.equal(true);
    }
  });

  it("an increment's result rides its record over the wire and back (Entry.idempotent)", () => {
    for (const rec of records.filter((r) => r.idempotent !== undefined)) {
      const decoded = fromBinary(EntrySchema, content(wire.entryField(rec).data));
      expect(fromEntry(decoded), rec.key).to.deep.equal(rec);
    }
    expect(fromEntry(toEntry(records[0] as VersionedRecord)), "no result: no field").to.not.have.property("idempotent");
  });

  it("encodes a record pushed to several replicas once, until its calls are over", () => {
    const rec = records[0] as VersionedRecord;
    const first = wire.entryField(rec);
    expect(wire.entryField(rec)).to.equal(first);
    wire.forgetEntries([rec]);
    const again = wire.entryField(rec);
    expect(again).to.not.equal(first);
    expect(Buffer.from(again.data).equals(Buffer.from(first.data))).to.equal(true);
  });

  it("gives a SetRequest and a RemoveRequest that decode to the generated messages", () => {
    const live = records.filter((r) => !r.tombstone);
    const set = create(SetRequestSchema, { from: "bench-1", expectedOwners: ["a", "b"] });
    set.$unknown = live.map((r) => wire.entryField(r));
    const want = create(SetRequestSchema, { from: "bench-1", entries: live.map(toEntry), expectedOwners: ["a", "b"] });
    expect(sameOnWire(SetRequestSchema, set, want)).to.equal(true);

    const dead = records.map((r) => ({ ...r, tombstone: true, value: "" }));
    for (const r of dead) expect(Buffer.from(content(wire.deletionField(r).data)).equals(Buffer.from(toBinary(DeletionSchema, toDeletion(r))))).to.equal(true);
    const rm = create(RemoveRequestSchema, { from: "bench-2" });
    rm.$unknown = dead.map((r) => wire.deletionField(r));
    const wantRm = create(RemoveRequestSchema, { from: "bench-2", deletions: dead.map(toDeletion) });
    expect(sameOnWire(RemoveRequestSchema, rm, wantRm)).to.equal(true);
  });

  it("encodes forwarded sets, removes and touches (conditions, lease tokens, the sender's view) as the generated encoder does, and leaves increments to it", () => {
    const byHand: ClientWrite[] = [
      { kind: "set", key: "bench-7", value: "v".repeat(100), ttlMs: 0 },
      { kind: "set", key: "t\u00e9", value: binary, ttlMs: 60_000 },
      { kind: "remove", key: "bench-8", value: "", ttlMs: 0 },
      { kind: "set", key: "k", value: "v", ttlMs: 0, condition: { ifNoneMatch: "*" } },
      { kind: "set", key: "k", value: "v", ttlMs: 7, condition: { ifMatch: "*" }, sender: { owners: ["n1", "n2", "n\u00f63"], baseVersion: 0, baseOrigin: "" } },
      { kind: "remove", key: "k", value: "", ttlMs: 0, condition: { ifMatch: ['"a"', 'W/"b"', ""] } },
      { kind: "touch", key: "k", value: "", ttlMs: 5, sender: { owners: ["n1", ""], baseVersion: 1_767_225_600_000_123, baseOrigin: "n1" } },
      { kind: "touch", key: "k", value: "", ttlMs: 0, persist: true, condition: { ifMatch: ['"x"'] } },
      { kind: "set", key: "k", value: "v", ttlMs: 0, leaseToken: "7.xyz" },
    ];
    for (const write of byHand) {
      const f = wire.handWriteField(write);
      expect(f).to.not.equal(undefined);
      expect(Buffer.from(content((f as { data: Uint8Array }).data)).equals(Buffer.from(toBinary(ClientWriteSchema, toWireWrite(write)))), JSON.stringify(write)).to.equal(true);
    }
    // A fraction fails here as it does in the generated path.
    expect(() => toWireWrite({ kind: "set", key: "k", value: "v", ttlMs: 1.5 })).to.throw(RangeError);
    expect(() => wire.handWriteField({ kind: "set", key: "k", value: "v", ttlMs: 1.5 })).to.throw(RangeError);
    expect(wire.handWriteField({ kind: "incr", key: "k", value: "", ttlMs: 0, delta: 1, initial: 0 })).to.equal(undefined);
    for (const extra of [{ delta: 1 }, { initial: 0 }, { idempotencyKey: "i" }]) {
      expect(wire.handWriteField({ kind: "set", key: "k", value: "v", ttlMs: 0, ...extra }), JSON.stringify(extra)).to.equal(undefined);
    }
    const fwd = create(ForwardRequestSchema, { from: "bench-1", senderApplies: true, sentAtUnixMs: 5n });
    fwd.$unknown = byHand.map((p) => wire.handWriteField(p) as UnknownField);
    const want = create(ForwardRequestSchema, { from: "bench-1", senderApplies: true, sentAtUnixMs: 5n, writes: byHand.map(toWireWrite) });
    expect(sameOnWire(ForwardRequestSchema, fwd, want)).to.equal(true);
  });

  it("encodes a batch mixing plain and other writes write by write, in order, as the generated encoder does", () => {
    const mixed: ClientWrite[] = [
      { kind: "set", key: "plain", value: "v", ttlMs: 0 },
      { kind: "incr", key: "n", value: "", ttlMs: 0, delta: 2, initial: 5, idempotencyKey: "i-1" },
      { kind: "set", key: "fill", value: "w", ttlMs: 1000, leaseToken: "7.xyz" },
      { kind: "remove", key: "gone", value: "", ttlMs: 0, condition: { ifMatch: ['"a"'] } },
      { kind: "remove", key: "plain-too", value: "", ttlMs: 0 },
    ];
    const generated = (w: ClientWrite) => toBinary(ClientWriteSchema, toWireWrite(w));
    const fwd = create(ForwardRequestSchema, { from: "n1" });
    fwd.$unknown = mixed.map((w) => wire.writeField(w, generated));
    expect(sameOnWire(ForwardRequestSchema, fwd, create(ForwardRequestSchema, { from: "n1", writes: mixed.map(toWireWrite) }))).to.equal(true);
  });

  it("knows every field of the messages it writes: a field added to the proto fails here instead of vanishing from the wire", () => {
    const numbers = (schema: { fields: ReadonlyArray<{ number: number }> }) => schema.fields.map((f) => f.number).sort((a, b) => a - b);
    const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    expect(numbers(EntrySchema), "Entry: entryField writes 1-8").to.deep.equal(upTo(8));
    expect(numbers(DeletionSchema), "Deletion: deletionField writes 1-4").to.deep.equal(upTo(4));
    expect(numbers(ClientWriteSchema), "ClientWrite: handWriteField writes 1-6, 10-13; 7-9 (increments) take the generated path").to.deep.equal(upTo(13));
  });
});
