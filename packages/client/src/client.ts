// HypercacheClient: the cache API over every node of a cluster. It wires the endpoint pools (client
// and management listeners), the failover transports, discovery and credentials, and maps each
// call onto the typed OpenAPI routes. A client given management endpoints only (no `endpoints`)
// talks to those alone: no discovery, no other origin.
import type { Client } from "openapi-fetch";
import type { AuthProvider } from "./auth.js";
import { BatchOps, drainingBatch, type BatchOptions, type DeleteManyKey, type DeleteManyResult, type GetManyResult, type SetManyItem, type SetManyResult } from "./batch-ops.js";
import { ClusterWatch, type MembersView, type WatchOptions } from "./cluster-watch.js";
import { Discovery } from "./discovery.js";
import { EndpointPool, normalizeBaseUrl, type EndpointStatus } from "./endpoint-pool.js";
import { AllEndpointsFailedError, ClientClosedError, ClientConfigError, HypercacheError } from "./errors.js";
import { globalFetch, type FetchLike } from "./fetch-types.js";
import { ATTEMPT_TIMEOUT_MS, BufferedResponse, FailoverTransport } from "./failover-transport.js";
import { ByteRoutes } from "./byte-routes.js";
import { untilAborted } from "./attempt-scope.js";
import type { DeleteOptions, ReadOptions, SetOptions } from "./call-options.js";
import { etagField } from "./conditions.js";
import { LeaseLoads, type Loader, type LoadOptions } from "./lease-loads.js";
import { ItemWrites, ONCE, UNLESS_INTERNAL, writeRoutes, type FailoverPolicy, type IncrOptions, type IncrResult, type TouchOptions, type TouchResult } from "./item-writes.js";
import type { paths as apiPaths } from "./gen/client.js";
import type { paths as mgmtPaths } from "./gen/management.js";
import { KeyIterator, type KeysOptions } from "./key-iterator.js";
import {
  type CallOptions,
  type ClearAnswer,
  type DrainAnswer,
  type DrainStatus,
  type EvictAnswer,
  type ExpireAnswer,
  type HintsView,
  type KeyBrowserPage,
  type KeyPageOptions,
  type KeyReplicas,
  type ManagementIdentity,
  type NodeStats,
  type RingView,
  type ValuePreview,
} from "./management-routes.js";
import { isBoolean, isStrings, shaped } from "./answer-checks.js";
import { DRAIN_STATUS_SHAPE, HINTS_SHAPE, IDENTITY_SHAPE, KEY_PAGE_SHAPE, MEMBERS_SHAPE, PREVIEW_SHAPE, REPLICAS_SHAPE, RING_SHAPE, STATS_SHAPE } from "./answer-shapes.js";
import { buffered, typedClient } from "./openapi-bridge.js";
import { acceptEndpoint, authFromOptions, positiveOption, BATCH_BODY_BYTES_MAX, BATCH_CHUNK_ITEMS, BATCH_CONCURRENCY, DISCOVERY_INTERVAL_MS, KEY_PAGE_LIMIT, seedList, type ClientOptions, type OidcProviderFactory } from "./options.js";
import { defaultRuntime, type Runtime, type TimerHandle } from "./runtime.js";
import { answerError, dataOf, isMissingKey, itemFromEnvelope, metaFromHeaders, valueOf } from "./values.js";
import type { CacheItem, CacheValue, Capability, DeleteResult, Identity, ItemMeta, PutResult } from "./values.js";

/** The options of a call that passes none (one object for every such call). */
const NO_OPTIONS: ReadOptions = Object.freeze({});

export class HypercacheClient {
  /** The `oidc` option's provider: none here (the browser build), client-with-oidc.ts adds it. */
  protected static readonly oidc: OidcProviderFactory | undefined = undefined;
  private readonly runtime: Runtime;
  private readonly apiPool: EndpointPool;
  private readonly mgmtPool: EndpointPool;
  private readonly mgmtTransport: FailoverTransport;
  private readonly api: Client<apiPaths>;
  private readonly mgmt: Client<mgmtPaths>;
  private readonly mgmtNode: Client<mgmtPaths>;
  private readonly batches: BatchOps;
  private readonly bytes: ByteRoutes;
  private readonly writes: ItemWrites;
  private readonly loads: LeaseLoads;
  private readonly discovery: Discovery | undefined;
  private readonly timer: TimerHandle | undefined;
  private readonly pageSize = KEY_PAGE_LIMIT;
  /** False for a management-only client (no `endpoints`): the cache API then refuses to run. */
  private readonly hasApi: boolean;
  /** Aborted by close(): requests and watches in flight end with a ClientClosedError. */
  private readonly closing = new AbortController();

