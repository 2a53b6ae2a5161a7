// The single-key writes: set (PUT, on the byte route), delete, incr and touch (typed routes).
// Which failed attempts move to another node depends on what a replay could do:
// - a plain set, delete or touch: replayed (last write wins; a touch sets the same expiry again);
// - a conditional write (If-Match / If-None-Match), or an increment sent without a key (`once`):
//   only when it never left or a node refused it as draining; replayed after an attempt that
//   applied it, it would fail its own condition or add again;
// - an increment under its Idempotency-Key (`keyed`: a fresh key per call unless the caller gives
//   one): after anything but a 500, since the node that applied it answers a replay with the first
//   result. A 500 comes after an add the node may not have remembered.
import type { Client } from "openapi-fetch";
import { isNumber, isString, isStrings, optional, shaped } from "./answer-checks.js";
import { PUT_SHAPE, DELETE_SHAPE } from "./answer-shapes.js";
import { ByteRoutes } from "./byte-routes.js";
import { conditionHeaders, etagField, newIdempotencyKey, type ConditionHeaders, type WriteConditions } from "./conditions.js";
import { ttlToMs, type Ttl } from "./duration.js";
import { HypercacheError, type TransportError } from "./errors.js";
import type { components, paths } from "./gen/client.js";
import { notApplied } from "./attempt-errors.js";
import type { BufferedResponse, FailoverTransport, FailoverTransportDeps } from "./failover-transport.js";
import type { DeleteOptions, SetOptions, WriteOptions } from "./call-options.js";
import { buffered, typedClient } from "./openapi-bridge.js";
import { answerError, dataOf, valueBody, type CacheValue, type DeleteResult, type PutResult } from "./values.js";

/** The options every update takes. */
interface UpdateOptions extends WriteOptions, Pick<WriteConditions, "ifMatch"> {}

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
   * another node only when it never left, since a replay would add again. A key reused on the
   * same counter with another request (another delta, initial, ttl or ifMatch) within the
   * server's 10 minutes is a ConflictError (409, `details.reason` "idempotency_key_reused"), and
   * nothing is added.
   */
  readonly idempotencyKey?: string | false;
}

/** A touch: exactly one of a new time to live (counted from the touch) and `persist` (no expiry). */
export type TouchOptions = UpdateOptions & ({ readonly ttl: Ttl; readonly persist?: undefined } | { readonly persist: true; readonly ttl?: undefined });

/** `replayed`: an earlier attempt may have reached a node before this answer came from a replay. */
export interface IncrResult {
  /** The counter's value after this increment. */
  readonly value: number;
  readonly version: number;
  readonly owners: readonly string[];
  /** The node that added to its slot: the primary, or a replica owner that took over. */
  readonly appliedBy: string;
  readonly etag?: string;
  readonly replayed?: true;
}

export interface TouchResult {
  readonly key: string;
  /** Size of the value (unchanged). */
  readonly bytes: number;
  readonly node: string;
  readonly owners: readonly string[];
  /** The new absolute expiry, ISO 8601 UTC; absent after `persist`. */
  readonly expiresAt?: string;
  readonly etag?: string;
  readonly replayed?: true;
}

const INCR_SHAPE = Object.freeze({ value: isNumber, version: isNumber, owners: isStrings, applied_by: isString });
const TOUCH_SHAPE = Object.freeze({ key: isString, bytes: isNumber, node: isString, owners: isStrings, expires_at: optional(isString) });

/** The routes of requests under one failover policy. */
export interface WriteRoutes {
  readonly api: Client<paths>;
  readonly bytes: ByteRoutes;
}

export type FailoverPolicy = NonNullable<FailoverTransportDeps["failoverAfterSent"]>;

/**
 * The policy of `once` routes (conditional writes and chunks, increments without a key, the
 * store without a lease): on to another node only when nothing was applied (notApplied).
 */
export const ONCE: FailoverPolicy = notApplied;
/** The policy of increments under a key: on after anything but a 500. */
export const UNLESS_INTERNAL: FailoverPolicy = (e: HypercacheError | TransportError) => !(e instanceof HypercacheError && e.status === 500);

