import { expect } from "chai";
import { fromBase64, fromBytes, fromUtf8, toBase64, toBuffer } from "../../../src/core/byte-string.js";

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

describe("core/byte-string", () => {
  it("round-trips all 256 byte values through fromBytes and toBuffer", () => {
    const s = fromBytes(ALL_BYTES);
    expect(s.length).to.equal(256);
    for (let i = 0; i < 256; i++) expect(s.charCodeAt(i), `byte ${i}`).to.equal(i);
    expect([...toBuffer(s)]).to.deep.equal([...ALL_BYTES]);
  });

  it("round-trips every single byte value on its own", () => {
    for (let i = 0; i < 256; i++) {
      const s = fromBytes(Uint8Array.of(i));
      expect(s.length).to.equal(1);
      expect(toBuffer(s)[0], `byte ${i}`).to.equal(i);
    }
  });

  it("round-trips random binary data (including invalid UTF-8 sequences)", () => {
    const data = Uint8Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24);
    data.set([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80], 100);
    expect(Buffer.compare(toBuffer(fromBytes(data)), Buffer.from(data))).to.equal(0);
  });

  it("reads only the view's own bytes of a Uint8Array that is a slice of a larger buffer", () => {
    const big = Buffer.from("HEADERpayloadTRAILER", "latin1");
    const view = big.subarray(6, 13);
    expect(fromBytes(view)).to.equal("payload");
    const u8 = new Uint8Array(big.buffer, big.byteOffset + 6, 7);
    expect(fromBytes(u8)).to.equal("payload");
  });

  it("the length of a byte string is the size in bytes", () => {
    expect(fromUtf8("é").length).to.equal(2);
    expect(fromUtf8("€").length).to.equal(3);
    expect(fromUtf8("😀").length).to.equal(4);
    expect(fromBytes(new Uint8Array(0))).to.equal("");
  });

  it("fromUtf8 stores UTF-8 bytes that decode back to the same text", () => {
    for (const text of ["", "hello", "café", "日本語", "emoji 😀 𝄞", "\u0000nul", "mixed é€😀"]) {
      const s = fromUtf8(text);
      expect(toBuffer(s).toString("utf8"), text).to.equal(text);
      expect(Buffer.compare(toBuffer(s), Buffer.from(text, "utf8"))).to.equal(0);
    }
  });

  it("every char of a byte string is below 256", () => {
    const s = fromUtf8("日本 😀 é");
    for (let i = 0; i < s.length; i++) expect(s.charCodeAt(i)).to.be.below(256);
  });

  it("round-trips all 256 byte values through base64", () => {
    const s = fromBytes(ALL_BYTES);
    const b64 = toBase64(s);
    expect(b64).to.equal(Buffer.from(ALL_BYTES).toString("base64"));
    expect(fromBase64(b64)).to.equal(s);
  });

  it("encodes and decodes known base64 vectors", () => {
    expect(toBase64(fromUtf8("hello"))).to.equal("aGVsbG8=");
    expect(toBuffer(fromBase64("aGVsbG8=")).toString("utf8")).to.equal("hello");
    expect(toBase64("")).to.equal("");
    expect(fromBase64("")).to.equal("");
    expect(toBase64(fromBytes(Uint8Array.of(0xff, 0xfe, 0x00)))).to.equal("//4A");
  });

  it("base64 of UTF-8 text is the base64 of its UTF-8 bytes", () => {
    const text = "value é 😀";
    expect(toBase64(fromUtf8(text))).to.equal(Buffer.from(text, "utf8").toString("base64"));
  });
});