  constructor(options: ClientOptions) {
    const seeds = seedList(options);
    this.hasApi = seeds.length > 0;
    const base = defaultRuntime(options.seed);
    this.runtime = { ...base, ...options.runtime };
    const fetch: FetchLike = options.fetch ?? globalFetch();
    const configured = [...seeds, ...(options.managementEndpoints ?? [])];
    // Each checked first (a ClientConfigError naming it): the checks below parse them as URLs.
    for (const url of configured) normalizeBaseUrl(url);
    const auth: AuthProvider = authFromOptions(options, { fetch, runtime: this.runtime, oidc: (new.target as typeof HypercacheClient).oidc }, configured);
    const poolOpts = { clock: this.runtime.clock, random: this.runtime.random, randomStart: options.randomStart ?? true, accept: acceptEndpoint(options, configured) };
    this.apiPool = new EndpointPool(seeds, poolOpts);
    this.mgmtPool = new EndpointPool(options.managementEndpoints ?? [], poolOpts);
    const common = {
      fetch,
      auth,
      runtime: this.runtime,
      timeoutMs: positiveOption("timeoutMs", options.timeoutMs, false) ?? ATTEMPT_TIMEOUT_MS,
      answerBytesMax: positiveOption("maxAnswerBytes", options.maxAnswerBytes, true),
      attemptsMax: positiveOption("maxAttempts", options.maxAttempts, true),
      closed: this.closing.signal,
      onEvent: options.onEvent,
    };
    // Discovery asks a client listener: a management-only client has none, and stays on its own.
    const discoveryOn = options.discovery !== false && this.hasApi;
    if (discoveryOn) {
      this.discovery = new Discovery({ api: typedClient<apiPaths>(new FailoverTransport({ ...common, pool: this.apiPool })), apiPool: this.apiPool, mgmtPool: this.mgmtPool, onEvent: options.onEvent });
    }
    const rediscover = this.discovery ? () => (this.discovery as Discovery).refresh() : undefined;
    const apiTransport = new FailoverTransport({ ...common, pool: this.apiPool, rediscover, refusal: drainingBatch });
    this.api = typedClient<apiPaths>(apiTransport);
    this.bytes = new ByteRoutes(apiTransport);
    // Writes that must not be applied twice go through transports of their own failover policy.
    const transportWith = (failoverAfterSent: FailoverPolicy) => new FailoverTransport({ ...common, pool: this.apiPool, rediscover, refusal: drainingBatch, failoverAfterSent });
    const once = writeRoutes(transportWith(ONCE));
    this.writes = new ItemWrites({ api: this.api, bytes: this.bytes }, once, typedClient<apiPaths>(transportWith(UNLESS_INTERNAL)));
    const { clock, timers } = this.runtime;
    this.loads = new LeaseLoads({ bytes: this.bytes, bytesOnce: once.bytes, clock, timers, attemptTimeoutMs: common.timeoutMs, onEvent: options.onEvent });
    this.mgmtTransport = new FailoverTransport({ ...common, pool: this.mgmtPool, rediscover });
    this.mgmt = typedClient<mgmtPaths>(this.mgmtTransport);
    // Calls that act on the answering node's state never move to another node once sent.
    this.mgmtNode = typedClient<mgmtPaths>(new FailoverTransport({ ...common, pool: this.mgmtPool, rediscover, failoverAfterSent: false }));
    this.batches = new BatchOps(this.api, once.api, {
      chunkItems: BATCH_CHUNK_ITEMS,
      concurrency: positiveOption("batchConcurrency", options.batchConcurrency, true) ?? BATCH_CONCURRENCY,
      bodyBytesMax: positiveOption("batchBodyBytes", options.batchBodyBytes, true) ?? BATCH_BODY_BYTES_MAX,
    });
    const d = discoveryOn ? (options.discovery as Exclude<ClientOptions["discovery"], false>) : undefined;
    if (this.discovery && d?.atStart !== false) void this.discovery.refresh().catch(() => undefined);
    const intervalMs = d?.intervalMs ?? DISCOVERY_INTERVAL_MS;
    if (this.discovery && intervalMs > 0) this.timer = this.runtime.timers.every(intervalMs, () => void this.discovery?.refresh().catch(() => undefined));
  }

