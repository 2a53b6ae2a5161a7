// The expiry members of JSON bodies: `ttl`, a duration string (as PUT's `ttl` query parameter),
// and `ttl_ms`, a positive integer of milliseconds. Touch, incr and batch put items read them
// here, so each says the same thing about a malformed one.
import { MAX_DURATION_MS, parseDurationMs } from "../core/duration.js";
import { badRequest } from "../core/errors.js";

/** A `ttl` value (a member, or the query parameter) in ms; 400 unless a positive duration string. */
export function ttlMember(value: unknown): number {
  const ms = typeof value === "string" ? parseDurationMs(value) : undefined;
  if (ms === undefined || ms <= 0) throw badRequest(`ttl must be a positive duration such as 500ms, 30s, 5m, 1h or 1m30s; got ${JSON.stringify(value)}`);
  return ms;
}

/** A `ttl_ms` member; 400 unless a positive integer of at most MAX_DURATION_MS. */
export function ttlMsMember(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0 || value > MAX_DURATION_MS) {
    throw badRequest(`ttl_ms must be a positive integer of at most ${MAX_DURATION_MS}; got ${JSON.stringify(value)}`);
  }
  return value;
}
