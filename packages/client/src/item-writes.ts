// The single-key writes: set (PUT, on the byte route), delete, incr and touch (typed routes). A
// conditional write (If-Match / If-None-Match) moves to another node only when it never left
// (`once`): replayed after an attempt that applied it, it would answer 412. An increment carries
// an Idempotency-Key (a fresh one per call unless the caller gives one, or none), so a failover
// replay after an attempt that may have reached a node is answered with the first attempt's
// result instead of adding again; without a key it too goes `once`.
import type { Client } from "openapi-fetch";
import { isNumber, isString, isStrings, optional, shaped } from "./answer-checks.js";
import { PUT_SHAPE, DELETE_SHAPE } from "./answer-shapes.js";
import type { ByteRoutes } from "./byte-routes.js";
import { conditionHeaders, etagField, newIdempotencyKey } from "./conditions.js";
import { ttlToMs, type Ttl } from "./duration.js";
import type { components, paths } from "./gen/client.js";
import type { BufferedResponse } from "./failover-transport.js";
import type { DeleteOptions, SetOptions, WriteOptions } from "./call-options.js";
import { buffered } from "./openapi-bridge.js";
import { answerError, dataOf, valueBody, type CacheValue, type DeleteResult, type PutResult } from "./values.js";

/** The options every update takes. */
interface UpdateOptions extends WriteOptions {
  /** Apply only when the item's current ETag is one of these (or, with "*", when it exists). */
  readonly ifMatch?: string | readonly string[];
}

export interface IncrOptions extends UpdateOptions {
  /** The amount to add, a safe integer (default 1; negative or 0 allowed). */
  readonly delta?: number;
  /** Where a counter this call starts begins (default 0). */
  readonly initial?: number;
  /** Time to live of a counter this call starts; later increments keep its expiry. */
  readonly ttl?: Ttl;
  /**
   * The Idempotency-Key (1–256 visible ASCII characters). Default: a fresh random key per call,
   * so a replay on another node is not added again. `false` sends none: the call then moves to
   * another node only when it never left, since a replay would add again.
   */
  readonly idempotencyKey?: string | false;
}

export interface TouchOptions extends UpdateOptions {
  /** The new time to live, counted from the touch; exactly one of `ttl` and `persist`. */
  readonly ttl?: Ttl;
  /** Remove the expiry. */
  readonly persist?: true;
}

/** `replayed`: an earlier attempt may have reached a node before this answer came from a replay. */
export type IncrResult = components["schemas"]["IncrResponse"] & { readonly etag?: string; readonly replayed?: true };
export type TouchResult = components["schemas"]["TouchResponse"] & { readonly etag?: string; readonly replayed?: true };

const INCR_SHAPE = Object.freeze({ value: isNumber, version: isNumber, owners: isStrings, applied_by: isString });
const TOUCH_SHAPE = Object.freeze({ key: isString, bytes: isNumber, node: isString, owners: isStrings, expires_at: optional(isString) });

/** The routes of one kind of request: those that may be replayed on another node, or `once`. */
export interface WriteRoutes {
  readonly api: Client<paths>;
  readonly bytes: ByteRoutes;
}

export class ItemWrites {
  constructor(
    /** Requests that may be replayed on another node. */
    private readonly replayable: WriteRoutes,
    /** Requests that move to another node only when they never left. */
    private readonly once: WriteRoutes,
  ) {}

  async set(key: string, value: CacheValue, o: SetOptions): Promise<PutResult> {
    const body = await valueBody(value);
    const ttl = o.ttl === undefined ? undefined : `${ttlToMs(o.ttl)}ms`;
    const conditions = conditionHeaders(o);
    const via = conditions === undefined ? this.replayable : this.once;
    const { response } = await via.bytes.put(key, body, { ttl, consistency: o.consistency }, o.signal, conditions as Record<string, string> | undefined);
    if (response.status === 200) return withAnswer(shaped<PutResult>(await response.json(), PUT_SHAPE, "a put answer", response), response);
    throw answerError(response);
  }

  async delete(key: string, o: DeleteOptions): Promise<DeleteResult> {
    const header = conditionHeaders({ ifMatch: o.ifMatch });
    const via = header === undefined ? this.replayable : this.once;
    const answered = await via.api.DELETE("/v1/cache/{key}", { params: { path: { key }, query: { consistency: o.consistency }, header }, signal: o.signal });
    const data = dataOf(answered, DELETE_SHAPE, "a delete answer");
    return buffered(answered.response).replayed ? { ...data, replayed: true } : data;
  }

  async incr(key: string, o: IncrOptions): Promise<IncrResult> {
    const body = incrBody(o);
    const idem = o.idempotencyKey === undefined ? newIdempotencyKey() : o.idempotencyKey === false ? undefined : o.idempotencyKey;
    if (idem !== undefined && (typeof idem !== "string" || !/^[!-~]{1,256}$/.test(idem))) throw new TypeError("invalid idempotencyKey: 1 to 256 visible ASCII characters");
    const header = { ...conditionHeaders({ ifMatch: o.ifMatch }), ...(idem !== undefined ? { "Idempotency-Key": idem } : {}) };
    // Under a key a replay is answered with the first attempt's result, If-Match or not (the
    // primary answers a remembered result before it looks at the condition).
    const via = idem !== undefined ? this.replayable : this.once;
    const answered = await via.api.POST("/v1/cache/{key}/incr", { params: { path: { key }, query: { consistency: o.consistency }, header }, body, signal: o.signal });
    return withAnswer(dataOf(answered, INCR_SHAPE, "an increment answer"), buffered(answered.response));
  }

  async touch(key: string, o: TouchOptions): Promise<TouchResult> {
    if ((o.ttl === undefined) === (o.persist === undefined)) throw new TypeError("touch takes exactly one of ttl and persist");
    if (o.persist !== undefined && o.persist !== true) throw new TypeError("persist is true when given");
    const body = o.persist === true ? { persist: true as const } : { ttl_ms: ttlToMs(o.ttl as Ttl) };
    const header = conditionHeaders({ ifMatch: o.ifMatch });
    // A touch again sets the same expiry from a later time; a conditional one could answer 412.
    const via = header === undefined ? this.replayable : this.once;
    const answered = await via.api.POST("/v1/cache/{key}/touch", { params: { path: { key }, query: { consistency: o.consistency }, header }, body, signal: o.signal });
    return withAnswer(dataOf(answered, TOUCH_SHAPE, "a touch answer"), buffered(answered.response));
  }
}

/** The JSON body of an increment: only the members given, each checked before anything is sent. */
function incrBody(o: IncrOptions): components["schemas"]["IncrRequest"] {
  for (const name of ["delta", "initial"] as const) {
    const v = o[name];
    if (v !== undefined && !Number.isSafeInteger(v)) throw new TypeError(`invalid ${name} ${String(v)}: expected a safe integer`);
  }
  return { delta: o.delta ?? 1, initial: o.initial ?? 0, ...(o.ttl !== undefined ? { ttl: `${ttlToMs(o.ttl)}ms` } : {}) };
}

/** `data` with the answer's ETag, and `replayed` when an earlier attempt may have reached a node. */
export function withAnswer<T extends object>(data: T, answer: BufferedResponse): T & { readonly etag?: string; readonly replayed?: true } {
  return { ...data, ...etagField(answer.headers), ...(answer.replayed ? { replayed: true as const } : {}) };
}