  /** The value's bytes, or undefined when the key does not exist. */
  async get(key: string, o: ReadOptions = NO_OPTIONS): Promise<Uint8Array | undefined> {
    this.openApi();
    const { response } = await this.bytes.get(key, o.consistency, o.signal);
    if (response.status === 200) return valueOf(response);
    return this.missingOrThrow(response);
  }

  /** The value as UTF-8 text, or undefined when the key does not exist. */
  async getText(key: string, o: ReadOptions = NO_OPTIONS): Promise<string | undefined> {
    const bytes = await this.get(key, o);
    return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  }

  /** The value parsed as JSON, or undefined when the key does not exist. */
  async getJSON<T = unknown>(key: string, o: ReadOptions = NO_OPTIONS): Promise<T | undefined> {
    const text = await this.getText(key, o);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }

  /** The value with its version, origin, expiry and owners, or undefined when the key does not exist. */
  async getItem(key: string, o: ReadOptions = {}): Promise<CacheItem | undefined> {
    this.openApi();
    const { data, response } = await this.api.GET("/v1/cache/{key}", {
      params: { path: { key }, query: { consistency: o.consistency } },
      headers: { accept: "application/json" },
      signal: o.signal,
    });
    if (data !== undefined) {
      const answer = buffered(response);
      return { ...itemFromEnvelope(data, answer), ...etagField(answer.headers) };
    }
    return this.missingOrThrow(response);
  }

  /** The value; a missing one is loaded with `load` once for all concurrent callers (a stampede lease, lease-loads.ts). */
  async getOrLoad(key: string, load: Loader, o: LoadOptions = {}): Promise<Uint8Array> {
    this.openApi();
    return this.loads.getOrLoad(key, load, o);
  }

  /** The item's metadata without its value, or undefined when the key does not exist. */
  async head(key: string, o: ReadOptions = {}): Promise<ItemMeta | undefined> {
    this.openApi();
    const { response } = await this.bytes.head(key, { consistency: o.consistency }, o.signal);
    if (response.status === 200) return metaFromHeaders(key, response);
    return this.missingOrThrow(response);
  }

  /**
   * Stores `value` (text as UTF-8, anything else as its bytes). With `ifMatch` or `ifNoneMatch` it
   * is a conditional write: a PreconditionFailedError (412) changed nothing, and it moves to another
   * node only when it never left (a replay of an applied one would answer 412).
   */
  async set(key: string, value: CacheValue, o: SetOptions = {}): Promise<PutResult> {
    this.openApi();
    return this.writes.set(key, value, o);
  }

  /** Stores `value` as JSON text. */
  async setJSON(key: string, value: unknown, o: SetOptions = {}): Promise<PutResult> {
    return this.set(key, JSON.stringify(value), o);
  }

  /** Deletes the key; `deleted` is false when it was already absent. With `ifMatch`, as a conditional `set`. */
  async delete(key: string, o: DeleteOptions = {}): Promise<DeleteResult> {
    this.openApi();
    return this.writes.delete(key, o);
  }

  /**
   * Adds `delta` (default 1) to the key's counter and answers its new value (`value`). An absent
   * key starts at `initial` (default 0). Sent with a fresh Idempotency-Key unless `idempotencyKey`
   * gives one (or `false`, none): a failover replay is then answered with the first result.
   */
  async incr(key: string, o: IncrOptions = {}): Promise<IncrResult> {
    this.openApi();
    return this.writes.incr(key, o);
  }

  /** Gives the live item a new expiry (`ttl`) or none (`persist: true`); a missing key is NotFoundError. */
  async touch(key: string, o: TouchOptions): Promise<TouchResult> {
    this.openApi();
    return this.writes.touch(key, o);
  }

  /** The key's owner node ids, primary first. */
  async owners(key: string, o: { signal?: AbortSignal } = {}): Promise<string[]> {
    this.openApi();
    return dataOf(await this.api.GET("/v1/owners/{key}", { params: { path: { key } }, signal: o.signal }), { owners: isStrings }, "an owners answer").owners;
  }

  /** The caller's identity: id, scopes and capabilities. */
  async me(o: { signal?: AbortSignal } = {}): Promise<Identity> {
    this.openApi();
    return dataOf(await this.api.GET("/v1/me", { signal: o.signal }), IDENTITY_SHAPE, "an identity");
  }

