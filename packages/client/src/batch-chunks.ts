// How a batch is cut: at most BATCH_CHUNK_ITEMS items (the server's batch limit) and, for
// setMany, at most `bodyBytesMax` bytes of JSON body, below the server's request body limit
// (SERVICE_MAX_BODY_BYTES, 16 MiB by default: a larger body is refused 413 as a whole, every item
// of it failed). The size of each item's JSON is counted exactly without building it, so the cut
// costs no copy of a value. An item that alone is over the bound is a chunk of its own that is
// never sent: it fails with a PayloadTooLargeError, and its neighbours are stored.
import { ttlToMs } from "./duration.js";
import { PayloadTooLargeError } from "./errors.js";
import type { SetManyItem } from "./batch-ops.js";

/** Bytes of `{"items":[` and `]}` around a batch put's items. */
const ENVELOPE_BYTES = '{"items":[]}'.length;

/** Bytes of `s` as a JSON string in UTF-8, quotes included (as JSON.stringify writes it). */
export function jsonStringBytes(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x20) n += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4;
        i++;
      } else n += 6; // a lone surrogate is written \udXXX
    } else if (c >= 0xdc00 && c <= 0xdfff) n += 6;
    else n += 3;
  }
  return n;
}

/** Length of the base64 text of `n` bytes. */
const base64Bytes = (n: number): number => 4 * Math.ceil(n / 3);

/** Byte length of a binary value (bytes, a view, a Blob). */
function binaryLength(v: SetManyItem["value"]): number {
  if (typeof Blob !== "undefined" && v instanceof Blob) return v.size;
  return (v as ArrayBuffer | ArrayBufferView).byteLength;
}

/**
 * Bytes of one setMany item in the batch put body: its JSON object, as the client sends it (text
 * as a JSON string, bytes as base64, `ttl_ms` when it has a TTL). Exported for the CLI's `load`.
 */
export function setManyItemBytes(it: SetManyItem): number {
  const v = it.value;
  let n = '{"key":,"value":}'.length + jsonStringBytes(it.key);
  if (typeof v === "string") {
    n += jsonStringBytes(v);
    if (it.encoding === "base64") n += ',"value_encoding":"base64"'.length;
  } else n += 2 + base64Bytes(binaryLength(v)) + ',"value_encoding":"base64"'.length;
  if (it.ttl !== undefined) n += ',"ttl_ms":'.length + String(ttlToMs(it.ttl)).length;
  if (it.ifMatch !== undefined) n += ',"if_match":'.length + jsonStringBytes(typeof it.ifMatch === "string" ? it.ifMatch : it.ifMatch.join(", "));
  if (it.ifNoneMatch !== undefined) n += ',"if_none_match":"*"'.length;
  return n;
}

/** A run of input items sent as one call, or one item too large to send (with its error). */
export interface Chunk<I> {
  readonly items: I[];
  readonly tooLarge?: Error;
}

/**
 * Cuts `input` into chunks of at most `itemsMax` items and, when `sizeOf` is given, at most
 * `bytesMax` bytes of body (items, commas and the envelope); the chunks keep input order.
 */
export function cutChunks<I>(input: readonly I[], itemsMax: number, bytesMax: number, sizeOf?: (item: I) => number): Chunk<I>[] {
  const out: Chunk<I>[] = [];
  let items: I[] = [];
  let bytes = ENVELOPE_BYTES;
  for (const item of input) {
    const size = sizeOf ? sizeOf(item) : 0;
    if (sizeOf && ENVELOPE_BYTES + size > bytesMax) {
      if (items.length > 0) out.push({ items });
      items = [];
      bytes = ENVELOPE_BYTES;
      const message = `the item is ${size} bytes of JSON, over the client's batch body bound of ${bytesMax} bytes (batchBodyBytes; the server's SERVICE_MAX_BODY_BYTES is 16 MiB by default): not sent`;
      out.push({ items: [item], tooLarge: new PayloadTooLargeError({ status: 413, code: "PAYLOAD_TOO_LARGE", message, endpoint: "", details: { item_bytes: size, batch_body_bytes_max: bytesMax } }) });
      continue;
    }
    const added = size + (items.length > 0 ? 1 : 0);
    if (items.length >= itemsMax || (sizeOf && bytes + added > bytesMax)) {
      out.push({ items });
      items = [];
      bytes = ENVELOPE_BYTES;
    }
    bytes += size + (items.length > 0 ? 1 : 0);
    items.push(item);
  }
  if (items.length > 0) out.push({ items });
  return out;
}
