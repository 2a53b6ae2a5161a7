// The hot routes: GET, HEAD, PUT and DELETE of /v1/cache/{key}, and POST of its key actions
// /incr and /touch (key-actions.ts), served on the raw node:http request before Koa (the client
// listener's handler, client-app.ts) and written straight to the node:http response: no Koa
// context, no on-finished listeners, no compose chain, no router, no body parser. They share
// authentication, key and query validation, the error envelope and the generated client types
// with the Koa routes. A request that authenticates without I/O and reads this node's own settled
// copy is answered synchronously, without a promise; only waiting (a body, a peer, a password
// check, a lease read's miss) goes through one. Every other route goes to Koa.
import type { IncomingMessage, ServerResponse } from "node:http";
import type Koa from "koa";
import { base64Length } from "../core/byte-string.js";
import { yieldToEventLoop, type Clock, type YieldToLoop } from "../core/clock.js";
import { CacheError, toCacheError } from "../core/errors.js";
import { etagOf, type EtagCondition } from "../core/etag.js";
import { lastValue } from "../core/last-value.js";
import { requireScope, type Authenticator, type Identity } from "../auth/index.js";
import type { CacheService, LeaseAsk, ReadResult } from "../cluster/index.js";
import type { Logger } from "../log/index.js";
import type { LatencyWindow, ListenerDurations, OperationLatencies, RouteDurations } from "../observability/index.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { Owners } from "../ring/index.js";
import type { LiveItem } from "../store/index.js";
import { readRawBody } from "./body.js";
import { notModified, readConditionOf, writeConditionOf } from "./conditions.js";
import { itemEnvelope, itemFields, itemHeaders, notModifiedHeaders } from "./item-view.js";
import type { ClientBytesBudget } from "./client-bytes-budget.js";
import { envelopeBytes, envelopePieces, PIECED_VALUE_BYTES, rawPieces, writeInPieces } from "./pieced-answer.js";
import { KEY_ACTION_ROUTES, keyActionOf, runKeyAction, type KeyAction } from "./key-actions.js";
import { writeError, writeJson } from "./respond.js";
import { writeAnswerJson } from "./write-answer.js";
import { oneParam, parseQuery, type QueryParams } from "./query.js";
import { decodeKeySegment, parseConsistency, parseLeaseQuery, parseLeaseToken, parseTtlQuery } from "./validate.js";
import { quotedKey } from "../core/key-check.js";
import { checkNotCrossSite, checkSameSite } from "./cross-site.js";

export interface ItemRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  /** Where the latency of each GET, PUT and DELETE is recorded (for /stats). */
  readonly latencies: OperationLatencies;
  /** http.server.request.duration of the client listener (these routes record theirs). */
  readonly durations: Pick<ListenerDurations, "route">;
  /** Between the pieces of a large value's answer (pieced-answer.ts); default yieldToEventLoop. */
  readonly yieldToLoop?: YieldToLoop;
  /** The listener's bytes of large bodies and answers under way (SERVICE_MAX_INFLIGHT_BYTES). */
  readonly inflight: ClientBytesBudget;
}

/** Path prefix of the item routes. */
export const ITEM_PREFIX = "/v1/cache/";

/** The route template of the item routes (http.route of their request durations). */
export const ITEM_ROUTE = "/v1/cache/{key}";

/** The routes this middleware serves, for the OpenAPI drift check. */
export const ITEM_ROUTES: ReadonlyArray<{ method: string; path: string }> = Object.freeze([
  ...["GET", "HEAD", "PUT", "DELETE"].map((method) => ({ method, path: ITEM_ROUTE })),
  ...Object.values(KEY_ACTION_ROUTES).map((path) => ({ method: "POST", path })),
]);

/**
 * A lease read needs write beside read, hit or miss: its miss may give the caller the key's
 * lease, which only a PUT fills. A read-only identity could otherwise hold leases it can never
 * fill, stalling other readers of the key for up to 60 s and filling the node's lease cap.
 */
function requireLeaseScope(identity: Identity): void {
  if (identity.scopes.includes("write")) return;
  throw new CacheError("FORBIDDEN", `identity ${JSON.stringify(identity.id)} lacks the write scope a lease read needs (the caller that gets the lease fills it with a PUT); read without lease`, {
    required: ["read", "write"],
  });
}

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

