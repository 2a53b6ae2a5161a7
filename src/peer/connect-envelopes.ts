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
import { endStreamFlag } from "@connectrpc/connect/protocol-connect";

const ENVELOPE_HEADER_BYTES = 5;

/** One Connect envelope: flags, length, data. */
export function envelope(flags: number, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(ENVELOPE_HEADER_BYTES + data.length);
  out[0] = flags;
  out.writeUInt32BE(data.length, 1);
  out.set(data, ENVELOPE_HEADER_BYTES);
  return out;
}

/** The first allocation for an envelope that spans chunks; it doubles as bytes arrive, up to the declared length. */
const BODY_INITIAL_BYTES = 16 * 1024;

/**
 * Splits a byte stream into envelopes. The work is proportional to the bytes and chunks read,
 * however they are cut (an envelope sent as a million one-byte HTTP/2 DATA frames included): the
 * header is gathered in 5 bytes of its own, and an envelope that spans chunks is copied into a
 * buffer of its own that doubles as its bytes arrive, so a peer that declares 16 MiB and sends
 * little holds little. Each envelope's data is its own array: nothing read keeps a socket chunk
 * alive.
 */
export class EnvelopeReader {
  private readonly head = Buffer.alloc(ENVELOPE_HEADER_BYTES);
  private headFill = 0;
  /** The declared length and flags of the envelope being read, once its header is complete. */
  private length = 0;
  private flags = 0;
  /** Its bytes so far, when it spans chunks. */
  private body: Uint8Array | undefined;
  private bodyFill = 0;

  /**
   * `maxBytes` caps every envelope; `endStreamMaxBytes` caps the end-of-stream one (flags 0x02,
   * JSON the caller parses), refused from its header like any other.
   */
  constructor(
    private readonly maxBytes: number,
    private readonly endStreamMaxBytes = maxBytes,
  ) {}

  /** Takes a chunk and calls `onEnvelope` for every envelope it completes; throws on an oversized one. */
  push(chunk: Uint8Array, onEnvelope: (flags: number, data: Uint8Array) => void): void {
    let at = 0;
    for (;;) {
      if (this.headFill < ENVELOPE_HEADER_BYTES) {
        while (this.headFill < ENVELOPE_HEADER_BYTES && at < chunk.length) this.head[this.headFill++] = chunk[at++] as number;
        if (this.headFill < ENVELOPE_HEADER_BYTES) return;
        this.flags = this.head[0] as number;
        this.length = this.head.readUInt32BE(1);
        if (this.length > this.maxBytes) {
          throw new ConnectError(`message size ${this.length} is larger than configured readMaxBytes ${this.maxBytes}`, Code.ResourceExhausted);
        }
        if (this.flags & endStreamFlag && this.length > this.endStreamMaxBytes) {
          throw new ConnectError(`end-of-stream message size ${this.length} is larger than ${this.endStreamMaxBytes}`, Code.ResourceExhausted);
        }
        this.bodyFill = 0;
        if (chunk.length - at >= this.length) {
          // The whole envelope is in this chunk: one copy.
          const data = Uint8Array.prototype.slice.call(chunk, at, at + this.length);
          at += this.length;
          this.headFill = 0;
          onEnvelope(this.flags, data);
          continue;
        }
        this.body = new Uint8Array(Math.min(this.length, Math.max(BODY_INITIAL_BYTES, chunk.length - at)));
      }
      const body = this.grow(Math.min(this.length, this.bodyFill + chunk.length - at));
      const n = Math.min(this.length - this.bodyFill, chunk.length - at);
      body.set(chunk.subarray(at, at + n), this.bodyFill);
      this.bodyFill += n;
      at += n;
      if (this.bodyFill < this.length) return;
      this.body = undefined;
      this.headFill = 0;
      onEnvelope(this.flags, body);
    }
  }

  /** Bytes held of an envelope not complete yet (its header included). */
  get pending(): number {
    return this.headFill + (this.body !== undefined ? this.bodyFill : 0);
  }

  /** The body buffer, doubled until it holds `bytes` (never past the declared length). */
  private grow(bytes: number): Uint8Array {
    let body = this.body as Uint8Array;
    if (body.length >= bytes) return body;
    let size = body.length;
    while (size < bytes) size = Math.min(this.length, size * 2);
    const bigger = new Uint8Array(size);
    bigger.set(body.subarray(0, this.bodyFill));
    this.body = body = bigger;
    return body;
  }
}

/** The largest piece written at once. */
const WRITE_PIECE_BYTES = 64 * 1024;

/** What writeEnvelope needs of a stream (an HTTP/2 stream, or the compat response). */
export interface EnvelopeSink {
  write(chunk: Uint8Array): boolean;
  readonly destroyed: boolean;
  /** True once the stream closed (an HTTP/2 stream that was reset may not be destroyed yet). */
  readonly closed: boolean;
  on(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
}

/** Resolves once `out` can take more, or closed (at once when it is closed already). */
export function drained(out: EnvelopeSink): Promise<void> {
  if (out.destroyed || out.closed) return Promise.resolve();
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

/** Throws ResourceExhausted, as Connect does, for a message over the write cap. */
export function checkWriteSize(data: Uint8Array, maxBytes: number): void {
  if (data.length > maxBytes) throw new ConnectError(`message size ${data.length} is larger than configured writeMaxBytes ${maxBytes}`, Code.ResourceExhausted);
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
    for (let at = 0; at < data.length && !out.destroyed && !out.closed; at += WRITE_PIECE_BYTES) {
      if (!out.write(data.subarray(at, at + WRITE_PIECE_BYTES))) await drained(out);
    }
  })();
}
