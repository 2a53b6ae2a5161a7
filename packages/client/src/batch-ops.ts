// getMany, setMany and deleteMany: the input is cut into chunks of 1000 (the server's batch limit;
// setMany's also by body size, batch-chunks.ts), a bounded number of chunks are in flight at
// once, and the results come back in input order. A failed item, or a chunk that failed as a
// whole, is reported in the results and never thrown. A chunk holding a conditional item (If-Match /
// If-None-Match) goes through `once` routes: replayed after an attempt that applied it, the item
// would fail its own condition (item-writes.ts has the same rule for single writes).
import type { Client } from "openapi-fetch";
import { encodeBase64 } from "./base64.js";
import { cutChunks, setManyItemBytes } from "./batch-chunks.js";
import { ttlToMs, type Ttl } from "./duration.js";
import { conditionHeaders, type WriteConditions } from "./conditions.js";
import { ClientClosedError, errorFromAnswer, PayloadTooLargeError, type HypercacheError } from "./errors.js";
import type { components, paths } from "./gen/client.js";
import { shaped } from "./answer-checks.js";
import { RESULT_SHAPE, RESULTS_SHAPE } from "./answer-shapes.js";
import type { BufferedResponse } from "./failover-transport.js";
import { buffered } from "./openapi-bridge.js";
import { positiveOption, type Consistency } from "./options.js";
import { dataOf, itemFromEnvelope, valueBody, type CacheItem, type CacheValue } from "./values.js";

export interface BatchOptions {
  readonly consistency?: Consistency;
  readonly signal?: AbortSignal;
  /** Batch calls in flight at once; default the client's `batchConcurrency`. */
  readonly concurrency?: number;
}

export interface SetManyItem extends WriteConditions {
  readonly key: string;
  readonly value: CacheValue;
  readonly ttl?: Ttl;
  /** `base64`: the string value is already base64 text of the bytes to store. */
  readonly encoding?: "base64";
}

/** A key for deleteMany: deleted as it is, or only while its ETag is `ifMatch` (412 otherwise). */
export type DeleteManyKey = string | { readonly key: string; readonly ifMatch: string | readonly string[] };

/** `found` false without `error`: the key does not exist. */
export interface GetManyResult {
  readonly key: string;
  readonly found: boolean;
  readonly item?: CacheItem;
  readonly error?: Error;
}

export interface SetManyResult {
  readonly key: string;
  readonly stored: boolean;
  readonly bytes?: number;
  readonly owners?: readonly string[];
  readonly error?: Error;
}

export interface DeleteManyResult {
  readonly key: string;
  readonly deleted: boolean;
  readonly bytes?: number;
  /** Present (true) when the outcome came from a replay after an attempt that may have reached a node (see DeleteResult). */
  readonly replayed?: true;
  readonly error?: Error;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

type ItemResult = { status: number; error?: string | undefined; code?: string | undefined; details?: unknown };

/** The typed error of a failed batch item (with its details: a 412's current ETag), or undefined when it succeeded (or is simply missing). */
function itemError(r: ItemResult, endpoint: string): Error | undefined {
  if (r.status === 200 || (r.status === 404 && r.code === "NOT_FOUND")) return undefined;
  const details = r.details !== null && typeof r.details === "object" && !Array.isArray(r.details) ? { details: r.details } : {};
  return errorFromAnswer(r.status, JSON.stringify({ error: r.error ?? `status ${r.status}`, code: r.code, ...details }), endpoint);
}

/** A batch write's item result, as far as drainingBatch reads it. */
type WriteItem = ItemResult & { node?: string; details?: { node?: unknown } };

/**
 * The DrainingError of a batch write a draining node refused item by item (a 200 whose every item
 * is 503 DRAINING naming the answering node, or a 4xx of its own), else undefined. The node refuses
 * the batch whole as it arrives, so nothing of it was applied: the transport takes it as the 503
 * of a single write (the node cools down, the chunk goes to the next one, conditional or not).
 */
export function drainingBatch(path: string, answer: BufferedResponse): HypercacheError | undefined {
  const text = answer.status === 200 && /^\/v1\/cache\/batch\/(put|delete)/.test(path) ? new TextDecoder().decode(answer.bytes) : "";
  if (!text.includes('"DRAINING"')) return undefined;
  const here = (r: WriteItem) => r.code === "DRAINING" && !!r.node && r.details?.node === r.node;
  try {
    const results = (JSON.parse(text) as { results: WriteItem[] }).results;
    const first = results.find(here);
    return first && results.every((r) => here(r) || (r.status >= 400 && r.status < 500)) ? (itemError(first, answer.endpoint) as HypercacheError) : undefined;
  } catch {
    return undefined; // not a batch answer: the batch call reports it
  }
}

/** `results`, when the server answered one per item sent. */
function onePerItem<R>(results: R[], sent: number): R[] {
  if (results.length !== sent) throw new Error(`the server answered ${results.length} results for ${sent} items`);
  return results;
}

export class BatchOps {
  constructor(
    private readonly api: Client<paths>,
    /** The routes of chunks that must not be replayed on another node once sent (conditional items). */
    private readonly once: Client<paths>,
    private readonly deps: { chunkItems: number; concurrency: number; bodyBytesMax: number },
  ) {}

