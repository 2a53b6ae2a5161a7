// The one rule for keys, wherever they arrive from (client API, batch bodies, peers).
import { badRequest } from "./errors.js";

/** Checks a key: non-empty, well-formed Unicode, at most `maxBytes` UTF-8 bytes. */
export function checkKey(key: unknown, maxBytes: number, where = "key"): string {
  if (typeof key !== "string") throw badRequest(`${where} must be a string`);
  if (key.length === 0) throw badRequest(`${where} must not be empty`);
  // Quick bounds first: a UTF-16 unit is 1 to 3 UTF-8 bytes.
  if (key.length > maxBytes || (key.length * 3 > maxBytes && Buffer.byteLength(key) > maxBytes)) {
    throw badRequest(`${where} is longer than ${maxBytes} bytes of UTF-8`, { max_key_bytes: maxBytes });
  }
  if (!key.isWellFormed()) throw badRequest(`${where} is not well-formed Unicode`);
  return key;
}

/** Characters of a key an error message quotes at most. */
export const QUOTED_KEY_CHARS_MAX = 64;

/**
 * A key as error messages quote it: JSON-quoted, and past QUOTED_KEY_CHARS_MAX characters cut,
 * with its length. A message stays short whatever the key: a batch answer carries one per failed
 * item beside the item's key, and 1,000 keys of 4,096 escaped characters made a 24.7 MB answer.
 */
export function quotedKey(key: string): string {
  if (key.length <= QUOTED_KEY_CHARS_MAX) return JSON.stringify(key);
  return `${JSON.stringify(key.slice(0, QUOTED_KEY_CHARS_MAX))}… (${key.length} characters)`;
}
