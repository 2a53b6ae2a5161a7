// Everything the package exports but the client class and the OAuth client credentials: shared by
// the main entry (index.ts) and the browser build (browser.ts), which differ in those two only.
export type { DeleteOptions, ReadOptions, SetOptions, WriteOptions } from "./call-options.js";
export type { WriteConditions } from "./conditions.js";
export type { IncrOptions, IncrResult, TouchOptions, TouchResult } from "./item-writes.js";
export { LEASE_DEFAULT_MS, LEASE_RETRY_PAUSE_MS, LEASE_WAIT_DEFAULT_MS, type Loader, type LoadOptions } from "./lease-loads.js";
export type { ClientOptions, Consistency } from "./options.js";
export { BATCH_BODY_BYTES_MAX, BATCH_CHUNK_ITEMS, BATCH_CONCURRENCY, DISCOVERY_INTERVAL_MS, KEY_PAGE_LIMIT } from "./options.js";
export type { AuthProvider, BasicCredentials, BearerToken } from "./auth.js";
export type { BatchOptions, DeleteManyKey, DeleteManyResult, GetManyResult, SetManyItem, SetManyResult } from "./batch-ops.js";
export { setManyItemBytes } from "./batch-chunks.js";
export { KeyIterator, type KeysOptions } from "./key-iterator.js";
export { ClusterWatch, WATCH_EVENT_BYTES_MAX, WATCH_RETRY_MIN_MS, WATCH_RETRY_MS, type ClusterEvent, type DistMetrics, type MembersView, type WatchOptions, type WatchStatus } from "./cluster-watch.js";
export { reconnectDelayMs, WATCH_RETRY_JITTER, WATCH_RETRY_MAX_MS } from "./reconnect-delay.js";
export type {
  CallOptions,
  ClearAnswer,
  DrainAnswer,
  DrainStatus,
  EvictAnswer,
  ExpireAnswer,
  HintsView,
  KeyBrowserPage,
  KeyPageOptions,
  KeyReplicas,
  ManagementIdentity,
  NodeStats,
  RingView,
  ValuePreview,
} from "./management-routes.js";
export type { ClusterEndpoints } from "./discovery.js";
export { COOLDOWN_BASE_MS, COOLDOWN_MAX_MS, cooldownMs, POOL_ENDPOINTS_MAX, type EndpointStatus } from "./endpoint-pool.js";
export { ANSWER_BYTES_MAX, ATTEMPT_TIMEOUT_MS, ATTEMPTS_MAX, type ClientEvent } from "./failover-transport.js";
export type { FetchLike, HeadersLike, RequestInitLike, ResponseLike } from "./fetch-types.js";
export type { Clock, Random, Runtime, TimerHandle, Timers } from "./runtime.js";
export { parseDurationMs, ttlToMs, TTL_MAX_MS, type Ttl } from "./duration.js";
export type { CacheItem, CacheValue, Capability, DeleteResult, Identity, ItemMeta, PutResult } from "./values.js";
export {
  AllEndpointsFailedError,
  BadAnswerError,
  BadRequestError,
  ClientClosedError,
  ClientConfigError,
  ConflictError,
  DrainingError,
  ERROR_BODY_CHARS_MAX,
  ERROR_CLASSES,
  ForbiddenError,
  HypercacheError,
  InternalError,
  NotFoundError,
  LeaseHeldError,
  NotImplementedError,
  PayloadTooLargeError,
  PreconditionFailedError,
  QuorumFailedError,
  TimeoutError,
  TransportError,
  UnauthorizedError,
  UnavailableError,
  UnsupportedMediaTypeError,
  TooManyRequestsError,
  type ErrorCode,
  type FailedAttempt,
} from "./errors.js";
