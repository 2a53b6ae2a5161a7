// HypercacheClient: the cache API over every node of a cluster. It wires the endpoint pools (client
// and management listeners), the failover transports, discovery and credentials, and maps each
// call onto the typed OpenAPI routes.
import type { Client } from "openapi-fetch";
import type { AuthProvider } from "./auth.js";
import { BatchOps, type BatchOptions, type DeleteManyResult, type GetManyResult, type SetManyItem, type SetManyResult } from "./batch-ops.js";
import { ClusterWatch, type MembersView, type WatchOptions } from "./cluster-watch.js";
import { Discovery } from "./discovery.js";
import { ttlToMs, type Ttl } from "./duration.js";
import { EndpointPool, type EndpointStatus } from "./endpoint-pool.js";
import { ClientConfigError } from "./errors.js";
import { globalFetch, type FetchLike } from "./fetch-types.js";
import { ATTEMPT_TIMEOUT_MS, BufferedResponse, FailoverTransport } from "./failover-transport.js";
import { ByteRoutes } from "./byte-routes.js";
import type { paths as apiPaths } from "./gen/client.js";
import type { paths as mgmtPaths } from "./gen/management.js";
import { KeyIterator, type KeysOptions } from "./key-iterator.js";
import { buffered, typedClient } from "./openapi-bridge.js";
import { acceptEndpoint, authFromOptions, BATCH_CHUNK_ITEMS, BATCH_CONCURRENCY, DISCOVERY_INTERVAL_MS, KEY_PAGE_LIMIT, seedList, type ClientOptions, type Consistency } from "./options.js";
import { defaultRuntime, type Runtime, type TimerHandle } from "./runtime.js";
import {
  answerError,
  isMissingKey,
  itemFromEnvelope,
  metaFromHeaders,
  valueBody,
  type CacheItem,
  type CacheValue,
  type Capability,
  type DeleteResult,
  type Identity,
  type ItemMeta,
  type PutResult,
} from "./values.js";

export interface ReadOptions {
  /** How many owners to consult; default the server's `SERVICE_READ_CONSISTENCY`. */
  readonly consistency?: Consistency;
  readonly signal?: AbortSignal;
}

export interface WriteOptions {
  /** How many owners must acknowledge; default the server's `SERVICE_WRITE_CONSISTENCY`. */
  readonly consistency?: Consistency;
  readonly signal?: AbortSignal;
}

export interface SetOptions extends WriteOptions {
  /** Time to live: milliseconds or a duration such as "30s"; omitted, the item never expires. */
  readonly ttl?: Ttl;
}

/** The options of a call that passes none (one object for every such call). */
const NO_OPTIONS: ReadOptions = Object.freeze({});

export class HypercacheClient {
  private readonly runtime: Runtime;
  private readonly apiPool: EndpointPool;
  private readonly mgmtPool: EndpointPool;
  private readonly mgmtTransport: FailoverTransport;
  private readonly api: Client<apiPaths>;
  private readonly mgmt: Client<mgmtPaths>;
  private readonly batches: BatchOps;
  private readonly bytes: ByteRoutes;
  private readonly discovery: Discovery | undefined;
  private readonly timer: TimerHandle | undefined;
  private readonly pageSize = KEY_PAGE_LIMIT;
  private closed = false;

  constructor(options: ClientOptions) {
    const seeds = seedList(options.endpoints);
    const base = defaultRuntime(options.seed);
    this.runtime = { ...base, ...options.runtime };
    const fetch: FetchLike = options.fetch ?? globalFetch();
    const auth: AuthProvider = authFromOptions(options, { fetch, runtime: this.runtime }, seeds);
    const poolOpts = { clock: this.runtime.clock, random: this.runtime.random, randomStart: options.randomStart ?? true, accept: acceptEndpoint(options) };
    this.apiPool = new EndpointPool(seeds, poolOpts);
    this.mgmtPool = new EndpointPool(options.managementEndpoints ?? [], poolOpts);
    const common = { fetch, auth, runtime: this.runtime, timeoutMs: options.timeoutMs ?? ATTEMPT_TIMEOUT_MS, onEvent: options.onEvent };

    const discoveryOn = options.discovery !== false;
    if (discoveryOn) {
      this.discovery = new Discovery({ api: typedClient<apiPaths>(new FailoverTransport({ ...common, pool: this.apiPool })), apiPool: this.apiPool, mgmtPool: this.mgmtPool, onEvent: options.onEvent });
    }
    const rediscover = this.discovery ? () => (this.discovery as Discovery).refresh() : undefined;
    const apiTransport = new FailoverTransport({ ...common, pool: this.apiPool, rediscover });
    this.api = typedClient<apiPaths>(apiTransport);
    this.bytes = new ByteRoutes(apiTransport);
    this.mgmtTransport = new FailoverTransport({ ...common, pool: this.mgmtPool, rediscover });
    this.mgmt = typedClient<mgmtPaths>(this.mgmtTransport);
    this.batches = new BatchOps(this.api, { chunkItems: BATCH_CHUNK_ITEMS, concurrency: options.batchConcurrency ?? BATCH_CONCURRENCY });

    const d = options.discovery === false ? undefined : options.discovery;
    if (this.discovery && d?.atStart !== false) void this.discovery.refresh().catch(() => undefined);
    const intervalMs = d?.intervalMs ?? DISCOVERY_INTERVAL_MS;
    if (this.discovery && intervalMs > 0) this.timer = this.runtime.timers.every(intervalMs, () => void this.discovery?.refresh().catch(() => undefined));
  }

