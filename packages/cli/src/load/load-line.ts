// One line of a load file: a batch-put item as JSON, `{"key": "...", "value": ..., "ttl_ms"?: n,
// "ttl"?: "30s", "value_encoding"?: "base64"}`. A string value is stored as its UTF-8 text (or
// decoded from base64); any other JSON value is stored as its JSON text. Any other member, or
// both `ttl` and `ttl_ms`, makes the line bad, as the server refuses such a batch item: an
// ignored member would load the value without the expiry or the condition the line meant.
import { ttlToMs, type SetManyItem } from "@hypercache/client/node";

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
  const value = typeof o.value === "string" ? o.value : JSON.stringify(o.value);
  return { item: { key: o.key, value, ...(ttl !== undefined ? { ttl } : {}), ...(o.value_encoding === "base64" ? { encoding: "base64" as const } : {}) } };
}

/** Splits a byte stream into lines (UTF-8), counting the bytes read; pulls only as fast as it is consumed. */
export async function* readLines(stream: AsyncIterable<Buffer | string>, progress: { bytes: number }): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8");
  let rest = "";
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    progress.bytes += bytes.length;
    const text = rest + decoder.decode(bytes, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.decode();
  if (rest !== "") yield rest;
}
