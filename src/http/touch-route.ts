// POST /v1/cache/{key}/touch: a new version of a live item with a new expiry (or none), the
// value unchanged. A touch is a conditional write (the key's primary evaluates it, QUORUM or ALL,
// never promoted) and never brings back an absent, expired or deleted key (404).
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import { MAX_DURATION_MS, parseDurationMs } from "../core/duration.js";
import { etagOf } from "../core/etag.js";
import { badRequest } from "../core/errors.js";
import { TOUCH_BODY_BYTES_MAX } from "../core/limits.js";
import type { Authenticator } from "../auth/index.js";
import type { CacheService, TouchExpiry } from "../cluster/index.js";
import { readJsonBody } from "./body.js";
import { writeConditionOf } from "./conditions.js";
import { authenticated, type AppState } from "./koa-middleware.js";
import { queryOne } from "./query.js";
import { decodeKeySegment, parseConsistency, splitUrl } from "./validate.js";

type Schemas = components["schemas"];

export interface TouchRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly maxKeyBytes: number;
}

/** The raw key segment of a touch path (the router matched it already). */
const TOUCH_PATH = /^\/v1\/cache\/([^/]+)\/touch\/?$/i;
const MEMBERS: readonly string[] = ["ttl", "ttl_ms", "persist"];

/**
 * The new expiry a touch body asks for: exactly one of `ttl` (a duration string), `ttl_ms` (a
 * positive integer) or `persist: true`; anything else is a 400 naming the problem.
 */
export function parseTouchBody(body: unknown): TouchExpiry {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("touch body must be a JSON object with one of ttl, ttl_ms or persist");
  const given = Object.keys(body);
  const unknown = given.filter((k) => !MEMBERS.includes(k));
  if (unknown.length > 0) throw badRequest(`unknown touch member ${JSON.stringify(unknown[0])}; expected one of ttl, ttl_ms or persist`);
  if (given.length !== 1) throw badRequest(`touch body needs exactly one of ttl, ttl_ms or persist; got ${given.length}`);
  const b = body as Record<string, unknown>;
  if (b.persist !== undefined) {
    if (b.persist !== true) throw badRequest(`persist must be true; got ${JSON.stringify(b.persist)}`);
    return { persist: true };
  }
  if (b.ttl_ms !== undefined) {
    if (typeof b.ttl_ms !== "number" || !Number.isSafeInteger(b.ttl_ms) || b.ttl_ms <= 0 || b.ttl_ms > MAX_DURATION_MS) {
      throw badRequest(`ttl_ms must be a positive integer of at most ${MAX_DURATION_MS}; got ${JSON.stringify(b.ttl_ms)}`);
    }
    return { ttlMs: b.ttl_ms };
  }
  const ms = typeof b.ttl === "string" ? parseDurationMs(b.ttl) : undefined;
  if (ms === undefined || ms <= 0) throw badRequest(`ttl must be a positive duration such as 500ms, 30s, 5m, 1h or 1m30s; got ${JSON.stringify(b.ttl)}`);
  return { ttlMs: ms };
}

export function addTouchRoute(router: Router<AppState>, deps: TouchRouteDeps): void {
  router.post("/v1/cache/:key/touch", authenticated(deps.auth, "write"), async (ctx) => {
    const writes = deps.cache.admitWrite();
    const segment = TOUCH_PATH.exec(splitUrl(ctx.req.url ?? "").path)?.[1] ?? "";
    const key = decodeKeySegment(segment, deps.maxKeyBytes);
    const consistency = parseConsistency(queryOne(ctx, "consistency"));
    const condition = writeConditionOf(ctx.req.headers, "touch");
    const expiry = parseTouchBody(await readJsonBody(ctx.req, TOUCH_BODY_BYTES_MAX));
    const r = await writes.touch(key, expiry, consistency, condition);
    const out: Schemas["TouchResponse"] = { key, stored: r.applied, bytes: r.bytes, node: deps.cache.nodeId, owners: r.owners.ids as string[] };
    if (r.expiresAtMs > 0) out.expires_at = new Date(r.expiresAtMs).toISOString();
    ctx.set("ETag", etagOf(r.version, r.origin));
    ctx.body = out;
  });
}
