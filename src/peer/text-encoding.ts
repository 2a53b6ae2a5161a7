// UTF-8 for protobuf-es strings, quicker for the short ASCII strings the peer messages are made
// of (keys, node ids, origins, error codes). protobuf-es encodes and decodes every string field
// through the WHATWG TextEncoder/TextDecoder; in Node 20 each call crosses into C++, which costs
// more than the whole field for a 10-byte key: in the profile of a 3-node cluster under QUORUM
// PUTs, TextEncoder.encode was the largest single item of the replicas' encoding time.
// Short ASCII strings are converted here byte for byte (the same bytes, and the same string, as
// UTF-8 gives); anything longer or with a byte above 0x7f goes to the default implementation,
// strict decoding included. configureTextEncoding is protobuf-es's own hook for this.
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";

/** Strings up to this many chars (bytes, decoding) take the ASCII path. */
export const SHORT_TEXT_MAX = 64;

type TextEncoding = ReturnType<typeof getTextEncoding>;

/** `base` with an ASCII fast path for short strings; the same results as `base`. */
export function fastTextEncoding(base: TextEncoding): TextEncoding {
  return {
    encodeUtf8(text: string): ReturnType<TextEncoding["encodeUtf8"]> {
      const n = text.length;
      if (n > SHORT_TEXT_MAX) return base.encodeUtf8(text);
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c > 0x7f) return base.encodeUtf8(text);
        out[i] = c;
      }
      return out;
    },
    decodeUtf8(bytes: Uint8Array, strict?: boolean): string {
      const n = bytes.length;
      if (n > SHORT_TEXT_MAX) return base.decodeUtf8(bytes, strict);
      let s = "";
      for (let i = 0; i < n; i++) {
        const c = bytes[i] as number;
        if (c > 0x7f) return base.decodeUtf8(bytes, strict);
        s += String.fromCharCode(c);
      }
      return s;
    },
    checkUtf8: (text: string) => base.checkUtf8(text),
  };
}

const INSTALLED = Symbol.for("hypercache/peer/fast-text-encoding");

/**
 * Makes protobuf-es use fastTextEncoding in this process (its setting is process-wide, shared by
 * the ESM and CommonJS builds). Idempotent; called where the peer client and server are made.
 */
export function installFastTextEncoding(): void {
  const g = globalThis as { [INSTALLED]?: boolean };
  if (g[INSTALLED]) return;
  configureTextEncoding(fastTextEncoding(getTextEncoding()));
  g[INSTALLED] = true;
}
