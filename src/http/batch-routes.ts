// Batch put, get and delete: one result per requested item, in request order. A failing item
// is reported in its own result (status, error, code) and never fails the call.
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import { base64DecodedLength, base64Length, fromBase64, fromUtf8 } from "../core/byte-string.js";
import type { Clock, YieldToLoop } from "../core/clock.js";
import { CacheError, badRequest, toCacheError } from "../core/errors.js";
import { BATCH_BODY_LIMITS } from "../core/limits.js";
import type { Authenticator, RateLimiter } from "../auth/index.js";
import type { AdmittedWrites, CacheService, RemoveItem, SetItem, WriteResult } from "../cluster/index.js";
import { itemConditionOf } from "./conditions.js";
import { BATCH_READ_PACING, readWithinBudget } from "./batch-read.js";
import { startInSlices } from "./batch-pacing.js";
import { readJsonBody } from "./body.js";
import { authenticated, type AppContext, type AppState } from "./koa-middleware.js";
import { itemFields } from "./item-view.js";
import type { ClientBytesBudget } from "./client-bytes-budget.js";
import { answerBytesEstimate, answerObject, answerStream, STREAMED_ANSWER_BYTES, type AnswerResult } from "./batch-get-answer.js";
import { envelopeOf } from "./respond.js";
import { queryOne } from "./query.js";
import { checkKey, quotedKey } from "../core/key-check.js";
import { parseConsistency } from "./validate.js";
import { ttlMember, ttlMsMember } from "./ttl-members.js";

type Schemas = components["schemas"];

export interface BatchRouteDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly clock: Clock;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  readonly maxBodyBytes: number;
  readonly maxBatchItems: number;
  /** Lets queued I/O run between the chunks of a streamed answer. */
  readonly yieldToLoop: YieldToLoop;
  /** The rate limiter: a batch costs ceil(items / 10); authentication already took 1. */
  readonly rateLimiter?: Pick<RateLimiter, "chargeMore">;
  /** The listener's bytes of large bodies and answers under way (SERVICE_MAX_INFLIGHT_BYTES). */
  readonly inflight: ClientBytesBudget;
}

export function addBatchRoutes(router: Router<AppState>, deps: BatchRouteDeps): void {
  router.post("/v1/cache/batch/put", authenticated(deps.auth, "write"), (ctx) => batchPut(ctx, deps));
  router.post("/v1/cache/batch/get", authenticated(deps.auth, "read"), (ctx) => batchGet(ctx, deps));
  router.post("/v1/cache/batch/delete", authenticated(deps.auth, "write"), (ctx) => batchDelete(ctx, deps));
}

/** What a batch of `items` items or keys costs in rate-limit tokens: ceil(items / 10), at least 1. */
export function batchCost(items: number): number {
  return Math.max(1, Math.ceil(items / 10));
}

/**
 * The array field of the body, checked against the batch limit. Any other member is 400: a
 * `consistency` there would otherwise look taken while the query's (or the default) applied.
 */
async function listOf(ctx: AppContext, op: "put" | "get" | "delete", deps: BatchRouteDeps): Promise<unknown[]> {
  const field = op === "put" ? "items" : "keys";
  // Counted while the bytes arrive: a body past the item limit (or nested too deep, or holding
  // far more JSON than a full batch) is refused before it is parsed.
  const body = await readJsonBody(ctx.req, deps.maxBodyBytes, {
    field,
    itemsMax: deps.maxBatchItems,
    depthMax: BATCH_BODY_LIMITS.depthMax,
    structureMax: deps.maxBatchItems * BATCH_BODY_LIMITS.structurePerItem + BATCH_BODY_LIMITS.structureSlack,
  }, deps.inflight, ctx.res);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest(`request body must be an object with a "${field}" array`);
  const list = (body as Record<string, unknown>)[field];
  if (!Array.isArray(list)) throw badRequest(`"${field}" must be an array`);
  const extra = Object.keys(body).find((k) => k !== field);
  if (extra !== undefined) throw badRequest(`unknown member ${JSON.stringify(extra)} in the batch ${op} body; it takes only "${field}" (consistency is a query parameter)`);
  if (list.length > deps.maxBatchItems) {
    throw badRequest(`at most ${deps.maxBatchItems} ${field} per batch call; got ${list.length}`, { max_items: deps.maxBatchItems });
  }
  // The rest of the batch's cost, known now that the body is read (it may leave the bucket in debt).
  const identity = ctx.state.identity;
  if (identity && deps.rateLimiter) deps.rateLimiter.chargeMore(identity, ctx.req.socket.remoteAddress, batchCost(list.length) - 1);
  return list;
}

