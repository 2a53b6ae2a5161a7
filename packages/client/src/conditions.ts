// Conditional writes and counters in the client: the If-Match / If-None-Match headers of a write,
// the ETag an answer carries, and the Idempotency-Key an increment is sent with.
import type { HeadersLike } from "./fetch-types.js";

/** The conditions of a write (the server evaluates them on the key's primary; a 412 changes nothing). */
export interface WriteConditions {
  /**
   * Apply only when the item's current ETag is this one or one of these, as the client read them
   * (`etag` of getItem, head, set, touch and incr), or, with "*", when any live item exists.
   * Otherwise PreconditionFailedError (412) with `details.current_etag`.
   */
  readonly ifMatch?: string | readonly string[];
  /** "*": apply only when the key holds no live item (set only). */
  readonly ifNoneMatch?: "*";
}

/** The header names of the conditions, as the generated route types spell them. */
export interface ConditionHeaders {
  "If-Match"?: string;
  "If-None-Match"?: "*";
}

/** A strong entity tag as the server sends it: a quoted string of visible characters (RFC 9110 etagc). */
const STRONG_ETAG = /^"[\x21\x23-\x7e\x80-\xff]*"$/;
/** The server's limit of tags in one If-Match. */
const IF_MATCH_TAGS_MAX = 64;

/**
 * The condition headers of `o`, or undefined for an unconditional write. Checked before anything
 * is sent (a TypeError): `ifMatch` is "*" or 1 to 64 strong ETags as the client read them (a weak
 * `W/` tag never matches; a line break or any other character outside an ETag could not travel
 * in a header), `ifNoneMatch` is "*", and not both together.
 */
export function conditionHeaders(o: WriteConditions): ConditionHeaders | undefined {
  const { ifMatch, ifNoneMatch } = o;
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  if (ifNoneMatch !== undefined && ifNoneMatch !== "*") throw new TypeError('ifNoneMatch is "*"');
  if (ifMatch !== undefined && ifNoneMatch !== undefined) throw new TypeError("ifMatch or ifNoneMatch, not both");
  if (ifNoneMatch !== undefined) return { "If-None-Match": "*" };
  if (ifMatch === "*") return { "If-Match": "*" };
  const tags: readonly unknown[] = typeof ifMatch === "string" ? [ifMatch] : (ifMatch as readonly unknown[]);
  if (tags.length === 0 || tags.length > IF_MATCH_TAGS_MAX || tags.some((t) => typeof t !== "string" || !STRONG_ETAG.test(t))) {
    throw new TypeError(`invalid ifMatch: "*" or 1 to ${IF_MATCH_TAGS_MAX} quoted strong ETags as read`);
  }
  return { "If-Match": tags.join(", ") };
}

/** `{ etag }` of an answer that carries an ETag header, else nothing (spread into a result). */
export function etagField(headers: HeadersLike): { readonly etag?: string } {
  const etag = headers.get("etag");
  return etag === null ? {} : { etag };
}

/**
 * A fresh Idempotency-Key: 128 random bits from the platform's cryptographic generator, as 32 hex
 * characters. Not from the client's seeded random (`seed` option): two clients given one seed
 * would send the same keys, and one's increment would be answered with the other's result.
 */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}