/** The item routes as a request handler in front of another one. */
export interface ItemHandler {
  /**
   * Serves the request and returns true when it is one of the item routes; returns false, and
   * touches nothing, for any other request.
   */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

/** The item routes' handler (node:http requests). */
export function createItemHandler(deps: ItemRouteDeps): ItemHandler {
  return new ItemRoutes(deps);
}

/** The item routes as Koa middleware, for apps that take every request through Koa. */
export function itemRoutes(items: ItemHandler): Koa.Middleware {
  return function itemRoutesMiddleware(ctx, next) {
    if (!items.serve(ctx.req, ctx.res)) return next();
    ctx.respond = false;
    return Promise.resolve();
  };
}

/**
 * `target` as Koa reads it (its `ctx.path` and query): the path and query of an absolute-form
 * target (`http://host/v1/cache/k`, which HTTP/1.1 servers must accept), without a fragment
 * (`#`, which no client should send, and which Koa drops). The usual origin form without `#`
 * comes back as it is.
 */
export function originForm(target: string): string {
  let url = target;
  if (url.charCodeAt(0) !== 0x2f /* / */) {
    const authority = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(url);
    if (authority !== null) url = url.slice(authority[0].length) || "/";
  }
  const hash = url.indexOf("#");
  return hash < 0 ? url : url.slice(0, hash);
}

/** The path segment of an item route in `url`, or undefined when `url` is not one. */
function itemSegment(url: string, method: string, queryAt: number): string | undefined {
  if (!url.startsWith(ITEM_PREFIX)) return undefined;
  const segment = queryAt < 0 ? url.slice(ITEM_PREFIX.length) : url.slice(ITEM_PREFIX.length, queryAt);
  if (segment.includes("/") || (segment === "keys" && (method === "GET" || method === "HEAD"))) return undefined;
  if (method !== "GET" && method !== "PUT" && method !== "DELETE" && method !== "HEAD") return undefined;
  return segment;
}

/** The key segment and action of a key action's URL (POST /v1/cache/{key}/incr, /touch), or undefined. */
function keyActionTarget(url: string, queryAt: number): { segment: string; action: KeyAction } | undefined {
  if (!url.startsWith(ITEM_PREFIX)) return undefined;
  const path = queryAt < 0 ? url.slice(ITEM_PREFIX.length) : url.slice(ITEM_PREFIX.length, queryAt);
  const slash = path.indexOf("/");
  const action = slash > 0 ? keyActionOf(path.slice(slash)) : undefined;
  return action === undefined ? undefined : { segment: path.slice(0, slash), action };
}

class ItemRoutes implements ItemHandler {
  private readonly nodeId: string;
  /** The node id as JSON, for the write answers (write-answer.ts). */
  private readonly nodeJson: string;
  /** http.server.request.duration of /v1/cache/{key} and of each key action's route. */
  private readonly itemDurations: RouteDurations;
  private readonly actionDurations: Readonly<Record<KeyAction, RouteDurations>>;
  /** The query string's parameters, and a read's lease ask, for the last query seen (clients repeat theirs). */
  private readonly paramsOf = lastValue(parseQuery);
  private readonly leaseOf = lastValue((query: string) => {
    const params = this.paramsOf(query);
    const ask = parseLeaseQuery(oneParam(params, "lease"), oneParam(params, "wait"));
    return ask === undefined ? undefined : Object.freeze(ask);
  });

  private readonly pause: YieldToLoop;

  constructor(private readonly deps: ItemRouteDeps) {
    this.pause = deps.yieldToLoop ?? yieldToEventLoop;
    this.nodeId = deps.cache.nodeId;
    this.nodeJson = JSON.stringify(deps.cache.nodeId);
    this.itemDurations = deps.durations.route(ITEM_ROUTE);
    this.actionDurations = { incr: deps.durations.route(KEY_ACTION_ROUTES.incr), touch: deps.durations.route(KEY_ACTION_ROUTES.touch) };
  }

  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const url = originForm(req.url ?? "");
    const method = req.method ?? "";
    const q = url.indexOf("?");
    const segment = itemSegment(url, method, q);
    if (segment !== undefined) {
      this.run(req, res, method, segment, undefined, q < 0 ? "" : url.slice(q + 1));
      return true;
    }
    const target = method === "POST" ? keyActionTarget(url, q) : undefined;
    if (target === undefined) return false;
    this.run(req, res, method, target.segment, target.action, q < 0 ? "" : url.slice(q + 1));
    return true;
  }

  private run(req: IncomingMessage, res: ServerResponse, method: string, segment: string, action: KeyAction | undefined, query: string): void {
    const started = this.deps.clock.monotonicMs();
    let pending: void | Promise<void> = undefined;
    try {
      checkSameSite(method, req.headers);
      pending = this.authenticated(req, res, method, segment, action, query);
    } catch (err) {
      this.fail(res, method, err);
    }
    // Every client operation counts, misses and errors included; a settled one without a closure.
    if (pending === undefined) this.record(method, action, res, started);
    else {
      pending.then(
        () => this.record(method, action, res, started),
        (err: unknown) => {
          this.fail(res, method, err);
          this.record(method, action, res, started);
        },
      );
    }
  }

