// Fixed caps of the service. Configurable limits live in the config; these do not change.

/** Virtual nodes each node places on the consistent-hash ring. */
export const VIRTUAL_NODES = 128;

/** Key browser page size: default and ceiling (larger values are clamped). */
export const KEY_PAGE_LIMIT_DEFAULT = 100;
export const KEY_PAGE_LIMIT_MAX = 500;

/** Key browser result-set size: default and ceiling (larger values are clamped). */
export const KEY_RESULT_MAX_DEFAULT = 10_000;
export const KEY_RESULT_MAX_CEILING = 50_000;

/** Peer transport: body cap both ways, timeouts. */
export const PEER_BODY_BYTES_MAX = 16 * 1024 * 1024;
/**
 * Payload bytes one peer call (or answer) carries at most, half the body cap: every batch, page
 * and answer of the peer protocol is cut by bytes as well as by count, so no call can exceed the
 * cap however large the values are (one value is at most 15 MiB, alone in its call).
 */
export const PEER_BATCH_BYTES = 8 * 1024 * 1024;
export const PEER_TIMEOUT_MS = 5_000;
export const PEER_IDLE_TIMEOUT_MS = 60_000;

/** Management listener idle timeout; responses (the SSE stream) have no write timeout. */
export const MGMT_IDLE_TIMEOUT_MS = 60_000;

/** Client listener: time in-flight requests get to finish at shutdown. */
export const API_SHUTDOWN_GRACE_MS = 30_000;

/** Longest query string the client listener parses. */
export const QUERY_STRING_BYTES_MAX = 8 * 1024;

/** Merkle anti-entropy: target records per leaf. */
export const MERKLE_CHUNK_SIZE = 128;

/** Eviction shard count ceiling (a shard is a unit of locking-free work and of key paging). */
export const EVICTION_SHARDS_MAX = 1024;
