// One item as the client API shows it, built in one place: the JSON envelope (GET with Accept
// JSON, batch get results) and the response headers (raw GET and HEAD).
import type { components } from "../../gen/openapi/client.js";
import { toBase64 } from "../core/byte-string.js";
import type { Owners } from "../ring/index.js";
import type { LiveItem } from "../store/index.js";

type Schemas = components["schemas"];

/** The item envelope: value in base64; ttl_ms and expires_at only when the item has a TTL. */
export function itemEnvelope(item: LiveItem, owners: Owners, nodeId: string, nowMs: number): Schemas["ItemEnvelope"] {
  return { key: item.key, value: toBase64(item.value), ...itemFields(item, owners, nodeId, nowMs) };
}

/** The envelope's fields other than key and value (for answers that encode the value later). */
export function itemFields(item: LiveItem, owners: Owners, nodeId: string, nowMs: number): Omit<Schemas["ItemEnvelope"], "key" | "value"> {
  const env: Omit<Schemas["ItemEnvelope"], "key" | "value"> = {
    value_encoding: "base64",
    version: item.version,
    origin: item.origin,
    last_updated: new Date(item.lastUpdatedMs).toISOString(),
    node: nodeId,
    owners: owners.ids as string[],
  };
  if (item.expiresAtMs > 0) {
    env.ttl_ms = Math.max(0, item.expiresAtMs - nowMs);
    env.expires_at = new Date(item.expiresAtMs).toISOString();
  }
  return env;
}

/**
 * Headers of an item answer, as a flat [name, value, ...] list. A raw GET carries the ETag (the
 * caller computed it for If-None-Match already), version, origin, node and owners; HEAD (`full`)
 * adds the last-updated time and, for an item with a TTL, the TTL left and the expiry.
 */
export function itemHeaders(item: LiveItem, owners: Owners, nodeId: string, nowMs: number, full: boolean, etag: string): string[] {
  const headers = [
    "Content-Type", "application/octet-stream",
    "Content-Length", String(item.value.length),
    "ETag", etag,
    "X-Cache-Version", String(item.version),
    "X-Cache-Origin", item.origin,
    "X-Cache-Node", nodeId,
    "X-Cache-Owners", owners.header,
  ];
  if (!full) return headers;
  headers.push("X-Cache-Last-Updated", new Date(item.lastUpdatedMs).toISOString());
  if (item.expiresAtMs > 0) {
    headers.push("X-Cache-Ttl-Ms", String(Math.max(0, item.expiresAtMs - nowMs)));
    headers.push("X-Cache-Expires-At", new Date(item.expiresAtMs).toISOString());
  }
  return headers;
}

/** Headers of a 304 Not Modified answer: the ETag, version, origin, node and owners. */
export function notModifiedHeaders(item: LiveItem, owners: Owners, nodeId: string, etag: string): string[] {
  return ["ETag", etag, "X-Cache-Version", String(item.version), "X-Cache-Origin", item.origin, "X-Cache-Node", nodeId, "X-Cache-Owners", owners.header];
}
