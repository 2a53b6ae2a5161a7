// POST /v1/cache/{key}/incr and POST /v1/cache/{key}/touch: the writes on one key that take a
// small JSON body (optional for incr), served with the hot item routes on the raw node:http
// request (item-routes.ts): a counter increment costs about what a PUT costs. incr adds to a
// counter and answers its value; touch gives a live item a new expiry. Both take If-Match (then
// a conditional write: the key's primary evaluates it, QUORUM or ALL).
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Identity } from "../auth/index.js";
import type { components } from "../../gen/openapi/client.js";
import { withinBound } from "../core/counter-state.js";
import { etagOf } from "../core/etag.js";
import { badRequest } from "../core/errors.js";
import type { Mutable } from "../core/mutable.js";
import { IDEMPOTENCY_KEY_CHARS_MAX, INCR_BODY_BYTES_MAX, TOUCH_BODY_BYTES_MAX } from "../core/limits.js";
import type { AdmittedWrites, IncrRequest, TouchExpiry, WriteResult } from "../cluster/index.js";
import type { ConsistencyLevel } from "../config/index.js";
import { readJsonBody, readOptionalJsonBody } from "./body.js";
import { writeConditionOf } from "./conditions.js";
import { ttlMember, ttlMsMember } from "./ttl-members.js";

type Schemas = components["schemas"];

/** The writes on a key named by the path after the key: `/incr` and `/touch`. */
export type KeyAction = "incr" | "touch";

/** The route templates of the key actions (http.route; the OpenAPI drift check). */
export const KEY_ACTION_ROUTES: Readonly<Record<KeyAction, string>> = Object.freeze({ incr: "/v1/cache/{key}/incr", touch: "/v1/cache/{key}/touch" });

/** The action named by what follows the key segment of an item path ("/incr", "/touch", a trailing "/" allowed), or undefined. */
export function keyActionOf(rest: string): KeyAction | undefined {
  switch (rest) {
    case "/incr":
    case "/incr/":
      return "incr";
    case "/touch":
    case "/touch/":
      return "touch";
    default:
      return undefined;
  }
}

/** A key action's answer: its JSON body and the written item's ETag. */
export interface KeyActionAnswer {
  readonly json: string;
  readonly etag: string;
}

/**
 * Runs `action` on `key` with the writes admitted when the request arrived: the condition and the
 * headers first, then the body (a 400, 413 or 415 names what is wrong with it), then the write.
 */
export async function runKeyAction(
  writes: AdmittedWrites,
  nodeId: string,
  req: IncomingMessage,
  identity: Identity,
  action: KeyAction,
  key: string,
  consistency: ConsistencyLevel | undefined,
): Promise<KeyActionAnswer> {
  const condition = writeConditionOf(req.headers, action);
  let r: WriteResult;
  if (action === "incr") {
    const idempotencyKey = idempotencyKeyOf(req.headers);
    const incr = parseIncrBody(hasBody(req.headers) ? ((await readOptionalJsonBody(req, INCR_BODY_BYTES_MAX)) ?? {}) : {});
    // Built without spreads (V8 builds a literal with spreads on a slow path).
    if (idempotencyKey !== undefined) incr.idempotencyKey = scopedIdempotencyKey(identity, idempotencyKey);
    if (condition !== undefined) incr.condition = condition;
    r = await writes.incr(key, incr, consistency);
    const out: Schemas["IncrResponse"] = { value: r.counterValue ?? 0, version: r.version, owners: r.owners.ids as string[], applied_by: r.appliedBy ?? nodeId };
    return { json: JSON.stringify(out), etag: etagOf(r.version, r.origin) };
  }
  const expiry = parseTouchBody(await readJsonBody(req, TOUCH_BODY_BYTES_MAX));
  r = await writes.touch(key, expiry, consistency, condition);
  const out: Schemas["TouchResponse"] = { key, stored: r.applied, bytes: r.bytes, node: nodeId, owners: r.owners.ids as string[] };
  if (r.expiresAtMs > 0) out.expires_at = new Date(r.expiresAtMs).toISOString();
  return { json: JSON.stringify(out), etag: etagOf(r.version, r.origin) };
}

