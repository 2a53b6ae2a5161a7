import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { expect } from "chai";
import { toBase64 } from "../../../src/core/byte-string.js";
import { envelopeBytes, envelopePieces, PIECE_BYTES, rawPieces, writeInPieces, type Piece } from "../../../src/http/pieced-answer.js";

/** A value of `n` bytes as a ByteString (latin1), every byte value present. */
const valueOf = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + (i >> 8)) & 0xff)).toString("latin1");

const text = (pieces: Iterable<Piece>) => Buffer.concat([...pieces].map(([t, enc]) => Buffer.from(t, enc))).toString("utf8");

class FakeResponse extends EventEmitter {
  destroyed = false;
  ended = false;
  readonly written: Buffer[] = [];
  /** The callbacks of writes the socket has not taken yet. */
  readonly untaken: Array<() => void> = [];
  write(chunk: Buffer, cb: () => void): boolean {
    // Copied now: the writer reuses its buffer once the callback ran.
    this.written.push(Buffer.from(chunk));
    this.untaken.push(cb);
    return true;
  }
  /** The socket takes every write so far. */
  take(): void {
    for (const cb of this.untaken.splice(0)) cb();
  }
  end(): void {
    this.ended = true;
  }
}

describe("http/pieced-answer", () => {
  it("the raw pieces are the value's bytes, PIECE_BYTES at a time", () => {
    for (const n of [1, PIECE_BYTES, PIECE_BYTES + 1, 3 * PIECE_BYTES + 7]) {
      const v = valueOf(n);
      const pieces = [...rawPieces(v)];
      expect(pieces).to.have.length(Math.ceil(n / PIECE_BYTES));
      expect(pieces.map(([t]) => t).join("")).to.equal(v);
    }
  });

  it("the envelope's pieces make exactly JSON.stringify of the envelope, and envelopeBytes is its length in bytes", () => {
    for (const n of [0, 2, PIECE_BYTES - 1, PIECE_BYTES, 2 * PIECE_BYTES + 2]) {
      for (const rest of [{}, { value_encoding: "base64", version: 7, owners: ["n1", "n2"], node: "nœud" }]) {
        const v = valueOf(n);
        const key = 'ключ "q"';
        const whole = JSON.stringify({ key, value: toBase64(v), ...rest });
        const json = text(envelopePieces(key, v, rest));
        expect(json, `n=${n}`).to.equal(whole);
        expect(envelopeBytes(key, v, rest), `n=${n}`).to.equal(Buffer.byteLength(whole));
      }
    }
  });

  it("writes the next piece once the socket has taken the one before, and a turn later; then ends the answer", async () => {
    const res = new FakeResponse();
    const pauses: number[] = [];
    const v = valueOf(3 * PIECE_BYTES + 5);
    const done = writeInPieces(res as unknown as ServerResponse, rawPieces(v), async () => void pauses.push(res.written.length));
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setImmediate(r));
      expect(res.written, `piece ${i + 1} waits for the socket`).to.have.length(i + 1);
      res.take();
    }
    await done;
    expect(pauses).to.deep.equal([1, 2, 3, 4]);
    expect(Buffer.concat(res.written).toString("latin1")).to.equal(v);
    expect(res.ended).to.equal(true);
  });

  it("stops when the response closes: no more pieces, no end", async () => {
    const res = new FakeResponse();
    const done = writeInPieces(res as unknown as ServerResponse, rawPieces(valueOf(3 * PIECE_BYTES)), async () => undefined);
    res.destroyed = true;
    res.emit("close");
    await done;
    expect(res.written).to.have.length(1);
    expect(res.ended).to.equal(false);
  });
});