  /**
   * The latency window of /stats (GET, PUT, DELETE) and http.server.request.duration of one
   * answered request.
   */
  private record(method: string, action: KeyAction | undefined, res: ServerResponse, started: number): void {
    const { clock, latencies } = this.deps;
    const ms = clock.monotonicMs() - started;
    if (action !== undefined) {
      this.actionDurations[action].record(method, res.statusCode, ms / 1000);
      return;
    }
    const window: LatencyWindow = method === "PUT" ? latencies.set : method === "DELETE" ? latencies.delete : latencies.get;
    window.record(ms);
    this.itemDurations.record(method, res.statusCode, ms / 1000);
  }

  private authenticated(req: IncomingMessage, res: ServerResponse, method: string, segment: string, action: KeyAction | undefined, query: string): void | Promise<void> {
    const authed = this.deps.auth.authenticate(req);
    if (authed instanceof Promise) return authed.then((identity) => this.authorized(req, res, method, segment, action, query, identity));
    return this.authorized(req, res, method, segment, action, query, authed);
  }

  private authorized(req: IncomingMessage, res: ServerResponse, method: string, segment: string, action: KeyAction | undefined, query: string, identity: Identity): void | Promise<void> {
    const params = query === "" ? undefined : this.paramsOf(query);
    const reading = method === "GET" || method === "HEAD";
    requireScope(identity, reading ? "read" : "write");
    const key = decodeKeySegment(segment, this.deps.maxKeyBytes);
    const consistency = parseConsistency(oneParam(params, "consistency"));
    if (action !== undefined) return this.act(req, res, identity, action, key, consistency);
    if (!reading) return this.write(req, res, method, key, consistency, params);
    const unless = readConditionOf(req.headers);
    // A lease read (?lease=) reads like any other: only its miss differs (leaseMiss).
    const lease = params === undefined ? undefined : this.leaseOf(query);
    if (lease !== undefined) {
      // A lease read takes the key's lease: it changes state, so not from another site.
      checkNotCrossSite(req.headers);
      requireLeaseScope(identity);
    }
    if (method === "GET" && this.deps.inflight.heldBytes > 0) this.checkLikelyAnswer(req, key);
    const r = this.deps.cache.read(key, consistency);
    if (r instanceof Promise) return r.then((read) => this.answerRead(req, res, method, key, read, unless, lease));
    return this.answerRead(req, res, method, key, r, unless, lease);
  }

  private answerRead(req: IncomingMessage, res: ServerResponse, method: string, key: string, read: ReadResult, unless: EtagCondition | undefined, lease: LeaseAsk | undefined): void | Promise<void> {
    const { item, owners } = read;
    const nodeId = this.nodeId;
    if (item === undefined) {
      if (lease !== undefined) return this.leaseMiss(req, res, method, key, unless, lease);
      res.setHeader("X-Cache-Node", nodeId);
      res.setHeader("X-Cache-Owners", owners.header);
      throw new CacheError("NOT_FOUND", `key ${quotedKey(key)} not found`);
    }
    const etag = etagOf(item.version, item.origin);
    if (notModified(unless, etag)) {
      res.writeHead(304, notModifiedHeaders(item, owners, nodeId, etag));
      res.end();
    } else if (method === "HEAD") {
      res.writeHead(200, itemHeaders(item, owners, nodeId, this.deps.clock.nowMs(), true, etag));
      res.end();
    } else if (prefersJson(req.headers.accept)) {
      if (item.value.length > PIECED_VALUE_BYTES) return this.envelopeInPieces(res, item, owners, etag);
      const json = JSON.stringify(itemEnvelope(item, owners, nodeId, this.deps.clock.nowMs()));
      this.deps.inflight.holdAnswer(res, json.length);
      writeJson(res, 200, json, false, ["ETag", etag]);
    } else {
      this.deps.inflight.holdAnswer(res, item.value.length);
      // Head and body leave in one write: node:http joins a string body to the header block.
      res.writeHead(200, itemHeaders(item, owners, nodeId, 0, false, etag));
      if (item.value.length > PIECED_VALUE_BYTES) return writeInPieces(res, rawPieces(item.value), this.pause);
      res.end(item.value, "latin1");
    }
    return undefined;
  }