/**
 * A failed item's result: its status, the envelope fields, and the key's owners when the key is
 * valid (`known`: owners a read already looked up, so the key is not hashed again).
 */
function failure(key: string, err: CacheError, deps: BatchRouteDeps, known?: string[]) {
  let owners: string[] = known ?? [];
  if (known === undefined) {
    try {
      checkKey(key, deps.maxKeyBytes);
      owners = deps.cache.owners(key).ids as string[];
    } catch {
      // An invalid key has no owners.
    }
  }
  return { key, status: err.status, owners, node: deps.cache.nodeId, ...envelopeOf(err), code: err.code };
}

/**
 * The writes of a batch, admitted when the request arrives; once the node drains, the DRAINING
 * error instead, which every item then reports in its own result.
 */
function admit(cache: CacheService): AdmittedWrites | CacheError {
  try {
    return cache.admitWrite();
  } catch (err) {
    return toCacheError(err);
  }
}

async function batchPut(ctx: AppContext, deps: BatchRouteDeps): Promise<void> {
  const writes = admit(deps.cache);
  const consistency = parseConsistency(queryOne(ctx, "consistency"));
  const parsed = (await listOf(ctx, "put", deps)).map((raw) => parsePutItem(raw, deps));
  const valid = parsed.filter((p): p is SetItem => !(p instanceof BatchItemError));
  const written = writes instanceof CacheError ? valid.map(() => writes) : await writes.track(startInSlices(valid, putWeight, (slice) => writes.setMany(slice, consistency), deps.yieldToLoop));
  let next = 0;
  const results: Schemas["BatchPutResult"][] = parsed.map((p) => {
    if (p instanceof BatchItemError) return { ...failure(p.key, p.error, deps), stored: false };
    const r = written[next++] as WriteResult | CacheError;
    if (r instanceof CacheError) return { ...failure(p.key, r, deps), stored: false };
    return { key: r.key, status: 200, stored: r.applied, bytes: r.bytes, node: deps.cache.nodeId, owners: r.owners.ids as string[] };
  });
  answerResults(ctx, results, deps, (): Schemas["BatchPutResponse"] => ({ results }));
}

