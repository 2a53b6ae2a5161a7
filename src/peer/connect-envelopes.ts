// The envelopes of the Connect streaming protocol (https://connectrpc.com/docs/protocol): a flags
// byte, a 4-byte big-endian length, the message. Connect's own envelope reader is internal to
// @connectrpc/connect (not exported), so the raw Exchange paths (exchange-http2-wire.ts and
// exchange-http2-handler.ts) read and write them here.
//
// Writes respect the stream's backpressure, and a large envelope is written in pieces: an
// HTTP/2 session whose queued output passes its memory limit (Node's maxSessionMemory, 10 MB)
// resets the stream with ENHANCE_YOUR_CALM as soon as the peer sends anything on it, so a 15 MiB
// value written in one piece while the other side had already answered its headers failed the
// write (test/integration/cluster-large-values.test.ts).
import { Code, ConnectError } from "@connectrpc/connect";

/** The envelope flag of a compressed message. */
export const COMPRESSED_FLAG = 0x01;

const ENVELOPE_HEADER_BYTES = 5;

/** One Connect envelope: flags, length, data. */
export function envelope(flags: number, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(ENVELOPE_HEADER_BYTES + data.length);
  out[0] = flags;
  out.writeUInt32BE(data.length, 1);
  out.set(data, ENVELOPE_HEADER_BYTES);
  return out;
}

/**
 * Splits a byte stream into envelopes. Each envelope's data is copied out of the chunks it came
 * in, so nothing read keeps a socket chunk alive.
 */
export class EnvelopeReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxBytes: number) {}

  /** Takes a chunk and calls `onEnvelope` for every envelope it completes; throws on an oversized one. */
  push(chunk: Buffer, onEnvelope: (flags: number, data: Uint8Array) => void): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= ENVELOPE_HEADER_BYTES) {
      const head = this.peekHeader();
      const length = head.readUInt32BE(1);
      if (length > this.maxBytes) {
        throw new ConnectError(`message size ${length} is larger than configured readMaxBytes ${this.maxBytes}`, Code.ResourceExhausted);
      }
      if (this.buffered < ENVELOPE_HEADER_BYTES + length) return;
      const all = this.take(ENVELOPE_HEADER_BYTES + length);
      onEnvelope(all[0] as number, all.subarray(ENVELOPE_HEADER_BYTES));
    }
  }

  /** Bytes held of an envelope not complete yet. */
  get pending(): number {
    return this.buffered;
  }

  private peekHeader(): Buffer {
    const first = this.chunks[0] as Buffer;
    return first.length >= ENVELOPE_HEADER_BYTES ? first : Buffer.concat(this.chunks, ENVELOPE_HEADER_BYTES);
  }

  /** The next `n` bytes, in an array of their own. */
  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0] as Buffer;
      const used = Math.min(c.length, n - filled);
      out.set(used === c.length ? c : c.subarray(0, used), filled);
      filled += used;
      if (used === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(used);
    }
    this.buffered -= n;
    return out;
  }
}

/** The largest piece written at once. */
const WRITE_PIECE_BYTES = 64 * 1024;

/** What writeEnvelope needs of a stream (an HTTP/2 stream, or the compat response). */
export interface EnvelopeSink {
  write(chunk: Uint8Array): boolean;
  readonly destroyed: boolean;
  on(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
}

/** Resolves once `out` can take more, or closed. */
export function drained(out: EnvelopeSink): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.on("drain", done);
    out.on("close", done);
  });
}

/**
 * Writes one envelope to `out`: at once when it is small, in pieces of at most 64 KiB (each
 * waiting until `out` can take more) when it is large. Returns a promise to wait for before the
 * next write when `out` is full, or undefined when it can take more now.
 */
export function writeEnvelope(out: EnvelopeSink, flags: number, data: Uint8Array): Promise<void> | undefined {
  if (ENVELOPE_HEADER_BYTES + data.length <= WRITE_PIECE_BYTES) return out.write(envelope(flags, data)) ? undefined : drained(out);
  return (async () => {
    const head = Buffer.allocUnsafe(ENVELOPE_HEADER_BYTES);
    head[0] = flags;
    head.writeUInt32BE(data.length, 1);
    if (!out.write(head)) await drained(out);
    for (let at = 0; at < data.length && !out.destroyed; at += WRITE_PIECE_BYTES) {
      if (!out.write(data.subarray(at, at + WRITE_PIECE_BYTES))) await drained(out);
    }
  })();
}
