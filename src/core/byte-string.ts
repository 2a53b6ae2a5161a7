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

/** Base64 alphabet flags by char code (standard alphabet; `=` only as padding). */
const BASE64_CHAR = (() => {
  const t = new Uint8Array(128);
  for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") t[c.charCodeAt(0)] = 1;
  return t;
})();

/** Characters of the padded base64 text of `bytes` bytes. */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/**
 * Decoded size of standard base64 text (padded or not), or undefined when it is not valid
 * base64. One pass, no backtracking, nothing decoded: callers check a size limit first.
 */
export function base64DecodedLength(text: string): number | undefined {
  let end = text.length;
  if (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--;
  if (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--;
  const padding = text.length - end;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || BASE64_CHAR[c] === 0) return undefined;
  }
  const tail = end % 4;
  if (tail === 1) return undefined;
  if (padding > 0 && (end + padding) % 4 !== 0) return undefined;
  return Math.floor(end / 4) * 3 + (tail === 0 ? 0 : tail - 1);
}
