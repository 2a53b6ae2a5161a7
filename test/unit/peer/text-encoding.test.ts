// The ASCII fast path of protobuf-es's text encoding gives the same bytes and strings as the
// default implementation, for every kind of input, and a peer message encoded with it decodes
// to the same message.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";
import { expect } from "chai";
import { SetRequestSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fastTextEncoding, SHORT_TEXT_MAX } from "../../../src/peer/text-encoding.js";

const base = getTextEncoding();
const fast = fastTextEncoding(base);

const samples = [
  "",
  "a",
  "bench-1234",
  "x".repeat(SHORT_TEXT_MAX),
  "x".repeat(SHORT_TEXT_MAX + 1),
  "\u007f\u0000\u0001",
  "caf\u00e9",
  "\u00ff",
  "\u4e2d\u6587",
  "\ud83d\ude00",
  "lone \ud800 surrogate",
  "\udc00",
  "k".repeat(10) + "\u00e9",
];

describe("peer/text-encoding", () => {
  it("encodes every string to the bytes the default encoder gives", () => {
    for (const s of samples) expect([...fast.encodeUtf8(s)], JSON.stringify(s)).to.deep.equal([...base.encodeUtf8(s)]);
  });

  it("decodes every byte sequence to the string the default decoder gives, strict or not", () => {
    const inputs = [
      ...samples.map((s) => base.encodeUtf8(s)),
      new Uint8Array([0x80]),
      new Uint8Array([0x61, 0xc3]),
      new Uint8Array([0xff, 0xfe, 0x61]),
      new Uint8Array(SHORT_TEXT_MAX + 5).fill(0x62),
    ];
    for (const bytes of inputs) {
      expect(fast.decodeUtf8(bytes), `lenient ${[...bytes]}`).to.equal(base.decodeUtf8(bytes));
      let want: unknown;
      let got: unknown;
      try {
        want = base.decodeUtf8(bytes, true);
      } catch (err) {
        want = (err as Error).constructor;
      }
      try {
        got = fast.decodeUtf8(bytes, true);
      } catch (err) {
        got = (err as Error).constructor;
      }
      expect(got, `strict ${[...bytes]}`).to.equal(want);
    }
  });

  it("checks UTF-8 as the default does", () => {
    for (const s of samples) expect(fast.checkUtf8(s)).to.equal(base.checkUtf8(s));
  });

  it("gives protobuf-es the same wire bytes and decoded message as the default", () => {
    const msg = create(SetRequestSchema, { from: "node-\u00e9", entries: [{ key: "bench-1", value: new Uint8Array([1, 2]), origin: "n1", version: 5n }], expectedOwners: ["a", "b\u4e2d"] });
    const wire = toBinary(SetRequestSchema, msg);
    // Put back what was set before (another test's peer client may have installed the fast path).
    const before = getTextEncoding();
    configureTextEncoding(fast);
    try {
      expect([...toBinary(SetRequestSchema, msg)]).to.deep.equal([...wire]);
      const back = fromBinary(SetRequestSchema, wire);
      expect(back.from).to.equal("node-\u00e9");
      expect(back.entries[0]?.key).to.equal("bench-1");
      expect(back.expectedOwners).to.deep.equal(["a", "b\u4e2d"]);
    } finally {
      configureTextEncoding(before);
    }
  });
});