  /**
   * While large answers are held, a GET whose value this node holds checks that its answer would
   * fit before the read copies the value: 120 reads refused after their copies grew RSS by up to
   * 355 MB of garbage (test/hostile/held-bytes.test.ts). A conditional GET too (it may be a 304,
   * but a mismatched If-None-Match copied the value, 140 MB for 120 reads). A value from a peer
   * is refused after.
   */
  private checkLikelyAnswer(req: IncomingMessage, key: string): void {
    const bytes = this.deps.cache.localValueBytes(key);
    this.deps.inflight.checkAnswer(prefersJson(req.headers.accept) ? base64Length(bytes) : bytes);
  }

  /** The JSON envelope of a large value, written in pieces (pieced-answer.ts). */
  private envelopeInPieces(res: ServerResponse, item: LiveItem, owners: Owners, etag: string): Promise<void> {
    const rest = itemFields(item, owners, this.nodeId, this.deps.clock.nowMs());
    const length = envelopeBytes(item.key, item.value, rest);
    this.deps.inflight.holdAnswer(res, length);
    res.writeHead(200, ["Content-Type", "application/json; charset=utf-8", "Content-Length", String(length), "ETag", etag]);
    return writeInPieces(res, envelopePieces(item.key, item.value, rest), this.pause);
  }

  /**
   * A lease read that missed: the key's primary answers with the value that arrived (a plain
   * read answer), the key's lease (404 with X-Cache-Lease), another caller's lease (404
   * LEASE_HELD with Retry-After), or no lease (a plain 404).
   */
  private async leaseMiss(req: IncomingMessage, res: ServerResponse, method: string, key: string, unless: EtagCondition | undefined, lease: LeaseAsk): Promise<void> {
    const out = await this.deps.cache.lease(key, lease);
    if (out.item !== undefined) return this.answerRead(req, res, method, key, out, unless, undefined);
    res.setHeader("X-Cache-Node", this.nodeId);
    res.setHeader("X-Cache-Owners", out.owners.header);
    if (out.token !== undefined) {
      res.setHeader("X-Cache-Lease", out.token);
      throw new CacheError("NOT_FOUND", `key ${quotedKey(key)} not found; this request holds its lease: load the value and PUT it with the X-Cache-Lease header`);
    }
    if (out.heldMs !== undefined) {
      throw new CacheError(
        "LEASE_HELD",
        `key ${quotedKey(key)} not found; another request holds its lease and no value came within the wait`,
        { retry_after_ms: Math.ceil(out.heldMs) },
        { retryAfterS: Math.max(1, Math.ceil(out.heldMs / 1000)) },
      );
    }
    throw new CacheError("NOT_FOUND", `key ${quotedKey(key)} not found (no lease could be taken)`);
  }

  private async write(req: IncomingMessage, res: ServerResponse, method: string, key: string, consistency: ConsistencyLevel | undefined, params: QueryParams | undefined): Promise<void> {
    // Admitted on arrival: a write admitted while serving completes even if the node starts
    // draining while its body is still arriving.
    const writes = this.deps.cache.admitWrite();
    if (method === "PUT") {
      const ttlMs = parseTtlQuery(oneParam(params, "ttl"));
      const condition = writeConditionOf(req.headers, "put");
      const leaseToken = parseLeaseToken(req.headers["x-cache-lease"]);
      const body = await readRawBody(req, this.deps.maxValueBytes, "value", this.deps.inflight, res);
      const r = await writes.set(key, body.toString("latin1"), ttlMs, consistency, condition, leaseToken);
      writeJson(res, 200, writeAnswerJson(key, "stored", r.applied, r.bytes, this.nodeJson, r.owners), false, ["ETag", etagOf(r.version, r.origin)]);
    } else {
      const r = await writes.remove(key, consistency, writeConditionOf(req.headers, "delete"));
      writeJson(res, 200, writeAnswerJson(key, "deleted", r.applied, r.bytes, this.nodeJson, r.owners));
    }
  }

  /** POST of a key action: admitted on arrival like every write, then key-actions.ts. */
  private async act(req: IncomingMessage, res: ServerResponse, identity: Identity, action: KeyAction, key: string, consistency: ConsistencyLevel | undefined): Promise<void> {
    const writes = this.deps.cache.admitWrite();
    const answer = await runKeyAction(writes, this.nodeId, req, identity, action, key, consistency);
    writeJson(res, 200, answer.json, false, ["ETag", answer.etag]);
  }

  private fail(res: ServerResponse, method: string, err: unknown): void {
    const e = toCacheError(err);
    if (e.status >= 500 && e.code === "INTERNAL") this.deps.logger.error("request failed", { method, path: ITEM_PREFIX + "{key}", error: String(e.cause ?? e) });
    writeError(res, e, { headOnly: method === "HEAD", challenge: this.deps.auth.challenge });
  }
}
