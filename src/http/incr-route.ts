// POST /v1/cache/{key}/incr: add to a counter and answer its new value. The body (optional JSON,
// at most 4 KiB) holds `delta` (default 1), `initial` (default 0) and `ttl` (a duration string,
// for a counter the call starts); `Idempotency-Key` makes a retry answer the first result;
// `If-Match` makes it a conditional write (the key's primary evaluates it, QUORUM or ALL).
import type { IncomingHttpHeaders } from "node:http";
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import { withinBound } from "../core/counter-state.js";
import { parseDurationMs } from "../core/duration.js";
import { etagOf } from "../core/etag.js";
import { badRequest } from "../core/errors.js";
import { IDEMPOTENCY_KEY_CHARS_MAX, INCR_BODY_BYTES_MAX } from "../core/limits.js";
import type { Authenticator } from "../auth/index.js";
import type { CacheService, IncrRequest } from "../cluster/index.js";
import { readJsonBody } from "./body.js";
import { writeConditionOf } from "./conditions.js";
import { authenticated, type AppState } from "./koa-middleware.js";
import { queryOne } from "./query.js";
import { decodeKeySegment, parseConsistency, splitUrl } from "./validate.js";

type Schemas = components["schemas"];

export interface IncrRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly maxKeyBytes: number;
}

const INCR_PATH = /^\/v1\/cache\/([^/]+)\/incr\/?$/i;
const MEMBERS: readonly string[] = ["delta", "initial", "ttl"];
const IDEMPOTENCY_KEY = /^[!-~]+$/;

/** An incr body as a request (without the idempotency key); anything malformed is a 400 naming it. */
export function parseIncrBody(body: unknown): Omit<IncrRequest, "idempotencyKey"> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("incr body must be a JSON object with optional delta, initial and ttl");
  const unknown = Object.keys(body).filter((k) => !MEMBERS.includes(k));
  if (unknown.length > 0) throw badRequest(`unknown incr member ${JSON.stringify(unknown[0])}; expected delta, initial or ttl`);
  const b = body as Record<string, unknown>;
  const delta = integerMember(b, "delta", 1);
  const initial = integerMember(b, "initial", 0);
  if (b.ttl === undefined) return { delta, initial, ttlMs: 0 };
  const ms = typeof b.ttl === "string" ? parseDurationMs(b.ttl) : undefined;
  if (ms === undefined || ms <= 0) throw badRequest(`ttl must be a positive duration such as 500ms, 30s, 5m, 1h or 1m30s; got ${JSON.stringify(b.ttl)}`);
  return { delta, initial, ttlMs: ms };
}

/** The Idempotency-Key header: absent, or 1–256 visible ASCII characters (else 400). */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers["idempotency-key"];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) || raw.length === 0 || raw.length > IDEMPOTENCY_KEY_CHARS_MAX || !IDEMPOTENCY_KEY.test(raw)) {
    throw badRequest(`Idempotency-Key must be one header of 1 to ${IDEMPOTENCY_KEY_CHARS_MAX} visible ASCII characters`);
  }
  return raw;
}

function integerMember(b: Record<string, unknown>, name: string, fallback: number): number {
  const v = b[name];
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !withinBound(v)) throw badRequest(`${name} must be an integer within ±(2^53 - 1); got ${JSON.stringify(v)}`);
  return v;
}

/** An absent body (no Content-Length or 0, no Transfer-Encoding) is `{}`. */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
}

export function addIncrRoute(router: Router<AppState>, deps: IncrRouteDeps): void {
  router.post("/v1/cache/:key/incr", authenticated(deps.auth, "write"), async (ctx) => {
    const writes = deps.cache.admitWrite();
    const segment = INCR_PATH.exec(splitUrl(ctx.req.url ?? "").path)?.[1] ?? "";
    const key = decodeKeySegment(segment, deps.maxKeyBytes);
    const consistency = parseConsistency(queryOne(ctx, "consistency"));
    const condition = writeConditionOf(ctx.req.headers, "incr");
    const idempotencyKey = idempotencyKeyOf(ctx.req.headers);
    const body = hasBody(ctx.req.headers) ? parseIncrBody(await readJsonBody(ctx.req, INCR_BODY_BYTES_MAX)) : parseIncrBody({});
    const r = await writes.incr(key, { ...body, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}), ...(condition !== undefined ? { condition } : {}) }, consistency);
    const out: Schemas["IncrResponse"] = { value: r.counterValue ?? 0, version: r.version, owners: r.owners.ids as string[], applied_by: r.appliedBy ?? deps.cache.nodeId };
    ctx.set("ETag", etagOf(r.version, r.origin));
    ctx.body = out;
  });
}