async function batchGet(ctx: AppContext, deps: BatchRouteDeps): Promise<void> {
  const consistency = parseConsistency(queryOne(ctx, "consistency"));
  const parsed = (await listOf(ctx, "get", deps)).map((k) => parseKey(k, deps.maxKeyBytes));
  const valid = parsed.filter((p): p is string => typeof p === "string");
  if (deps.inflight.heldBytes > 0) deps.inflight.checkAnswer(likelyAnswerBytes(valid, deps));
  // Each distinct key is read once, and reading stops once the values read pass the budget.
  const read = await readWithinBudget(valid, (key) => deps.cache.get(key, consistency), { budgetBytes: deps.maxBodyBytes, ...BATCH_READ_PACING, yieldToLoop: deps.yieldToLoop });
  const now = deps.clock.nowMs();
  // The answer carries at most maxBodyBytes of values: items past that budget are reported
  // 413 in place (ask for them in another call) instead of building an unbounded response.
  const overBudget = new CacheError("PAYLOAD_TOO_LARGE", `the answer reached its limit of ${deps.maxBodyBytes} value bytes; read this key in another call`, {
    limit_bytes: deps.maxBodyBytes,
  });
  let valueBytes = 0;
  const results: AnswerResult[] = parsed.map((p) => {
    if (p instanceof BatchItemError) return { ...failure(p.key, p.error, deps), found: false };
    const r = read.get(p);
    if (r === undefined) return { ...failure(p, overBudget, deps), found: false };
    if (r instanceof CacheError) return { ...failure(p, r, deps), found: false };
    const owners = r.owners.ids as string[];
    if (r.item === undefined) return { ...failure(p, new CacheError("NOT_FOUND", `key ${quotedKey(p)} not found`), deps, owners), found: false };
    valueBytes += r.item.value.length;
    if (valueBytes > deps.maxBodyBytes && valueBytes !== r.item.value.length) return { ...failure(p, overBudget, deps, owners), found: false };
    return { key: p, value: r.item.value, rest: { ...itemFields(r.item, r.owners, deps.cache.nodeId, now), status: 200, found: true } };
  });
  // A large answer is streamed (values encoded piece by piece as the socket takes them).
  answerResults(ctx, results, deps, () => answerObject(results));
}

/**
 * While answers are held, the answer's likely size from this node's own copies (values as base64,
 * at most the answer's value limit), checked before the values are copied out of the store: 120
 * batch gets refused after their reads left 150 MB of copies for the next collection.
 */
function likelyAnswerBytes(keys: readonly string[], deps: BatchRouteDeps): number {
  let values = 0;
  let keyChars = 0;
  for (const key of keys) {
    values += deps.cache.localValueBytes(key);
    keyChars += key.length;
  }
  return base64Length(Math.min(values, deps.maxBodyBytes)) + keyChars;
}

async function batchDelete(ctx: AppContext, deps: BatchRouteDeps): Promise<void> {
  const writes = admit(deps.cache);
  const consistency = parseConsistency(queryOne(ctx, "consistency"));
  const parsed = (await listOf(ctx, "delete", deps)).map((k) => parseDeleteEntry(k, deps.maxKeyBytes));
  const valid = parsed.filter((p): p is string | RemoveItem => !(p instanceof BatchItemError));
  const removed = writes instanceof CacheError ? valid.map(() => writes) : await writes.track(startInSlices(valid, deleteWeight, (slice) => writes.removeMany(slice, consistency), deps.yieldToLoop));
  let next = 0;
  const results: Schemas["BatchDeleteResult"][] = parsed.map((p) => {
    if (p instanceof BatchItemError) return { ...failure(p.key, p.error, deps), deleted: false };
    const r = removed[next++] as WriteResult | CacheError;
    if (r instanceof CacheError) return { ...failure(typeof p === "string" ? p : p.key, r, deps), deleted: false };
    return { key: r.key, status: 200, deleted: r.applied, bytes: r.bytes, node: deps.cache.nodeId, owners: r.owners.ids as string[] };
  });
  answerResults(ctx, results, deps, (): Schemas["BatchDeleteResponse"] => ({ results }));
}

/**
 * The answer: `small()`, serialized by the error middleware, or for a large one (keys and values
 * counted: batch-get-answer.ts) a stream written in pieces a turn apart.
 */
function answerResults(ctx: AppContext, results: ReadonlyArray<{ readonly key: string }>, deps: BatchRouteDeps, small: () => unknown): void {
  const bytes = answerBytesEstimate(results);
  deps.inflight.holdAnswer(ctx.res, bytes);
  if (bytes > STREAMED_ANSWER_BYTES) {
    ctx.body = answerStream(results, deps.yieldToLoop);
    ctx.type = "application/json";
  } else {
    ctx.body = small();
  }
}

const putWeight = (item: SetItem): number => item.key.length + item.value.length / 4;
const deleteWeight = (item: string | RemoveItem): number => (typeof item === "string" ? item : item.key).length;

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

