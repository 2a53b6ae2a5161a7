// The envelope framing of the Exchange wire: envelopes split anywhere across chunks come out
// whole and in order, an oversized one is refused from its header alone, and what is handed up
// does not share memory with the chunks read.
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { envelope, EnvelopeReader } from "../../../src/peer/connect-envelopes.js";

function readAll(reader: EnvelopeReader, chunks: readonly Buffer[]): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (const c of chunks) reader.push(c, (flags, data) => out.push([flags, Buffer.from(data).toString("hex")]));
  return out;
}

describe("connect envelopes", () => {
  const messages: Array<[number, Uint8Array]> = [
    [0, Uint8Array.of(1, 2, 3)],
    [0, new Uint8Array(0)],
    [2, new TextEncoder().encode("{}")],
    [0, Uint8Array.from({ length: 300 }, (_, i) => i % 251)],
  ];
  const stream = Buffer.concat(messages.map(([f, d]) => envelope(f, d)));
  const expected = messages.map(([f, d]) => [f, Buffer.from(d).toString("hex")]);

  it("writes the bytes Connect's own encodeEnvelope writes", () => {
    for (const [f, d] of messages) expect(envelope(f, d).toString("hex")).to.equal(Buffer.from(encodeEnvelope(f, d)).toString("hex"));
  });

  it("reads envelopes whole and in order however the bytes are cut into chunks", () => {
    expect(readAll(new EnvelopeReader(1 << 20), [stream])).to.deep.equal(expected);
    for (let cut = 1; cut < stream.length; cut++) {
      expect(readAll(new EnvelopeReader(1 << 20), [stream.subarray(0, cut), stream.subarray(cut)]), `cut at ${cut}`).to.deep.equal(expected);
    }
    const bytes = Array.from(stream, (b) => Buffer.of(b));
    const reader = new EnvelopeReader(1 << 20);
    expect(readAll(reader, bytes)).to.deep.equal(expected);
    expect(reader.pending).to.equal(0);
  });

  it("reads 500 random streams of envelopes cut at random places (empty chunks included) exactly", () => {
    let seed = 20261129;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let round = 0; round < 500; round++) {
      const sent = Array.from({ length: 1 + rand(6) }, () => [rand(3), Uint8Array.from({ length: rand(4) === 0 ? 40_000 + rand(30_000) : rand(40) }, () => rand(256))] as [number, Uint8Array]);
      const bytes = Buffer.concat(sent.map(([f, d]) => envelope(f, d)));
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        const n = rand(5) === 0 ? 0 : 1 + rand(rand(2) === 0 ? 7 : 20_000);
        chunks.push(bytes.subarray(at, at + n));
        at += n;
      }
      const reader = new EnvelopeReader(1 << 20);
      expect(readAll(reader, chunks), `round ${round}`).to.deep.equal(sent.map(([f, d]) => [f, Buffer.from(d).toString("hex")]));
      expect(reader.pending).to.equal(0);
    }
  });

  it("keeps an incomplete envelope until the rest arrives", () => {
    const reader = new EnvelopeReader(1 << 20);
    // 8 bytes for the first envelope, 5 for the empty second, 2 of the third's header.
    expect(readAll(reader, [stream.subarray(0, 15)])).to.deep.equal([expected[0], expected[1]]);
    expect(reader.pending).to.equal(2);
    expect(readAll(reader, [stream.subarray(15)])).to.deep.equal(expected.slice(2));
    expect(reader.pending).to.equal(0);
  });

  it("refuses an envelope longer than the cap from its header, before its body arrives", () => {
    const reader = new EnvelopeReader(100);
    const head = Buffer.from([0, 0, 0, 0, 101]);
    let err: unknown;
    try {
      reader.push(head, () => expect.fail("no envelope expected"));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).code).to.equal(Code.ResourceExhausted);
    expect(readAll(new EnvelopeReader(100), [envelope(0, new Uint8Array(100))])[0]?.[1]).to.have.length(200);
  });

  it("refuses an end-of-stream envelope longer than its own cap from its header, and reads other envelopes up to the general cap", () => {
    const reader = new EnvelopeReader(1000, 10);
    expect(() => reader.push(Buffer.from([2, 0, 0, 0, 11]), () => expect.fail("no envelope expected"))).to.throw(ConnectError, /end-of-stream/);
    const read = readAll(new EnvelopeReader(1000, 10), [envelope(0, new Uint8Array(500)), envelope(2, new Uint8Array(10))]);
    expect(read.map(([flags]) => flags)).to.deep.equal([0, 2]);
  });

  it("hands up data of its own: changing the chunk afterwards changes nothing read", () => {
    const chunk = envelope(0, Uint8Array.of(7, 7, 7));
    let got: Uint8Array | undefined;
    new EnvelopeReader(100).push(chunk, (_f, d) => (got = d));
    chunk.fill(0);
    expect([...(got as Uint8Array)]).to.deep.equal([7, 7, 7]);
    expect((got as Uint8Array).buffer).to.not.equal(chunk.buffer);
  });
});
