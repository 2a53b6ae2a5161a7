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

/**
 * The condition headers of `o`, or undefined for an unconditional write. An empty list, an empty
 * ETag or an `ifNoneMatch` other than "*" is a TypeError before anything is sent; the rest (a
 * malformed or weak tag, both conditions together) is the server's to refuse (400).
 */
export function conditionHeaders(o: WriteConditions): ConditionHeaders | undefined {
  const { ifMatch, ifNoneMatch } = o;
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  if (ifNoneMatch !== undefined && ifNoneMatch !== "*") throw new TypeError(`invalid ifNoneMatch ${JSON.stringify(ifNoneMatch)}: only "*" is accepted`);
  const out: ConditionHeaders = {};
  if (ifNoneMatch !== undefined) out["If-None-Match"] = "*";
  if (ifMatch !== undefined) {
    const tags: readonly string[] = typeof ifMatch === "string" ? [ifMatch] : ifMatch;
    if (tags.length === 0 || tags.some((t) => typeof t !== "string" || t.trim() === "")) {
      throw new TypeError("invalid ifMatch: expected \"*\" or one or more ETags as the client read them");
    }
    out["If-Match"] = tags.join(", ");
  }
  return out;
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
