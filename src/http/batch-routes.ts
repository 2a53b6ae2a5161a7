// Batch put, get and delete: one result per requested item, in request order. A failing item
// is reported in its own result (status, error, code) and never fails the call.
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import { base64DecodedLength, fromBase64, fromUtf8, toBase64 } from "../core/byte-string.js";
import { MAX_DURATION_MS } from "../core/duration.js";
import type { Clock } from "../core/clock.js";
import { CacheError, badRequest, toCacheError } from "../core/errors.js";
import type { Authenticator } from "../auth/index.js";
import type { CacheService, ReadResult, SetItem, WriteResult } from "../cluster/index.js";
import { readJsonBody } from "./body.js";
import { authenticated, type AppContext, type AppState } from "./koa-middleware.js";
import { envelopeOf } from "./respond.js";
import { queryOne } from "./query.js";
import { checkKey } from "../core/key-check.js";
import { parseConsistency } from "./validate.js";

type Schemas = components["schemas"];

export interface BatchRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly clock: Clock;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  readonly maxBodyBytes: number;
  readonly maxBatchItems: number;
}

export function addBatchRoutes(router: Router<AppState>, deps: BatchRouteDeps): void {
  const { cache, auth } = deps;

  /** The array field of the body, checked against the batch limit. */
  const listOf = async (ctx: AppContext, field: "items" | "keys"): Promise<unknown[]> => {
    const body = await readJsonBody(ctx.req, deps.maxBodyBytes);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest(`request body must be an object with a "${field}" array`);
    const list = (body as Record<string, unknown>)[field];
    if (!Array.isArray(list)) throw badRequest(`"${field}" must be an array`);
    if (list.length > deps.maxBatchItems) {
      throw badRequest(`at most ${deps.maxBatchItems} ${field} per batch call; got ${list.length}`, { max_items: deps.maxBatchItems });
    }
    return list;
  };

  const failure = (key: string, err: CacheError) => ({
    key,
    status: err.status,
    owners: keyOwners(key),
    node: cache.nodeId,
    ...envelopeOf(err),
    code: err.code,
  });

  const keyOwners = (key: string): string[] => {
    try {
      checkKey(key, deps.maxKeyBytes);
      return cache.owners(key).ids as string[];
    } catch {
      return [];
    }
  };

  router.post("/v1/cache/batch/put", authenticated(auth, "write"), async (ctx) => {
    const admitted = !cache.draining;
    const consistency = parseConsistency(queryOne(ctx, "consistency"));
    const list = await listOf(ctx, "items");
    const parsed = list.map((raw) => parsePutItem(raw, deps));
    const valid = parsed.filter((p): p is SetItem => !(p instanceof BatchItemError));
    const written = await cache.setMany(valid, consistency, admitted);
    let next = 0;
    const results: Schemas["BatchPutResult"][] = parsed.map((p) => {
      if (p instanceof BatchItemError) return { ...failure(p.key, p.error), stored: false };
      const r = written[next++] as WriteResult | CacheError;
      if (r instanceof CacheError) return { ...failure(p.key, r), stored: false };
      return { key: r.key, status: 200, stored: r.applied, bytes: r.bytes, node: cache.nodeId, owners: r.owners.ids as string[] };
    });
    const out: Schemas["BatchPutResponse"] = { results };
    ctx.body = out;
  });

  router.post("/v1/cache/batch/get", authenticated(auth, "read"), async (ctx) => {
    const consistency = parseConsistency(queryOne(ctx, "consistency"));
    const list = await listOf(ctx, "keys");
    const parsed = list.map((k) => parseKey(k, deps.maxKeyBytes));
    const valid = parsed.filter((p): p is string => typeof p === "string");
    const read = await cache.getMany(valid, consistency);
    let next = 0;
    const now = deps.clock.nowMs();
    // The answer carries at most maxBodyBytes of values: items past that budget are reported
    // 413 in place (ask for them in another call) instead of building an unbounded response.
    let valueBytes = 0;
    const results: Schemas["BatchGetResult"][] = parsed.map((p) => {
      if (p instanceof BatchItemError) return { ...failure(p.key, p.error), found: false };
      const r = read[next++] as ReadResult | CacheError;
      if (r instanceof CacheError) return { ...failure(p, r), found: false };
      if (r.item === undefined) {
        return { ...failure(p, new CacheError("NOT_FOUND", `key ${JSON.stringify(p)} not found`)), owners: r.owners.ids as string[], found: false };
      }
      const it = r.item;
      valueBytes += it.value.length;
      if (valueBytes > deps.maxBodyBytes && valueBytes !== it.value.length) {
        const over = new CacheError("PAYLOAD_TOO_LARGE", `the answer reached its limit of ${deps.maxBodyBytes} value bytes; read this key in another call`, {
          limit_bytes: deps.maxBodyBytes,
        });
        return { ...failure(p, over), owners: r.owners.ids as string[], found: false };
      }
      const found: Schemas["BatchGetResult"] = {
        key: p,
        status: 200,
        found: true,
        value: toBase64(it.value),
        value_encoding: "base64",
        version: it.version,
        origin: it.origin,
        last_updated: new Date(it.lastUpdatedMs).toISOString(),
        node: cache.nodeId,
        owners: r.owners.ids as string[],
      };
      if (it.expiresAtMs > 0) {
        found.ttl_ms = Math.max(0, it.expiresAtMs - now);
        found.expires_at = new Date(it.expiresAtMs).toISOString();
      }
      return found;
    });
    const out: Schemas["BatchGetResponse"] = { results };
    ctx.body = out;
  });

  router.post("/v1/cache/batch/delete", authenticated(auth, "write"), async (ctx) => {
    const admitted = !cache.draining;
    const consistency = parseConsistency(queryOne(ctx, "consistency"));
    const list = await listOf(ctx, "keys");
    const parsed = list.map((k) => parseKey(k, deps.maxKeyBytes));
    const valid = parsed.filter((p): p is string => typeof p === "string");
    const removed = await cache.removeMany(valid, consistency, admitted);
    let next = 0;
    const results: Schemas["BatchDeleteResult"][] = parsed.map((p) => {
      if (p instanceof BatchItemError) return { ...failure(p.key, p.error), deleted: false };
      const r = removed[next++] as WriteResult | CacheError;
      if (r instanceof CacheError) return { ...failure(p, r), deleted: false };
      return { key: r.key, status: 200, deleted: r.applied, bytes: r.bytes, node: cache.nodeId, owners: r.owners.ids as string[] };
    });
    const out: Schemas["BatchDeleteResponse"] = { results };
    ctx.body = out;
  });
}