  getMany(keys: readonly string[], o: BatchOptions = {}): Promise<GetManyResult[]> {
    return this.run(keys, o, (part) => this.getChunk(part, o), (key, error) => ({ key, found: false, error }));
  }

  /**
   * A chunk of getMany. A node answers at most its SERVICE_MAX_BODY_BYTES of values a call and
   * reports the keys past that 413 in place ("read this key in another call"): they are asked for
   * again while each call answers some of them; one that still gets it alone keeps the error.
   */
  private async getChunk(keys: string[], o: BatchOptions): Promise<GetManyResult[]> {
    const results = await this.getOnce(keys, o);
    const left = keys.flatMap((_, i) => (results[i]?.error instanceof PayloadTooLargeError ? [i] : []));
    if (left.length > 0 && left.length < keys.length) {
      const again = await this.getChunk(left.map((i) => keys[i] as string), o).catch((err: unknown) => {
        if (o.signal?.aborted) throw err;
        return left.map((i): GetManyResult => ({ key: keys[i] as string, found: false, error: err as Error }));
      });
      left.forEach((i, j) => (results[i] = again[j] as GetManyResult));
    }
    return results;
  }

  /** One batch get: a result per key, in order. */
  private async getOnce(keys: string[], o: BatchOptions): Promise<GetManyResult[]> {
    const answered = await this.api.POST("/v1/cache/batch/get", { body: { keys }, params: { query: { consistency: o.consistency } }, signal: o.signal });
    const data = dataOf(answered, RESULTS_SHAPE, "a batch answer");
    const from = buffered(answered.response);
    const endpoint = from.endpoint;
    return onePerItem(data.results, keys.length).map((r): GetManyResult => {
      shaped(r, RESULT_SHAPE, "a batch result", from);
      const error = itemError(r, endpoint);
      if (error) return { key: r.key, found: false, error };
      return r.found === true ? { key: r.key, found: true, item: itemFromEnvelope(r, from) } : { key: r.key, found: false };
    });
  }

  async setMany(items: readonly SetManyItem[], o: BatchOptions = {}): Promise<SetManyResult[]> {
    // A malformed condition is the caller's mistake: a TypeError before anything is sent.
    for (const it of items) conditionHeaders(it);
    return this.run(items, o, async (part) => {
      const body: components["schemas"]["BatchPutItem"][] = [];
      for (const it of part) body.push(typeof Blob !== "undefined" && it.value instanceof Blob ? await wireItem(it) : wireItemSync(it));
      const via = body.some((w) => w.if_match !== undefined || w.if_none_match !== undefined) ? this.once : this.api;
      const answered = await via.POST("/v1/cache/batch/put", { body: { items: body }, params: { query: { consistency: o.consistency } }, signal: o.signal });
      const data = dataOf(answered, RESULTS_SHAPE, "a batch answer");
      const from = buffered(answered.response);
      const endpoint = from.endpoint;
      return data.results.map((r): SetManyResult => {
        shaped(r, RESULT_SHAPE, "a batch result", from);
        const error = itemError(r, endpoint);
        return error ? { key: r.key, stored: false, error } : { key: r.key, stored: r.stored, ...(r.bytes !== undefined ? { bytes: r.bytes } : {}), owners: r.owners };
      });
    }, (it, error) => ({ key: it.key, stored: false, error }), setManyItemBytes);
  }