  /** The value's bytes, or undefined when the key does not exist. */
  async get(key: string, o: ReadOptions = NO_OPTIONS): Promise<Uint8Array | undefined> {
    this.open();
    const { response } = await this.bytes.get(key, o.consistency, o.signal);
    if (response.status === 200) return response.bytes;
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
    this.open();
    const { data, response } = await this.api.GET("/v1/cache/{key}", {
      params: { path: { key }, query: { consistency: o.consistency } },
      headers: { accept: "application/json" },
      signal: o.signal,
    });
    if (data && typeof data === "object") return itemFromEnvelope(data);
    return this.missingOrThrow(response);
  }

  /** The item's metadata without its value, or undefined when the key does not exist. */
  async head(key: string, o: ReadOptions = {}): Promise<ItemMeta | undefined> {
    this.open();
    const { response } = await this.bytes.head(key, { consistency: o.consistency }, o.signal);
    if (response.status === 200) return metaFromHeaders(key, response.headers);
    return this.missingOrThrow(response);
  }

  /** Stores `value` (text as UTF-8, anything else as its bytes). */
  async set(key: string, value: CacheValue, o: SetOptions = {}): Promise<PutResult> {
    this.open();
    const body = await valueBody(value);
    const ttl = o.ttl === undefined ? undefined : `${ttlToMs(o.ttl)}ms`;
    const { response } = await this.bytes.put(key, body, { ttl, consistency: o.consistency }, o.signal);
    if (response.status === 200) return (await response.json()) as PutResult;
    throw answerError(response);
  }

  /** Stores `value` as JSON text. */
  setJSON(key: string, value: unknown, o: SetOptions = {}): Promise<PutResult> {
    return this.set(key, JSON.stringify(value), o);
  }

  /** Deletes the key; `deleted` is false when it was already absent. */
  async delete(key: string, o: WriteOptions = {}): Promise<DeleteResult> {
    this.open();
    const { data, response } = await this.api.DELETE("/v1/cache/{key}", { params: { path: { key }, query: { consistency: o.consistency } }, signal: o.signal });
    if (data) return data;
    throw answerError(buffered(response));
  }

  /** The key's owner node ids, primary first. */
  async owners(key: string, o: { signal?: AbortSignal } = {}): Promise<string[]> {
    this.open();
    const { data, response } = await this.api.GET("/v1/owners/{key}", { params: { path: { key } }, signal: o.signal });
    if (data) return data.owners;
    throw answerError(buffered(response));
  }

  /** The caller's identity: id, scopes and capabilities. */
  async me(o: { signal?: AbortSignal } = {}): Promise<Identity> {
    this.open();
    const { data, response } = await this.api.GET("/v1/me", { signal: o.signal });
    if (data) return data;
    throw answerError(buffered(response));
  }

  /** Whether the caller holds `capability` (`cache.read`, `cache.write` or `cache.admin`). */
  async can(capability: Capability, o: { signal?: AbortSignal } = {}): Promise<boolean> {
    this.open();
    const { data, response } = await this.api.GET("/v1/me/can", { params: { query: { capability } }, signal: o.signal });
    if (data) return data.allowed;
    throw answerError(buffered(response));
  }

  /** Reads many keys; one result per key, in input order. Never throws for a failed key. */
  getMany(keys: readonly string[], o?: BatchOptions): Promise<GetManyResult[]> {
    this.open();
    return this.batches.getMany(keys, o);
  }

  /** Stores many items; one result per item, in input order. Never throws for a failed item. */
  setMany(items: readonly SetManyItem[], o?: BatchOptions): Promise<SetManyResult[]> {
    this.open();
    return this.batches.setMany(items, o);
  }

  /** Deletes many keys; one result per key, in input order. Never throws for a failed key. */
  deleteMany(keys: readonly string[], o?: BatchOptions): Promise<DeleteManyResult[]> {
    this.open();
    return this.batches.deleteMany(keys, o);
  }

  /** Every key of the cluster matching `q`, page after page; see `partialNodes` afterwards. */
  keys(o: KeysOptions = {}): KeyIterator {
    this.open();
    return new KeyIterator(this.api, o, this.pageSize);
  }

  /** Membership as a node's management listener reports it (discovered management endpoints). */
  async members(o: { signal?: AbortSignal } = {}): Promise<MembersView> {
    await this.needManagement();
    const { data, response } = await this.mgmt.GET("/cluster/members", { signal: o.signal });
    if (data) return data;
    throw answerError(buffered(response));
  }

  /** Typed membership and heartbeat events; reconnects to another node when a stream ends. */
  async watch(o: WatchOptions = {}): Promise<ClusterWatch> {
    await this.needManagement();
    return new ClusterWatch({ transport: this.mgmtTransport, pool: this.mgmtPool, runtime: this.runtime }, o);
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

  /** Stops periodic discovery. Calls after close() throw. */
  close(): void {
    this.closed = true;
    this.timer?.cancel();
  }

  private open(): void {
    if (this.closed) throw new ClientConfigError("the client is closed");
  }

  private async needManagement(): Promise<void> {
    this.open();
    if (this.mgmtPool.size() > 0) return;
    if (this.discovery) await this.discovery.refresh().catch(() => undefined);
    if (this.mgmtPool.size() === 0) throw new ClientConfigError("no management endpoint known: discovery found none; pass managementEndpoints");
  }

  private missingOrThrow(response: Response | BufferedResponse): undefined {
    const err = answerError(response instanceof BufferedResponse ? response : buffered(response));
    if (isMissingKey(err)) return undefined;
    throw err;
  }
}