/** A batch item that failed validation, reported in its place. */
class BatchItemError {
  constructor(readonly key: string, readonly error: CacheError) {}
}

function parseKey(raw: unknown, maxKeyBytes: number): string | BatchItemError {
  try {
    return checkKey(raw, maxKeyBytes);
  } catch (err) {
    return new BatchItemError(typeof raw === "string" ? raw : "", toCacheError(err));
  }
}

function parsePutItem(raw: unknown, deps: BatchRouteDeps): SetItem | BatchItemError {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return new BatchItemError("", badRequest("item must be an object with key and value"));
  }
  const item = raw as Record<string, unknown>;
  const key = parseKey(item.key, deps.maxKeyBytes);
  if (key instanceof BatchItemError) return key;
  const fail = (err: CacheError) => new BatchItemError(key, err);
  if (typeof item.value !== "string") return fail(badRequest("value must be a string"));
  if (item.value_encoding !== undefined && item.value_encoding !== "base64") {
    return fail(badRequest(`value_encoding must be "base64" or omitted; got ${JSON.stringify(item.value_encoding)}`));
  }
  let ttlMs = 0;
  if (item.ttl_ms !== undefined) {
    if (typeof item.ttl_ms !== "number" || !Number.isSafeInteger(item.ttl_ms) || item.ttl_ms <= 0 || item.ttl_ms > MAX_DURATION_MS) {
      return fail(badRequest(`ttl_ms must be a positive integer of at most ${MAX_DURATION_MS}; got ${JSON.stringify(item.ttl_ms)}`));
    }
    ttlMs = item.ttl_ms;
  }
  // The decoded size is known before anything is decoded: an oversized value is refused without
  // allocating its bytes.
  const base64 = item.value_encoding === "base64";
  const size = base64 ? base64DecodedLength(item.value) : Buffer.byteLength(item.value, "utf8");
  if (size === undefined) return fail(badRequest("value is not valid base64"));
  if (size > deps.maxValueBytes) {
    return fail(new CacheError("PAYLOAD_TOO_LARGE", `value is larger than ${deps.maxValueBytes} bytes`, { limit_bytes: deps.maxValueBytes }));
  }
  const value = base64 ? fromBase64(item.value) : fromUtf8(item.value);
  return { key, value, ttlMs };
}