  /** Whether the caller holds `capability` (`cache.read`, `cache.write` or `cache.admin`). */
  async can(capability: Capability, o: { signal?: AbortSignal } = {}): Promise<boolean> {
    this.openApi();
    return dataOf(await this.api.GET("/v1/me/can", { params: { query: { capability } }, signal: o.signal }), { allowed: isBoolean }, "a capability answer").allowed;
  }

  /** Reads many keys; one result per key, in input order. Never throws for a failed key. */
  async getMany(keys: readonly string[], o?: BatchOptions): Promise<GetManyResult[]> {
    this.openApi();
    return this.batches.getMany(keys, o);
  }

  /** Stores many items; one result per item, in input order. Never throws for a failed item. */
  async setMany(items: readonly SetManyItem[], o?: BatchOptions): Promise<SetManyResult[]> {
    this.openApi();
    return this.batches.setMany(items, o);
  }

  /** Deletes many keys; one result per key, in input order. Never throws for a failed key. */
  async deleteMany(keys: readonly DeleteManyKey[], o?: BatchOptions): Promise<DeleteManyResult[]> {
    this.openApi();
    return this.batches.deleteMany(keys, o);
  }

  /** Every key of the cluster matching `q`, page after page; see `partialNodes` afterwards. */
  keys(o: KeysOptions = {}): KeyIterator {
    this.openApi();
    return new KeyIterator(this.api, o, this.pageSize);
  }

  /** Membership as a node's management listener reports it. */
  async members(o: CallOptions = {}): Promise<MembersView> {
    return dataOf(await (await this.management(false, o.signal)).GET("/cluster/members", { signal: o.signal }), MEMBERS_SHAPE, "a members view");
  }

  /** The caller's identity on a management listener (`GET /me`: any authenticated identity, where `me()` needs read). */
  async identity(o: CallOptions = {}): Promise<ManagementIdentity> {
    return dataOf(await (await this.management(false, o.signal)).GET("/me", { signal: o.signal }), IDENTITY_SHAPE, "an identity");
  }

  /** The answering node's hash ring: each node's primary and owner share of the key space. */
  async ring(o: CallOptions = {}): Promise<RingView> {
    return dataOf(await (await this.management(false, o.signal)).GET("/cluster/ring", { signal: o.signal }), RING_SHAPE, "a ring view");
  }

  /** The answering node's hint queues per target node, with totals, caps and counters. */
  async hints(o: CallOptions = {}): Promise<HintsView> {
    return dataOf(await (await this.management(false, o.signal)).GET("/dist/hints", { signal: o.signal }), HINTS_SHAPE, "a hints view");
  }

  /** One page of the cluster's keys (`GET /cluster/keys`); pass `next_cursor` as `cursor` for the next. */
  async keyPage(o: KeyPageOptions = {}): Promise<KeyBrowserPage> {
    const query = { q: o.q, limit: o.limit, max: o.max, cursor: o.cursor };
    return dataOf(await (await this.management(false, o.signal)).GET("/cluster/keys", { params: { query }, signal: o.signal }), KEY_PAGE_SHAPE, "a key page");
  }

  /** Each owner's own copy of `key` (present, version, origin, expiry, size, or unreachable). */
  async replicas(key: string, o: CallOptions = {}): Promise<KeyReplicas> {
    return dataOf(await (await this.management(false, o.signal)).GET("/cluster/keys/{key}/replicas", { params: { path: { key } }, signal: o.signal }), REPLICAS_SHAPE, "a replicas view");
  }

  /** The first 4096 bytes of `key`'s value with its size and expiry; undefined when it has none. */
  async valuePreview(key: string, o: CallOptions = {}): Promise<ValuePreview | undefined> {
    const { data, response } = await (await this.management(false, o.signal)).GET("/cluster/keys/{key}/value", { params: { path: { key } }, signal: o.signal });
    return data === undefined ? this.missingOrThrow(response) : shaped<ValuePreview>(data, PREVIEW_SHAPE, "a value preview", buffered(response));
  }

  /** The answering node's store statistics. */
  async stats(o: CallOptions = {}): Promise<NodeStats> {
    return dataOf(await (await this.management(false, o.signal)).GET("/stats", { signal: o.signal }), STATS_SHAPE, "a stats view");
  }

