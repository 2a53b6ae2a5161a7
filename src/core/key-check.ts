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