  async deleteMany(keys: readonly DeleteManyKey[], o: BatchOptions = {}): Promise<DeleteManyResult[]> {
    // Each key in its wire form once, before anything is sent (a malformed condition is a TypeError).
    const wire = keys.map(wireDeleteKey);
    return this.run(wire, o, async (part) => {
      const via = part.some((k) => typeof k !== "string") ? this.once : this.api;
      const answered = await via.POST("/v1/cache/batch/delete", { body: { keys: part }, params: { query: { consistency: o.consistency } }, signal: o.signal });
      const data = dataOf(answered, RESULTS_SHAPE, "a batch answer");
      const from = buffered(answered.response);
      const endpoint = from.endpoint;
      return data.results.map((r): DeleteManyResult => {
        shaped(r, RESULT_SHAPE, "a batch result", from);
        const error = itemError(r, endpoint);
        return error ? { key: r.key, deleted: false, error } : { key: r.key, deleted: r.deleted, ...(r.bytes !== undefined ? { bytes: r.bytes } : {}), ...(from.replayed === true ? { replayed: true } : {}) };
      });
    }, (k, error) => ({ key: typeof k === "string" ? k : k.key, deleted: false, error }));
  }

  /**
   * Chunks (by count, and by body size with `sizeOf`), runs with bounded concurrency, and turns a
   * chunk's failure into per-item results; an item too large to send fails alone, unsent.
   */
  private async run<I, R>(input: readonly I[], o: BatchOptions, call: (part: I[]) => Promise<R[]>, failed: (item: I, error: Error) => R, sizeOf?: (item: I) => number): Promise<R[]> {
    const concurrency = positiveOption("concurrency", o.concurrency, true) ?? this.deps.concurrency;
    const parts = cutChunks(input, this.deps.chunkItems, this.deps.bodyBytesMax, sizeOf);
    // Once close() ended a chunk, the chunks not yet sent fail with its error, unsent.
    let closed: ClientClosedError | undefined;
    const done = await mapConcurrent(parts, concurrency, async ({ items: part, tooLarge }) => {
      const unsent = tooLarge ?? closed;
      if (unsent) return part.map((item) => failed(item, unsent));
      try {
        return onePerItem(await call(part), part.length);
      } catch (err) {
        if (o.signal?.aborted) throw err;
        if (err instanceof ClientClosedError) closed = err;
        return part.map((item) => failed(item, err as Error));
      }
    });
    return done.flat();
  }
}

/** The wire form of an item whose value is text or bytes (no Blob). */
function wireItemSync(it: SetManyItem): components["schemas"]["BatchPutItem"] {
  const out: components["schemas"]["BatchPutItem"] = { key: it.key, value: "" };
  const v = it.value;
  if (typeof v === "string") {
    out.value = v;
    if (it.encoding === "base64") out.value_encoding = "base64";
  } else {
    const bytes = v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array((v as ArrayBufferView).buffer, (v as ArrayBufferView).byteOffset, (v as ArrayBufferView).byteLength);
    out.value = encodeBase64(bytes);
    out.value_encoding = "base64";
  }
  if (it.ttl !== undefined) out.ttl_ms = ttlToMs(it.ttl);
  const conditions = conditionHeaders(it);
  if (conditions?.["If-Match"] !== undefined) out.if_match = conditions["If-Match"];
  if (conditions?.["If-None-Match"] !== undefined) out.if_none_match = "*";
  return out;
}

/** A deleteMany key as the batch route takes it: a string, or the key with its If-Match. */
function wireDeleteKey(k: DeleteManyKey): string | components["schemas"]["BatchDeleteItem"] {
  if (typeof k === "string") return k;
  const ifMatch = conditionHeaders({ ifMatch: k.ifMatch })?.["If-Match"];
  if (ifMatch === undefined) throw new TypeError("deleteMany: {key, ifMatch} needs ifMatch");
  return { key: k.key, if_match: ifMatch };
}

async function wireItem(it: SetManyItem): Promise<components["schemas"]["BatchPutItem"]> {
  return wireItemSync({ ...it, value: (await valueBody(it.value)) as Uint8Array });
}
