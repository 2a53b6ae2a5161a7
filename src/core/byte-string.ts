// Values are held as "byte strings": JS strings with one char per byte (latin1). V8 stores them
// as one-byte strings, about a third smaller than a Buffer per small value and invisible to
// the GC's pointer tracing, which is what lets a million items fit the memory budget. They
// convert to and from Buffers with one copy, the copy a value needs anyway when it leaves the
// socket buffer it arrived in.

/** A value's bytes, one char per byte. `length` is the size in bytes. */
export type ByteString = string;

export function fromBytes(bytes: Uint8Array): ByteString {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

export function toBuffer(value: ByteString): Buffer {
  return Buffer.from(value, "latin1");
}

export function fromUtf8(text: string): ByteString {
  return Buffer.from(text, "utf8").toString("latin1");
}

export function fromBase64(text: string): ByteString {
  return Buffer.from(text, "base64").toString("latin1");
}

export function toBase64(value: ByteString): string {
  return Buffer.from(value, "latin1").toString("base64");
}