  /** The answering node's drain state and hand-off progress. */
  async drainStatus(o: CallOptions = {}): Promise<DrainStatus> {
    return dataOf(await (await this.management(false, o.signal)).GET("/dist/drain", { signal: o.signal }), DRAIN_STATUS_SHAPE, "a drain status");
  }

  /** Drains the answering node (admin; one-way until it restarts). */
  async drain(o: CallOptions = {}): Promise<DrainAnswer> {
    return dataOf(await (await this.management(true, o.signal)).POST("/dist/drain", { signal: o.signal }));
  }

  /** Runs one eviction pass on the answering node (admin). */
  async evict(o: CallOptions = {}): Promise<EvictAnswer> {
    return dataOf(await (await this.management(true, o.signal)).POST("/evict", { signal: o.signal }));
  }

  /** Runs one expiration pass on the answering node (admin). */
  async triggerExpiration(o: CallOptions = {}): Promise<ExpireAnswer> {
    return dataOf(await (await this.management(true, o.signal)).POST("/trigger-expiration", { signal: o.signal }));
  }

  /** Removes every item the answering node holds, on that node only (admin). */
  async clearNode(o: CallOptions = {}): Promise<ClearAnswer> {
    return dataOf(await (await this.management(true, o.signal)).POST("/clear", { signal: o.signal }));
  }

  /** Typed membership and heartbeat events; reconnects (to another node when it knows one) and reports its state to `onStatus`. */
  async watch(o: WatchOptions = {}): Promise<ClusterWatch> {
    await this.management(false, o.signal);
    return new ClusterWatch({ transport: this.mgmtTransport, pool: this.mgmtPool, runtime: this.runtime, closed: this.closing.signal }, o);
  }

  /** Asks the cluster for its endpoints now; resolves whether the client endpoints changed. */
  refreshEndpoints(): Promise<boolean> {
    if (!this.discovery) return Promise.resolve(false);
    return this.discovery.refresh();
  }

  /** What the client knows of each client endpoint (failures, cooldowns). */
  endpoints(): EndpointStatus[] {
    return this.apiPool.status();
  }

  /** The endpoint requests go to first: the last one that answered (or the starting one). */
  currentEndpoint(): string | undefined {
    return this.apiPool.currentUrl();
  }

  /** Management endpoints known so far (from the options and from discovery). */
  managementEndpoints(): EndpointStatus[] {
    return this.mgmtPool.status();
  }

  /**
   * Stops periodic discovery, ends every request in flight and every watch (they reject, or end,
   * with a ClientClosedError). Calls after close() throw ClientClosedError.
   */
  close(): void {
    this.timer?.cancel();
    if (!this.closing.signal.aborted) this.closing.abort(new ClientClosedError());
  }

  private open(): void {
    if (this.closing.signal.aborted) throw new ClientClosedError();
  }

  /** open(), for the cache API: a management-only client has no client endpoint to send to. */
  private openApi(): void {
    this.open();
    if (!this.hasApi) throw new ClientConfigError("no client endpoint: this client was given management endpoints only; pass endpoints");
  }

  /**
   * The typed management routes, once a management endpoint is known (discovered if need be);
   * `nodeTargeted` for calls on the answering node's state, which never reach a second node. The
   * call's `signal` and close() end the wait for discovery.
   */
  private async management(nodeTargeted: boolean, signal: AbortSignal | undefined): Promise<Client<mgmtPaths>> {
    this.open();
    const routes = nodeTargeted ? this.mgmtNode : this.mgmt;
    if (this.mgmtPool.size() > 0) return routes;
    let failure: unknown;
    if (this.discovery) await untilAborted(this.discovery.refresh().catch((err: unknown) => void (failure = err)), [signal, this.closing.signal]);
    // Discovery that reached no client endpoint, or was refused, is why none is known: not the configuration.
    if (this.mgmtPool.size() === 0 && (failure instanceof AllEndpointsFailedError || (failure instanceof HypercacheError && (failure.status === 401 || failure.status === 403)))) throw failure;
    if (this.mgmtPool.size() === 0) throw new ClientConfigError("no management endpoint known: discovery found none this client may use (with credentials, only the configured origins); pass managementEndpoints, or set trustDiscoveredEndpoints");
    return routes;
  }

  private missingOrThrow(response: Response | BufferedResponse): undefined {
    const answer = response instanceof BufferedResponse ? response : buffered(response);
    const err = answerError(answer);
    if (isMissingKey(err, answer)) return undefined;
    throw err;
  }
}
