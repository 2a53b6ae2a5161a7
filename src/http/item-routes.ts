// The hot routes: GET, HEAD, PUT and DELETE of /v1/cache/{key}. They run as the first Koa
// middleware and write straight to the node:http response (`ctx.respond = false`): no router
// matching, no body parser, no Koa response negotiation. Measured here, that keeps about 0.8x
// of bare node:http throughput where Koa + router reaches about 0.45x. Every other route goes
// on to the router.
import type { IncomingMessage, ServerResponse } from "node:http";
import type Koa from "koa";
import type { components } from "../../gen/openapi/client.js";
import type { Clock } from "../core/clock.js";
import { CacheError, toCacheError } from "../core/errors.js";
import { requireScope, type Authenticator, type Identity } from "../auth/index.js";
import type { CacheService } from "../cluster/index.js";
import type { Logger } from "../log/index.js";
import type { LatencyWindow, OperationLatencies, RouteDurations } from "../observability/index.js";
import { readRawBody } from "./body.js";
import { itemEnvelope, itemHeaders } from "./item-view.js";
import { writeError, writeJson } from "./respond.js";
import { oneParam, parseQuery } from "./query.js";
import { decodeKeySegment, parseConsistency, parseTtlQuery } from "./validate.js";

type Schemas = components["schemas"];

export interface ItemRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  /** Where the latency of each GET, PUT and DELETE is recorded (for /stats). */
  readonly latencies: OperationLatencies;
  /** http.server.request.duration of the route /v1/cache/{key}. */
  readonly durations: RouteDurations;
}

/** Path prefix of the item routes. */
export const ITEM_PREFIX = "/v1/cache/";

/** The routes this middleware serves, for the OpenAPI drift check. */
export const ITEM_ROUTES: ReadonlyArray<{ method: string; path: string }> = Object.freeze([
  { method: "GET", path: "/v1/cache/{key}" },
  { method: "HEAD", path: "/v1/cache/{key}" },
  { method: "PUT", path: "/v1/cache/{key}" },
  { method: "DELETE", path: "/v1/cache/{key}" },
]);

/**
 * Does the request accept JSON in preference to raw bytes? Media ranges are matched
 * case-insensitively with their q values: JSON wins when its q is above 0 and at least that of
 * application/octet-stream (earlier wins a tie). No Accept header, or only wildcards: raw bytes.
 */
export function prefersJson(accept: string | undefined): boolean {
  if (accept === undefined || !/json/i.test(accept)) return false;
  let json = -1;
  let raw = -1;
  let jsonAt = Infinity;
  let rawAt = Infinity;
  accept.split(",").forEach((part, at) => {
    const [type, ...params] = part.split(";");
    const media = (type ?? "").trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (media === "application/json" && q > json) {
      json = q;
      jsonAt = at;
    } else if (media === "application/octet-stream" && q > raw) {
      raw = q;
      rawAt = at;
    }
  });
  if (!(json > 0)) return false;
  return json > raw || (json === raw && jsonAt < rawAt);
}

export function itemRoutes(deps: ItemRouteDeps): Koa.Middleware {
  const { cache, auth } = deps;
  const nodeId = cache.nodeId;

  const read = async (req: IncomingMessage, res: ServerResponse, method: string, segment: string, params: URLSearchParams | undefined): Promise<void> => {
    const key = decodeKeySegment(segment, deps.maxKeyBytes);
    const { item, owners } = await cache.get(key, parseConsistency(oneParam(params, "consistency")));
    if (item === undefined) {
      res.setHeader("X-Cache-Node", nodeId);
      res.setHeader("X-Cache-Owners", owners.header);
      throw new CacheError("NOT_FOUND", `key ${JSON.stringify(key)} not found`);
    }
    const now = deps.clock.nowMs();
    if (method === "HEAD") {
      res.writeHead(200, itemHeaders(item, owners, nodeId, now, true));
      res.end();
    } else if (prefersJson(req.headers.accept)) {
      writeJson(res, 200, JSON.stringify(itemEnvelope(item, owners, nodeId, now)));
    } else {
      res.writeHead(200, itemHeaders(item, owners, nodeId, now, false));
      res.end(item.value, "latin1");
    }
  };

  const write = async (req: IncomingMessage, res: ServerResponse, method: string, segment: string, params: URLSearchParams | undefined): Promise<void> => {
    const key = decodeKeySegment(segment, deps.maxKeyBytes);
    const consistency = parseConsistency(oneParam(params, "consistency"));
    // Admitted on arrival: a write admitted while serving completes even if the node starts
    // draining while its body is still arriving.
    const writes = cache.admitWrite();
    if (method === "PUT") {
      const ttlMs = parseTtlQuery(oneParam(params, "ttl"));
      const body = await readRawBody(req, deps.maxValueBytes, "value");
      const r = await writes.set(key, body.toString("latin1"), ttlMs, consistency);
      const out: Schemas["PutResponse"] = { key, stored: r.applied, bytes: r.bytes, node: nodeId, owners: r.owners.ids as string[] };
      writeJson(res, 200, JSON.stringify(out));
    } else {
      const r = await writes.remove(key, consistency);
      const out: Schemas["DeleteResponse"] = { key, deleted: r.applied, bytes: r.bytes, node: nodeId, owners: r.owners.ids as string[] };
      writeJson(res, 200, JSON.stringify(out));
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, method: string, segment: string, query: string): Promise<void> => {
    const authed = auth.authenticate(req);
    const identity: Identity = authed instanceof Promise ? await authed : authed;
    const params = query === "" ? undefined : parseQuery(query);
    const reading = method === "GET" || method === "HEAD";
    requireScope(identity, reading ? "read" : "write");
    await (reading ? read : write)(req, res, method, segment, params);
  };

  return async function itemRoutesMiddleware(ctx, next) {
    const req = ctx.req;
    const url = req.url ?? "";
    if (!url.startsWith(ITEM_PREFIX)) return next();
    const q = url.indexOf("?");
    const segment = q < 0 ? url.slice(ITEM_PREFIX.length) : url.slice(ITEM_PREFIX.length, q);
    const method = req.method ?? "";
    if (segment.includes("/") || (segment === "keys" && (method === "GET" || method === "HEAD"))) return next();
    if (method !== "GET" && method !== "PUT" && method !== "DELETE" && method !== "HEAD") return next();
    ctx.respond = false;
    const res = ctx.res;
    const started = deps.clock.monotonicMs();
    const window: LatencyWindow = method === "PUT" ? deps.latencies.set : method === "DELETE" ? deps.latencies.delete : deps.latencies.get;
    try {
      await handle(req, res, method, segment, q < 0 ? "" : url.slice(q + 1));
    } catch (err) {
      const e = toCacheError(err);
      if (e.status >= 500 && e.code === "INTERNAL") deps.logger.error("request failed", { method, path: ITEM_PREFIX + "{key}", error: String(e.cause ?? e) });
      writeError(res, e, { headOnly: method === "HEAD", challenge: auth.challenge });
    } finally {
      // Every client operation counts, misses and errors included.
      const ms = deps.clock.monotonicMs() - started;
      window.record(ms);
      deps.durations.record(method, res.statusCode, ms / 1000);
    }
  };
}
