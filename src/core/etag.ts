// Entity tags of items and the If-Match / If-None-Match header syntax (RFC 9110, 8.8.3 and
// 13.1.1-13.1.2). An item's ETag is strong and opaque to clients: its version in base 36 and the
// origin node id, quoted. Comparison is always strong: a weak tag (W/"...") never matches. Pure.
import { badRequest } from "./errors.js";
import { ETAG_LIMITS } from "./limits.js";

/** The strong ETag of the item version `version` stamped by `origin`, quotes included. */
export function etagOf(version: number, origin: string): string {
  return `"${base36(version)}-${origin}"`;
}

const DIGITS_36 = "0123456789abcdefghijklmnopqrstuvwxyz";
/** 36^5: below it, a number's base-36 digits come from 32-bit integer division. */
const LOW_PART = 60_466_176;

/**
 * `n.toString(36)`, the same text. Every GET and write answer carries an ETag, and V8's
 * toString(radix) takes its general floating-point path for a version (about 2^50), twice the
 * cost of cutting the integer in two parts of at most 5 and 6 digits.
 */
export function base36(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) return n.toString(36);
  if (n < LOW_PART) return digits36(n, "");
  const high = Math.floor(n / LOW_PART);
  let low = n - high * LOW_PART;
  let text = "";
  for (let i = 0; i < 5; i++) {
    const q = (low / 36) | 0;
    text = DIGITS_36.charAt(low - q * 36) + text;
    low = q;
  }
  return digits36(high, text);
}

/** The base-36 digits of `n` (below 2^31) before `after`. */
function digits36(n: number, after: string): string {
  let text = after;
  let rest = n;
  do {
    const q = (rest / 36) | 0;
    text = DIGITS_36.charAt(rest - q * 36) + text;
    rest = q;
  } while (rest > 0);
  return text;
}

/** A parsed If-Match / If-None-Match: "*" or the entity tags exactly as sent (W/ and quotes kept). */
export type EtagCondition = "*" | readonly string[];

/** etagc: %x21 / %x23-7E / obs-text (%x80-FF). */
function isEtagChar(code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x7e) || (code >= 0x80 && code <= 0xff);
}

/**
 * Parses an If-Match or If-None-Match header value (`name` names it in the 400). Accepts `*` or
 * a comma-separated list of entity tags (empty list elements are allowed, as for every list
 * header); anything else, an empty value, more than ETAG_LIMITS.tagsMax tags or a value longer
 * than ETAG_LIMITS.headerCharsMax is a 400 BAD_REQUEST.
 */
export function parseEtagCondition(value: string, name: string): EtagCondition {
  if (value.length > ETAG_LIMITS.headerCharsMax) {
    throw badRequest(`${name} is longer than ${ETAG_LIMITS.headerCharsMax} characters`, { header: name });
  }
  const trimmed = value.trim();
  if (trimmed === "*") return "*";
  const tags: string[] = [];
  let i = 0;
  const n = value.length;
  const fail = (why: string) => badRequest(`malformed ${name}: ${why}; expected * or a list of entity tags such as "abc" or W/"abc"`, { header: name });
  while (i < n) {
    const c = value.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x2c) {
      i++;
      continue;
    }
    const start = i;
    if (value.startsWith("W/", i)) i += 2;
    if (value.charCodeAt(i) !== 0x22) throw fail(`unexpected ${JSON.stringify(value.slice(i, i + 8))} at ${i}`);
    i++;
    while (i < n && isEtagChar(value.charCodeAt(i))) i++;
    if (value.charCodeAt(i) !== 0x22) throw fail(`unterminated entity tag at ${start}`);
    i++;
    tags.push(value.slice(start, i));
    if (tags.length > ETAG_LIMITS.tagsMax) throw badRequest(`${name} lists more than ${ETAG_LIMITS.tagsMax} entity tags`, { header: name, max_tags: ETAG_LIMITS.tagsMax });
    // After a tag: optional whitespace, then a comma or the end.
    while (i < n && (value.charCodeAt(i) === 0x20 || value.charCodeAt(i) === 0x09)) i++;
    if (i < n && value.charCodeAt(i) !== 0x2c) throw fail(`expected a comma at ${i}`);
  }
  if (tags.length === 0) throw fail("no entity tag");
  return tags;
}

/**
 * Does `condition` hold for the current item's strong ETag (`current`, undefined when there is
 * no live item)? `*` matches any live item; a list matches when it holds `current` exactly (a
 * weak tag never equals a strong one).
 */
export function etagMatches(condition: EtagCondition, current: string | undefined): boolean {
  if (current === undefined) return false;
  return condition === "*" || condition.includes(current);
}
