// Validation of request parts shared by the routes. Every failure is a 400 BAD_REQUEST (or 413)
// CacheError with a message that names the offending part.
import { badRequest } from "../core/errors.js";
import { parseDurationMs } from "../core/duration.js";
import { checkKey } from "../core/key-check.js";
import { LEASE_LIMITS } from "../core/limits.js";
import { ttlMember } from "./ttl-members.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { LeaseAsk } from "../cluster/index.js";

/**
 * The key of a route whose path is `prefix`, one key segment, then `suffix` (such as
 * /cluster/keys/{key}/replicas). `path` is the path the router matched (ctx.path: the path of an
 * absolute-form request target too, still percent-encoded, so that a "/" in a key (%2F) stays
 * encoded until the segment is decoded and checked). The router matches without regard to case
 * and takes one trailing slash, so both are allowed here; anything else that does not have the
 * route's shape is a 400 rather than a guess at another key.
 */
export function keyInPath(path: string, prefix: string, suffix: string, maxBytes: number): string {
  const p = path.length > prefix.length + suffix.length + 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  const segment = p.slice(prefix.length, p.length - suffix.length);
  const shaped =
    p.length > prefix.length + suffix.length &&
    p.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase() &&
    p.slice(p.length - suffix.length).toLowerCase() === suffix.toLowerCase() &&
    !segment.includes("/");
  if (!shaped) throw badRequest(`the path must be ${prefix}{key}${suffix} with the key percent-encoded as one segment`);
  return decodeKeySegment(segment, maxBytes);
}

/** Decodes a percent-encoded path segment into a key and checks it. */
export function decodeKeySegment(segment: string, maxBytes: number): string {
  let key = segment;
  if (segment.includes("%")) {
    try {
      key = decodeURIComponent(segment);
    } catch {
      throw badRequest("key is not valid percent-encoded UTF-8");
    }
  }
  return checkKey(key, maxBytes);
}

const LEVELS: readonly string[] = ["one", "quorum", "all"];

/** The `consistency` query value, or undefined when absent. */
export function parseConsistency(value: string | null | undefined): ConsistencyLevel | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.toLowerCase();
  if (!LEVELS.includes(v)) throw badRequest(`consistency must be one of one, quorum, all; got ${JSON.stringify(value)}`);
  return v as ConsistencyLevel;
}

/** The `ttl` query value in ms (0 when absent). */
export function parseTtlQuery(value: string | null | undefined): number {
  return value === null || value === undefined ? 0 : ttlMember(value);
}

/**
 * The `lease` and `wait` query values of a read: undefined when neither is given (a plain read);
 * 400 for `wait` without `lease`, a malformed duration, a lease outside 100ms–60s or a wait
 * above 10s (LEASE_LIMITS).
 */
export function parseLeaseQuery(lease: string | undefined, wait: string | undefined): LeaseAsk | undefined {
  if (lease === undefined) {
    if (wait !== undefined) throw badRequest("wait is only taken with lease (a lease read)");
    return undefined;
  }
  const { leaseMsMin, leaseMsMax, waitMsMax } = LEASE_LIMITS;
  const leaseMs = parseDurationMs(lease);
  if (leaseMs === undefined || leaseMs < leaseMsMin || leaseMs > leaseMsMax) {
    throw badRequest(`lease must be a duration from 100ms to 60s such as 500ms or 10s; got ${JSON.stringify(lease.slice(0, 80))}`, { lease_ms_min: leaseMsMin, lease_ms_max: leaseMsMax });
  }
  const waitMs = wait === undefined ? 0 : parseDurationMs(wait);
  if (waitMs === undefined || waitMs > waitMsMax) {
    throw badRequest(`wait must be a duration from 0s to 10s such as 0s, 500ms or 2s; got ${JSON.stringify((wait ?? "").slice(0, 80))}`, { wait_ms_max: waitMsMax });
  }
  return { leaseMs, waitMs };
}

const LEASE_TOKEN = /^[A-Za-z0-9._~-]+$/;

/** The X-Cache-Lease header of a PUT (a lease fill): undefined when absent; 400 unless one token of 1–64 token characters. */
export function parseLeaseToken(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > LEASE_LIMITS.tokenCharsMax || !LEASE_TOKEN.test(value)) {
    throw badRequest(`X-Cache-Lease must be one lease token of 1 to ${LEASE_LIMITS.tokenCharsMax} characters out of A-Z a-z 0-9 . _ ~ - (the X-Cache-Lease header of the lease read's answer)`);
  }
  return value;
}

/** A positive integer query value, clamped to `ceiling`; `fallback` when absent. */
export function parsePositiveInt(name: string, value: string | null | undefined, fallback: number, ceiling: number): number {
  if (value === null || value === undefined) return fallback;
  // Any run of digits is a number: values past the ceiling (however long) are clamped.
  if (!/^\d+$/.test(value) || /^0+$/.test(value)) {
    throw badRequest(`${name} must be a positive integer; got ${JSON.stringify(value.slice(0, 80))}`);
  }
  return Math.min(Number(value), ceiling);
}

/** Splits a request URL into its path and raw query string (without "?"). */
export function splitUrl(url: string): { path: string; query: string } {
  const q = url.indexOf("?");
  return q < 0 ? { path: url, query: "" } : { path: url.slice(0, q), query: url.slice(q + 1) };
}