/** Both kinds of routes over one transport. */
export function writeRoutes(transport: FailoverTransport): WriteRoutes {
  return { api: typedClient<paths>(transport), bytes: new ByteRoutes(transport) };
}

export class ItemWrites {
  constructor(
    /** Requests that may be replayed on another node. */
    private readonly replayable: WriteRoutes,
    /** Requests that move to another node only when nothing was applied (ONCE). */
    private readonly once: WriteRoutes,
    /** Increments under their Idempotency-Key (UNLESS_INTERNAL). */
    private readonly keyed: Client<paths>,
  ) {}

  /** The routes of a write: replayable unless it carries a condition (then once). */
  private routesFor(conditions: ConditionHeaders | undefined): WriteRoutes {
    return conditions === undefined ? this.replayable : this.once;
  }

  async set(key: string, value: CacheValue, o: SetOptions): Promise<PutResult> {
    const body = await valueBody(value);
    const ttl = o.ttl === undefined ? undefined : `${ttlToMs(o.ttl)}ms`;
    const conditions = conditionHeaders(o);
    const { response } = await this.routesFor(conditions).bytes.put(key, body, { ttl, consistency: o.consistency }, o.signal, conditions as Record<string, string> | undefined);
    if (response.status === 200) return withAnswer(shaped<PutResult>(await response.json(), PUT_SHAPE, "a put answer", response), response);
    throw answerError(response);
  }

  async delete(key: string, o: DeleteOptions): Promise<DeleteResult> {
    const header = conditionHeaders({ ifMatch: o.ifMatch });
    const answered = await this.routesFor(header).api.DELETE("/v1/cache/{key}", { params: { path: { key }, query: { consistency: o.consistency }, header }, signal: o.signal });
    return withAnswer(dataOf(answered, DELETE_SHAPE, "a delete answer"), buffered(answered.response));
  }

  async incr(key: string, o: IncrOptions): Promise<IncrResult> {
    const body = incrBody(o);
    const idem = o.idempotencyKey === undefined ? newIdempotencyKey() : o.idempotencyKey === false ? undefined : o.idempotencyKey;
    if (idem !== undefined && (typeof idem !== "string" || !/^[!-~]{1,256}$/.test(idem))) throw new TypeError("idempotencyKey: 1 to 256 visible ASCII");
    const header = { ...conditionHeaders({ ifMatch: o.ifMatch }), ...(idem !== undefined ? { "Idempotency-Key": idem } : {}) };
    // Under a key a replay is answered with the first attempt's result, If-Match or not (the
    // primary answers a remembered result before it looks at the condition).
    const via = idem !== undefined ? this.keyed : this.once.api;
    const answered = await via.POST("/v1/cache/{key}/incr", { params: { path: { key }, query: { consistency: o.consistency }, header }, body, signal: o.signal });
    const d = dataOf(answered, INCR_SHAPE, "an increment answer");
    return withAnswer({ value: d.value, version: d.version, owners: d.owners, appliedBy: d.applied_by }, buffered(answered.response));
  }

  async touch(key: string, o: TouchOptions): Promise<TouchResult> {
    if ((o.ttl === undefined) === (o.persist === undefined)) throw new TypeError("touch: ttl or persist");
    const body = o.persist === true ? { persist: true as const } : { ttl_ms: ttlToMs(o.ttl as Ttl) };
    const header = conditionHeaders({ ifMatch: o.ifMatch });
    const answered = await this.routesFor(header).api.POST("/v1/cache/{key}/touch", { params: { path: { key }, query: { consistency: o.consistency }, header }, body, signal: o.signal });
    const d = dataOf(answered, TOUCH_SHAPE, "a touch answer");
    const touched = { key: d.key, bytes: d.bytes, node: d.node, owners: d.owners, ...(d.expires_at !== undefined ? { expiresAt: d.expires_at } : {}) };
    return withAnswer(touched, buffered(answered.response));
  }
}

/** The JSON body of an increment: delta and initial (defaults filled in) and the TTL when given, checked before anything is sent. */
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
