// The peer transport's gzip: refused when compression is off, refused by its trailer above the
// cap before anything is inflated, inflated within the size it declares, and a lying trailer fails.
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { declaredGzipSize, peerGzip } from "../../../src/peer/peer-compression.js";

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected a refusal");
}

describe("peer gzip", () => {
  const on = peerGzip({ acceptCompressed: true });
  const off = peerGzip({ acceptCompressed: false });
  const text = Buffer.from("hello peer ".repeat(1000));

  it("reads the inflated size from the gzip trailer", () => {
    expect(declaredGzipSize(gzipSync(text))).to.equal(text.length);
    expect(declaredGzipSize(Buffer.from("not gzip at all, no"))).to.equal(undefined);
    expect(declaredGzipSize(gzipSync(text).subarray(0, 10))).to.equal(undefined);
  });

  it("round-trips a body within the cap", async () => {
    const packed = await on.compress(text);
    expect(Buffer.from(await on.decompress(packed, 1 << 20)).equals(text)).to.equal(true);
    expect((await on.decompress(new Uint8Array(0), 1 << 20)).length).to.equal(0);
  });

  it("with compression off refuses every gzip body with invalid_argument, and still compresses answers", async () => {
    const e = await refusal(off.decompress(gzipSync(text), 1 << 20));
    expect(e.code).to.equal(Code.InvalidArgument);
    expect(e.rawMessage).to.match(/compression is off/);
    expect(Buffer.from(await on.decompress(await off.compress(text), 1 << 20)).equals(text)).to.equal(true);
  });

  it("refuses a body whose trailer declares more than the cap with resource_exhausted", async () => {
    const e = await refusal(on.decompress(gzipSync(text), text.length - 1));
    expect(e.code).to.equal(Code.ResourceExhausted);
    expect(e.rawMessage).to.match(/readMaxBytes/);
  });

  it("refuses a body that inflates past what its trailer declares", async () => {
    const liar = Buffer.from(gzipSync(text));
    liar.writeUInt32LE(100, liar.length - 4);
    const e = await refusal(on.decompress(liar, 1 << 20));
    expect(e.code).to.equal(Code.InvalidArgument);
    expect(e.rawMessage).to.match(/decompression failed/);
  });

  it("refuses, before allocating its output, a body whose trailer declares more than DEFLATE can inflate from its size (at most 1032:1)", async () => {
    const liar = Buffer.from(gzipSync(Buffer.alloc(0)));
    liar.writeUInt32LE(16 * 2 ** 20 - 1, liar.length - 4);
    const e = await refusal(on.decompress(liar, 16 * 2 ** 20));
    expect(e.code).to.equal(Code.InvalidArgument);
    expect(e.rawMessage).to.match(/cannot inflate/);
    const dense = gzipSync(Buffer.alloc(1 << 20));
    expect(declaredGzipSize(dense)! / dense.length, "a real member of zeros is within the bound").to.be.below(1033);
    expect((await on.decompress(dense, 2 << 20)).length).to.equal(1 << 20);
  });

  it("refuses bytes that are not gzip, and a truncated member", async () => {
    expect((await refusal(on.decompress(Buffer.from("plain text that is long enough"), 1 << 20))).code).to.equal(Code.InvalidArgument);
    const cut = gzipSync(text);
    // its last four bytes are then deflate data read as a size: refused either way
    expect([Code.InvalidArgument, Code.ResourceExhausted]).to.include((await refusal(on.decompress(cut.subarray(0, cut.length - 30), 1 << 20))).code);
  });
});
