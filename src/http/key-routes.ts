// Owners of a key and the cluster-wide key browser.
import type { ClientBytesBudget } from "./client-bytes-budget.js";
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import { cursorInt, decodeCursor, encodeCursor } from "../core/cursor.js";
import { badRequest } from "../core/errors.js";
import { hash32 } from "../core/hash.js";
import { compileKeyFilter, GlobError } from "../core/key-filter.js";
import { KEY_PAGE_LIMIT_DEFAULT, KEY_PAGE_LIMIT_MAX, KEY_RESULT_MAX_CEILING, KEY_RESULT_MAX_DEFAULT } from "../core/limits.js";
import type { Authenticator } from "../auth/index.js";
import type { CacheService, KeyListing } from "../cluster/index.js";
import { authenticated, type AppContext, type AppState } from "./koa-middleware.js";
import { queryOne } from "./query.js";
import { keyInPath, parsePositiveInt } from "./validate.js";

type Schemas = components["schemas"];

export interface KeyRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly maxKeyBytes: number;
  /** The bytes held for clients (SERVICE_MAX_INFLIGHT_BYTES): a page of long keys is megabytes. */
  readonly inflight: ClientBytesBudget;
}

/** A cursor is bound to the query it pages: reusing it with another q or max is a 400. */
function fingerprint(q: string, max: number): string {
  return hash32(`${q}\u0000${max}`).toString(36);
}

export function encodeBrowseCursor(offset: number, q: string, max: number): string {
  return encodeCursor({ o: offset, f: fingerprint(q, max) });
}

export function decodeBrowseCursor(text: string, q: string, max: number): number {
  const fields = decodeCursor(text);
  const offset = fields && cursorInt(fields, "o");
  if (!fields || offset === undefined || fields.f !== fingerprint(q, max)) {
    throw badRequest("invalid cursor: pass next_cursor from the previous page of the same query unchanged");
  }
  return offset;
}

export function addKeyRoutes(router: Router<AppState>, deps: KeyRouteDeps): void {
  const { cache, auth } = deps;

  router.get("/v1/owners/:key", authenticated(auth, "read"), (ctx) => {
    const key = keyInPath(ctx.path, "/v1/owners/", "", deps.maxKeyBytes);
    const out: Schemas["OwnersResponse"] = { key, owners: cache.owners(key).ids as string[], node: cache.nodeId };
    ctx.body = out;
  });

  router.get("/v1/cache/keys", authenticated(auth, "read"), async (ctx) => {
    const out: Schemas["KeyBrowserPage"] = await browseKeys(ctx, cache);
    answerHeld(ctx, deps.inflight, out);
  });
}

/**
 * A JSON answer held against the budget until its client took it: a key browser page is up to
 * 500 keys of 4096 bytes, and a key of control characters is six times longer escaped (11.7 MiB
 * a page): 40 clients that asked and never read grew RSS by 1.47 GB (an attacker review).
 */
export function answerHeld(ctx: AppContext, inflight: ClientBytesBudget, body: unknown): void {
  const json = JSON.stringify(body);
  inflight.holdAnswer(ctx.res, json.length);
  ctx.type = "application/json";
  ctx.body = json;
}

/**
 * The listing for `q`, stopped (and its slot freed) when the client's connection closes before the
 * answer is written: a listing can take seconds of CPU, and at most KEY_LISTINGS_AT_ONCE_MAX run.
 */
async function listUntilAbandoned(ctx: AppContext, cache: CacheService, q: string, max: number): Promise<KeyListing> {
  const abandoned = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) abandoned.abort();
  };
  // The client may have gone already, while the request was authenticated (a bcrypt check, OIDC).
  if (ctx.res.closed || ctx.req.socket.destroyed) abandoned.abort();
  ctx.res.once("close", onClose);
  try {
    return await cache.listKeys(q, max, abandoned.signal);
  } finally {
    ctx.res.off("close", onClose);
  }
}

/**
 * One page of the cluster-wide key browser for the query of `ctx` (q, limit, max, cursor), with
 * every check and limit of the key browser. Shared by GET /v1/cache/keys on the client listener
 * and GET /cluster/keys on the management listener, so both answer alike (cursors included).
 */
export async function browseKeys(ctx: AppContext, cache: CacheService): Promise<Schemas["KeyBrowserPage"]> {
  const q = queryOne(ctx, "q") ?? "";
  const limit = parsePositiveInt("limit", queryOne(ctx, "limit"), KEY_PAGE_LIMIT_DEFAULT, KEY_PAGE_LIMIT_MAX);
  const max = parsePositiveInt("max", queryOne(ctx, "max"), KEY_RESULT_MAX_DEFAULT, KEY_RESULT_MAX_CEILING);
  const cursor = queryOne(ctx, "cursor");
  try {
    compileKeyFilter(q);
  } catch (err) {
    if (err instanceof GlobError) throw badRequest(`malformed glob in q: ${err.message}`, { q });
    throw err;
  }
  const offset = cursor === undefined || cursor === "" ? 0 : decodeBrowseCursor(cursor, q, max);
  const listing = await listUntilAbandoned(ctx, cache, q, max);
  const end = offset + limit;
  return {
    keys: listing.keys.slice(offset, end),
    next_cursor: end < listing.keys.length ? encodeBrowseCursor(end, q, max) : "",
    total_matched: listing.keys.length,
    truncated: listing.truncated,
    node: cache.nodeId,
    partial_nodes: [...listing.partialNodes],
  };
}
