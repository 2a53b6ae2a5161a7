// One line of a load file: a batch-put item as JSON, `{"key": "...", "value": ..., "ttl_ms"?: n,
// "ttl"?: "30s", "value_encoding"?: "base64"}`. A string value is stored as its UTF-8 text (or
// decoded from base64); any other JSON value is stored as its JSON text as written in the line
// (numbers keep their digits; only the whitespace between tokens is dropped). Any other member, or
// both `ttl` and `ttl_ms`, makes the line bad, as the server refuses such a batch item: an
// ignored member would load the value without the expiry or the condition the line meant.
import { ttlToMs, type SetManyItem } from "@hypercache/client/node";
import { memberSource } from "./json-source.js";

export type ParsedLine = { readonly item: SetManyItem } | { readonly error: string } | { readonly blank: true };

const LINE_MEMBERS: readonly string[] = ["key", "value", "value_encoding", "ttl", "ttl_ms"];

function describe(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v;
}

export function parseLoadLine(line: string): ParsedLine {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (text.trim() === "") return { blank: true };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return { error: `not JSON: ${(err as Error).message}` };
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return { error: `expected an object, got ${describe(v)}` };
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => !LINE_MEMBERS.includes(k));
  if (unknown !== undefined) return { error: `unknown member ${JSON.stringify(unknown)}; a load line takes ${LINE_MEMBERS.join(", ")}` };
  if (o.ttl !== undefined && o.ttl_ms !== undefined) return { error: "a line takes `ttl` or `ttl_ms`, not both" };
  if (typeof o.key !== "string" || o.key === "") return { error: "`key` must be a non-empty string" };
  if (!("value" in o) || o.value === undefined) return { error: "`value` is missing" };
  if (o.value_encoding !== undefined && (o.value_encoding !== "base64" || typeof o.value !== "string")) return { error: '`value_encoding` must be "base64" with a string value' };
  if ((o.ttl_ms !== undefined && typeof o.ttl_ms !== "number") || (o.ttl !== undefined && typeof o.ttl !== "string")) return { error: "`ttl_ms` must be a number and `ttl` a duration string" };
  let ttl: number | undefined;
  try {
    if (o.ttl_ms !== undefined) ttl = ttlToMs(o.ttl_ms as number);
    else if (o.ttl !== undefined) ttl = ttlToMs(o.ttl as string);
  } catch (err) {
    return { error: (err as Error).message };
  }
  // Never JSON.stringify(JSON.parse(...)): that rounds 12345678901234567890 and turns 1e400 into null.
  const value = typeof o.value === "string" ? o.value : (memberSource(text, "value") ?? JSON.stringify(o.value));
  return { item: { key: o.key, value, ...(ttl !== undefined ? { ttl } : {}), ...(o.value_encoding === "base64" ? { encoding: "base64" as const } : {}) } };
}

/**
 * Longest line `load` reads (bytes): the server's body limit (16 MiB) × 4/3, the size of a value
 * of that limit as base64, plus 64 KiB for the key and the other members. A longer line cannot
 * give an item the server takes; it is a bad line, its bytes dropped as they come.
 */
export const LINE_BYTES_MAX = Math.ceil((16 * 1024 * 1024 * 4) / 3) + 64 * 1024;

/** One line of the input: its text, or why it is a bad line before its JSON is looked at. */
export type InputLine = { readonly text: string } | { readonly error: string };

const UTF8_BOM = "\uFEFF";

/**
 * Splits a byte stream into lines, counting the bytes read; pulls only as fast as it is consumed.
 * Each byte is scanned once (a line that spans many chunks is kept as its chunks' slices, joined
 * once). A line over `lineBytesMax` is a bad line, dropped up to the next newline without being
 * held; a line that is not UTF-8 is a bad line (never decoded with U+FFFD in place of its bytes).
 * A byte order mark opening the stream is skipped.
 */
export async function* readLines(stream: AsyncIterable<Buffer | string>, progress: { bytes: number }, lineBytesMax = LINE_BYTES_MAX): AsyncGenerator<InputLine> {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const decode = (parts: Buffer[], length: number, first: boolean): InputLine => {
    let text: string;
    try {
      text = decoder.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts, length));
    } catch {
      return { error: "not UTF-8 text" };
    }
    return { text: first && text.startsWith(UTF8_BOM) ? text.slice(1) : text };
  };
  const tooLong: InputLine = { error: `a line over ${lineBytesMax} bytes (skipped up to the next newline)` };
  let parts: Buffer[] = [];
  let length = 0;
  let skipping = false;
  let first = true;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    progress.bytes += bytes.length;
    for (let start = 0; ; ) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl;
      if (!skipping && length + (end - start) > lineBytesMax) {
        skipping = true;
        parts = [];
        length = 0;
      }
      if (!skipping && end > start) {
        parts.push(bytes.subarray(start, end));
        length += end - start;
      }
      if (nl < 0) break;
      yield skipping ? tooLong : decode(parts, length, first);
      parts = [];
      length = 0;
      skipping = false;
      first = false;
      start = nl + 1;
    }
  }
  if (skipping) yield tooLong;
  else if (length > 0) yield decode(parts, length, first);
}

const STOPPED = Symbol("stopped");

/**
 * The items of `source` until `signal` aborts. A read still waiting then is abandoned (its result,
 * or the error of the stream the caller destroys under it, is dropped), so Ctrl-C ends a load
 * whose input is quiet (`load -` from a producer that pauses) without waiting for the next line.
 * One listener on the signal, and one promise per read that nothing keeps once it settled.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let wake: ((r: typeof STOPPED) => void) | undefined;
  const onAbort = () => wake?.(STOPPED);
  signal.addEventListener("abort", onAbort, { once: true });
  let waiting: Promise<IteratorResult<T>> | undefined;
  try {
    while (!signal.aborted) {
      const read = it.next();
      waiting = read;
      const r = await new Promise<IteratorResult<T> | typeof STOPPED>((resolve, reject) => {
        wake = resolve;
        read.then(resolve, reject);
      });
      wake = undefined;
      if (r === STOPPED) return;
      waiting = undefined;
      if (r.done) return;
      yield r.value;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Closed between reads (the input ended, or the consumer stopped): close the source too. An
    // abandoned read is left alone: a return() would wait behind it.
    if (waiting === undefined) await it.return?.();
  }
}
