// gzip for the peer transport, in place of Connect's `compressionGzip`, which inflates a body in
// 16 KiB chunks until the output passes readMaxBytes: a compression bomb (1 MB of gzip that
// inflates to 1 GiB) had the node allocate 16 MiB before refusing it, and those chunks waited for
// a garbage collection and grew glibc's arena for good (the route fuzzer saw 45-70 MiB of RSS
// kept). Here a body is refused before anything is inflated:
// - with compression off on this node (SERVICE_COMPRESSION_THRESHOLD=0) a gzip body is refused
//   (400 invalid_argument; SPEC: "a peer that has compression disabled may answer 400");
// - otherwise the gzip trailer declares the inflated size (ISIZE): above the cap the body is
//   refused (429 resource_exhausted, as Connect answers it); a size DEFLATE cannot reach from
//   the body's length (more than 1032:1) is a lie refused at once (400), so a few bytes cannot
//   make the node allocate up to the cap; otherwise the body is inflated into one buffer of that
//   size, never past it (a trailer that lies within the bound fails the inflation).
// A body is one gzip member, as every Connect peer sends it (zlib.gzip of the message).
import { promisify } from "node:util";
import zlib from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Compression } from "@connectrpc/connect/protocol";

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip) as (input: Uint8Array, options: zlib.ZlibOptions) => Promise<Buffer>;

/** A gzip member is at least a 10-byte header and an 8-byte trailer (CRC-32, ISIZE). */
const GZIP_MIN_BYTES = 18;
/** zlib's smallest output chunk. */
const ZLIB_CHUNK_MIN = 64;
/**
 * DEFLATE's greatest expansion: a stored-length code of 258 bytes costs at least 2 bits, so
 * 1032:1 (rounded up), plus room for the gzip header and trailer of a tiny member.
 */
const DEFLATE_RATIO_MAX = 1033;

/**
 * The inflated size a gzip member declares in its trailer (ISIZE, little-endian, modulo 2^32), or
 * undefined when the bytes cannot be a gzip member.
 */
export function declaredGzipSize(bytes: Uint8Array): number | undefined {
  if (bytes.length < GZIP_MIN_BYTES || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return undefined;
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(bytes.length - 4, true);
}

export interface PeerGzipOptions {
  /** False when this node's compression is off: compressed bodies are refused, answers still compress. */
  readonly acceptCompressed: boolean;
}

export function peerGzip(options: PeerGzipOptions): Compression {
  return {
    name: "gzip",
    async compress(bytes) {
      return new Uint8Array(await gzip(bytes));
    },
    async decompress(bytes, readMaxBytes) {
      if (!options.acceptCompressed) {
        throw new ConnectError("gzip bodies are refused: peer compression is off on this node (SERVICE_COMPRESSION_THRESHOLD is 0)", Code.InvalidArgument);
      }
      if (bytes.length === 0) return new Uint8Array(0);
      const size = declaredGzipSize(bytes);
      if (size === undefined) throw new ConnectError("decompression failed: the body is not gzip", Code.InvalidArgument);
      if (size > readMaxBytes) {
        throw new ConnectError(`message is larger than configured readMaxBytes ${readMaxBytes} after decompression (its gzip trailer declares ${size} bytes)`, Code.ResourceExhausted);
      }
      if (size > (bytes.length + ZLIB_CHUNK_MIN) * DEFLATE_RATIO_MAX) {
        throw new ConnectError(`decompression failed: ${bytes.length} bytes of gzip cannot inflate to the ${size} bytes its trailer declares`, Code.InvalidArgument);
      }
      try {
        // One output chunk of the declared size (plus room to see the end of the stream).
        const out = await gunzip(bytes, { maxOutputLength: Math.max(size, 1), chunkSize: Math.max(ZLIB_CHUNK_MIN, size + ZLIB_CHUNK_MIN) });
        return new Uint8Array(out.buffer as ArrayBuffer, out.byteOffset, out.byteLength);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === "ERR_BUFFER_TOO_LARGE" ? `it inflates past the ${size} bytes its gzip trailer declares` : code ?? "invalid gzip";
        throw new ConnectError(`decompression failed: ${why}`, Code.InvalidArgument);
      }
    },
  };
}