/**
 * A batch delete entry: a key, or `{key, if_match}` (a conditional delete). An object entry
 * exists only to carry the condition: without `if_match`, or with another member, it is 400.
 */
function parseDeleteEntry(raw: unknown, maxKeyBytes: number): string | RemoveItem | BatchItemError {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return parseKey(raw, maxKeyBytes);
  const entry = raw as Record<string, unknown>;
  const key = parseKey(entry.key, maxKeyBytes);
  if (key instanceof BatchItemError) return key;
  const extra = Object.keys(entry).find((k) => k !== "key" && k !== "if_match");
  if (extra !== undefined) return new BatchItemError(key, badRequest(`unknown member ${JSON.stringify(extra)} in a batch delete entry; expected key and if_match`));
  if (entry.if_match === undefined) return new BatchItemError(key, badRequest("a batch delete entry that is an object needs if_match; send an unconditional key as a string"));
  try {
    const condition = itemConditionOf(entry, "delete");
    return condition === undefined ? key : { key, condition };
  } catch (err) {
    return new BatchItemError(key, toCacheError(err));
  }
}

/** The members a batch put item may have; any other fails the item (a misspelt if_match would have written unconditionally). */
const PUT_ITEM_MEMBERS: ReadonlySet<string> = new Set(["key", "value", "value_encoding", "ttl", "ttl_ms", "if_match", "if_none_match"]);

/** An item's time to live from `ttl` or `ttl_ms` (0: none); 400 for both, or a malformed one. */
function itemTtlMs(item: Record<string, unknown>): number {
  if (item.ttl_ms === undefined) return item.ttl === undefined ? 0 : ttlMember(item.ttl);
  if (item.ttl !== undefined) throw badRequest("a batch put item takes ttl or ttl_ms, not both");
  return ttlMsMember(item.ttl_ms);
}

function parsePutItem(raw: unknown, deps: BatchRouteDeps): SetItem | BatchItemError {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return new BatchItemError("", badRequest("item must be an object with key and value"));
  }
  const item = raw as Record<string, unknown>;
  const key = parseKey(item.key, deps.maxKeyBytes);
  if (key instanceof BatchItemError) return key;
  const fail = (err: CacheError) => new BatchItemError(key, err);
  const unknown = Object.keys(item).find((k) => !PUT_ITEM_MEMBERS.has(k));
  if (unknown !== undefined) return fail(badRequest(`unknown member ${JSON.stringify(unknown)} in a batch put item; expected ${[...PUT_ITEM_MEMBERS].join(", ")}`));
  if (typeof item.value !== "string") return fail(badRequest("value must be a string"));
  // A lone surrogate has no UTF-8 form: stored, it silently became U+FFFD.
  if (!item.value.isWellFormed()) return fail(badRequest("value is not well-formed Unicode (a lone surrogate); send binary values with value_encoding base64"));
  if (item.value_encoding !== undefined && item.value_encoding !== "base64") {
    return fail(badRequest(`value_encoding must be "base64" or omitted; got ${JSON.stringify(item.value_encoding)}`));
  }
  // The decoded size is known before anything is decoded: an oversized value is refused without
  // allocating its bytes.
  const base64 = item.value_encoding === "base64";
  const size = base64 ? base64DecodedLength(item.value) : Buffer.byteLength(item.value, "utf8");
  if (size === undefined) return fail(badRequest("value is not valid base64"));
  if (size > deps.maxValueBytes) {
    return fail(new CacheError("PAYLOAD_TOO_LARGE", `value is larger than ${deps.maxValueBytes} bytes`, { limit_bytes: deps.maxValueBytes }));
  }
  let condition;
  let ttlMs;
  try {
    ttlMs = itemTtlMs(item);
    condition = itemConditionOf(item, "put");
  } catch (err) {
    return fail(toCacheError(err));
  }
  const value = base64 ? fromBase64(item.value) : fromUtf8(item.value);
  return condition === undefined ? { key, value, ttlMs } : { key, value, ttlMs, condition };
}