const INCR_MEMBERS: readonly string[] = ["delta", "initial", "ttl"];
const TOUCH_MEMBERS: readonly string[] = ["ttl", "ttl_ms", "persist"];
const IDEMPOTENCY_KEY = /^[!-~]+$/;

/** The members of a JSON object body; 400 (naming `what`) for anything else or an unknown member. */
function members(body: unknown, allowed: readonly string[], what: string): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest(`${what} body must be a JSON object with ${allowed.join(", ")}`);
  const unknown = Object.keys(body).find((k) => !allowed.includes(k));
  if (unknown !== undefined) throw badRequest(`unknown ${what} member ${JSON.stringify(unknown)}; expected ${allowed.join(", ")}`);
  return body as Record<string, unknown>;
}

/** An incr body (`{}` when there is none) as a request without the idempotency key; 400 naming what is malformed. */
function parseIncrBody(body: unknown): Mutable<IncrRequest> {
  const b = members(body, INCR_MEMBERS, "incr");
  return { delta: integerMember(b, "delta", 1), initial: integerMember(b, "initial", 0), ttlMs: b.ttl === undefined ? 0 : ttlMember(b.ttl) };
}

function integerMember(b: Record<string, unknown>, name: string, fallback: number): number {
  const v = b[name];
  if (v === undefined) return fallback;
  // JSON.stringify writes an out-of-range number (1e400 parses as Infinity) as "null".
  if (typeof v !== "number" || !withinBound(v)) throw badRequest(`${name} must be an integer within ±(2^53 - 1); got ${typeof v === "number" ? String(v) : JSON.stringify(v)}`);
  return v;
}

/**
 * The new expiry a touch body asks for: exactly one of `ttl` (a duration string), `ttl_ms` (a
 * positive integer) or `persist: true`; anything else is a 400 naming the problem.
 */
function parseTouchBody(body: unknown): TouchExpiry {
  const b = members(body, TOUCH_MEMBERS, "touch");
  const given = Object.keys(b).length;
  if (given !== 1) throw badRequest(`touch body needs exactly one of ttl, ttl_ms or persist; got ${given}`);
  if (b.persist !== undefined) {
    if (b.persist !== true) throw badRequest(`persist must be true; got ${JSON.stringify(b.persist)}`);
    return { persist: true };
  }
  return { ttlMs: b.ttl_ms !== undefined ? ttlMsMember(b.ttl_ms) : ttlMember(b.ttl) };
}

/** The Idempotency-Key header: absent, or 1–256 visible ASCII characters (else 400). */
function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers["idempotency-key"];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) || raw.length === 0 || raw.length > IDEMPOTENCY_KEY_CHARS_MAX || !IDEMPOTENCY_KEY.test(raw)) {
    throw badRequest(`Idempotency-Key must be one header of 1 to ${IDEMPOTENCY_KEY_CHARS_MAX} visible ASCII characters`);
  }
  return raw;
}

/**
 * The Idempotency-Key as the primary keeps it: scoped to the caller's identity (a digest of its
 * kind, its id and the key; 43 characters, within the forward's bound), so one caller's key never
 * answers another's request with the first one's result (a review: a second identity reusing a
 * key got the first's value, and its own increment was lost). Callers without a credential share
 * the anonymous identity.
 */
export function scopedIdempotencyKey(identity: Identity, idempotencyKey: string): string {
  return createHash("sha256").update(`${identity.kind}\0${identity.id}\0${idempotencyKey}`).digest("base64url");
}

/** An absent body (no Content-Length or 0, no Transfer-Encoding) is `{}`, as is a chunked body of no bytes. */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
}
