// Conversions between what callers pass or get and what travels: value bodies, item envelopes,
// item headers, and typed errors of answers.
import { base64Field, shaped, type Blamed, type Shape } from "./answer-checks.js";
import { ITEM_SHAPE } from "./answer-shapes.js";
import { badAnswer, errorFromAnswer, type HypercacheError } from "./errors.js";
import type { BufferedResponse } from "./failover-transport.js";
import type { components } from "./gen/client.js";
import { etagField } from "./conditions.js";
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
  /**
   * The item's strong ETag, for `ifMatch` / `ifNoneMatch` of a later write (compare it as a
   * string; never parse it). Absent in batch results (the batch answer carries none).
   */
  readonly etag?: string;
}

/** An item's metadata as read with `head`. */
export interface ItemMeta extends Omit<CacheItem, "value"> {
  /** Size of the value in bytes. */
  readonly size: number;
}

/** The answer of `set`, with the stored item's ETag; `replayed` as for DeleteResult. */
export type PutResult = components["schemas"]["PutResponse"] & { readonly etag?: string; readonly replayed?: true };
/**
 * The answer of `delete`. `replayed` (present only when true: results compared or printed as
 * before otherwise): an earlier attempt may have reached a node (a timeout, a
 * broken connection, a 5xx) before this answer came from a replay, so `deleted: false` may mean
 * that the earlier attempt deleted the key: the key is gone either way.
 */
export type DeleteResult = components["schemas"]["DeleteResponse"] & { readonly replayed?: true };
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

/** The item envelope (or a found batch-get entry) of answer `from` in the client's shape; a BadAnswerError when it is not one. */
export function itemFromEnvelope(data: unknown, from: Blamed): CacheItem {
  const e = shaped<ItemFields & { value: string }>(data, ITEM_SHAPE, "an item", from);
  return {
    key: e.key,
    value: base64Field(e.value, from),
    version: e.version,
    origin: e.origin,
    lastUpdated: e.last_updated,
    ...(e.ttl_ms !== undefined ? { ttlMs: e.ttl_ms } : {}),
    ...(e.expires_at !== undefined ? { expiresAt: e.expires_at } : {}),
    node: e.node,
    owners: e.owners,
  };
}

/** The metadata of a HEAD answer's headers; a BadAnswerError without hypercache's item headers. */
export function metaFromHeaders(key: string, from: Blamed): ItemMeta {
  const h = from.headers;
  const num = (name: string) => {
    const v = h.get(name);
    if (v === null) return undefined;
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n)) throw badAnswer(from.status, from.endpoint, `an item header ${name} that is not a number`);
    return n;
  };
  if (h.get("x-cache-version") === null || h.get("x-cache-node") === null) throw badAnswer(from.status, from.endpoint, "an item answer without X-Cache-Version and X-Cache-Node");
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
    ...etagField(h),
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

/**
 * The data of a 2xx openapi-fetch answer, a JSON object with the fields of `shape` (`what` names it
 * in the BadAnswerError of any other), or the typed error of an error answer.
 */
export function dataOf<T>(r: { data?: T; response: Response }, shape: Shape = {}, what = "an answer"): T {
  const answer = buffered(r.response);
  if (r.data !== undefined) return shaped<T>(r.data, shape, what, answer);
  throw answerError(answer);
}

/** A 200 value answer's bytes: hypercache sends them as application/octet-stream. */
export function valueOf(response: BufferedResponse): Uint8Array {
  const type = response.headers.get("content-type");
  if (type === null || !/^application\/octet-stream\s*(?:;|$)/i.test(type)) throw badAnswer(response.status, response.endpoint, `a value of type ${type ?? "(none)"}, not application/octet-stream`);
  return response.bytes;
}
