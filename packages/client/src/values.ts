// Conversions between what callers pass or get and what travels: value bodies, item envelopes,
// item headers, and typed errors of answers.
import { decodeBase64 } from "./base64.js";
import { errorFromAnswer, type HypercacheError } from "./errors.js";
import type { BufferedResponse } from "./failover-transport.js";
import type { components } from "./gen/client.js";
import { buffered } from "./openapi-bridge.js";

/** A value to store: text is stored as UTF-8, anything else as its bytes. */
export type CacheValue = string | Uint8Array | ArrayBuffer | ArrayBufferView | Blob;

/** An item as read with `getItem`. */
export interface CacheItem {
  readonly key: string;
  readonly value: Uint8Array;
  /** Last-write-wins version. */
  readonly version: number;
  /** Node that originated the version. */
  readonly origin: string;
  /** When the version was written, ISO 8601 UTC. */
  readonly lastUpdated: string;
  /** Remaining time to live (ms); absent when the item never expires. */
  readonly ttlMs?: number;
  /** Absolute expiry, ISO 8601 UTC; absent when the item never expires. */
  readonly expiresAt?: string;
  /** Node that served the read. */
  readonly node: string;
  /** Owner nodes, primary first. */
  readonly owners: readonly string[];
}

/** An item's metadata as read with `head`. */
export interface ItemMeta extends Omit<CacheItem, "value"> {
  /** Size of the value in bytes. */
  readonly size: number;
}

export type PutResult = components["schemas"]["PutResponse"];
export type DeleteResult = components["schemas"]["DeleteResponse"];
export type Identity = components["schemas"]["Identity"];
export type Capability = components["schemas"]["Capability"];

/** The body to send for a value: strings as they are (fetch encodes UTF-8), the rest as bytes. */
export async function valueBody(value: CacheValue): Promise<string | Uint8Array> {
  if (typeof value === "string" || value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof Blob !== "undefined" && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  throw new TypeError("a value is a string, Uint8Array, ArrayBuffer, typed array or Blob");
}

type ItemFields = Pick<components["schemas"]["ItemEnvelope"], "key" | "version" | "origin" | "last_updated" | "ttl_ms" | "expires_at" | "node" | "owners">;

/** The item envelope (or a found batch-get entry) in the client's shape. */
export function itemFromEnvelope(e: ItemFields & { value?: string | undefined }): CacheItem {
  return {
    key: e.key,
    value: decodeBase64(e.value ?? ""),
    version: e.version,
    origin: e.origin,
    lastUpdated: e.last_updated,
    ...(e.ttl_ms !== undefined ? { ttlMs: e.ttl_ms } : {}),
    ...(e.expires_at !== undefined ? { expiresAt: e.expires_at } : {}),
    node: e.node,
    owners: e.owners,
  };
}

/** The metadata of a HEAD answer's headers. */
export function metaFromHeaders(key: string, h: { get(name: string): string | null }): ItemMeta {
  const num = (name: string) => {
    const v = h.get(name);
    return v === null ? undefined : Number(v);
  };
  const ttlMs = num("x-cache-ttl-ms");
  const expiresAt = h.get("x-cache-expires-at");
  return {
    key,
    size: num("content-length") ?? 0,
    version: num("x-cache-version") ?? 0,
    origin: h.get("x-cache-origin") ?? "",
    lastUpdated: h.get("x-cache-last-updated") ?? "",
    ...(ttlMs !== undefined ? { ttlMs } : {}),
    ...(expiresAt !== null ? { expiresAt } : {}),
    node: h.get("x-cache-node") ?? "",
    owners: (h.get("x-cache-owners") ?? "").split(",").filter((s) => s !== ""),
  };
}

/** The typed error of an error answer. */
export function answerError(response: BufferedResponse): HypercacheError {
  return errorFromAnswer(response.status, new TextDecoder().decode(response.bytes), response.endpoint);
}

/**
 * True for hypercache's 404 of a missing key: the NOT_FOUND envelope (not that of an unknown route,
 * a wrong base URL), or a bodyless answer (HEAD) with the X-Cache-Node header every key miss
 * carries. A proxy's 404 page, or a bare 404, is an error: reading it as "missing" would hide a
 * wrong endpoint behind empty reads.
 */
export function isMissingKey(err: HypercacheError, response: BufferedResponse): boolean {
  if (err.status !== 404 || err.code !== "NOT_FOUND" || err.details?.route === "unknown") return false;
  return response.bytes.byteLength > 0 || response.headers.get("x-cache-node") !== null;
}

/** The data of a 2xx openapi-fetch answer, or the typed error of any other. */
export function dataOf<T>(r: { data?: T; response: Response }): T {
  if (r.data !== undefined) return r.data;
  throw answerError(buffered(r.response));
}
