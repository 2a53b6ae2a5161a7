// Fixed caps and windows of the authentication chain. They are not settings: each one bounds
// memory or CPU that a caller could otherwise make the node spend.

/** Longest Authorization header value that is parsed; longer ones are a 401 at once. */
export const AUTH_HEADER_BYTES_MAX = 16 * 1024;

/** Largest policy file read at boot. */
export const POLICY_FILE_BYTES_MAX = 1024 * 1024;

/**
 * Successful Basic verifications are cached for this long, keyed by a keyed hash of the
 * credential: bcrypt costs about 120 ms of CPU per check, so without the cache every Basic
 * request would cost that much.
 */
export const BASIC_CACHE_TTL_MS = 30_000;

/** Cached Basic verifications at most; the oldest entry is dropped first. */
export const BASIC_CACHE_ENTRIES_MAX = 1024;

/** Failed authentications are counted per client address in windows of this length. */
export const AUTH_FAIL_WINDOW_MS = 1_000;

/**
 * A client address that failed an authentication this recently, or that has a password check
 * under way, is suspect: its new bcrypt checks wait behind everyone else's, in a queue of their
 * own (bcrypt-pool.ts), so a failure flood from many addresses cannot keep other users out.
 */
export const AUTH_SUSPECT_MS = 60_000;

/** Client addresses whose failures are tracked at most; the least recently failed is dropped first. */
export const AUTH_FAIL_ADDRESSES_MAX = 100_000;

/**
 * bcrypt checks waiting for a worker, per worker of the pool (which has one worker per core);
 * one more is refused with 503 UNAVAILABLE and Retry-After. At about 120 ms a check, a full
 * queue is two seconds of work.
 */
export const BCRYPT_QUEUE_PER_WORKER = 16;

/** Retry-After, in seconds, of a check refused because the bcrypt queue is full. */
export const BCRYPT_RETRY_AFTER_S = 1;

/** OIDC: the key set is refetched on an unknown `kid` at most once per this window. */
export const JWKS_REFETCH_COOLDOWN_MS = 30_000;

/** OIDC: the key set is refreshed when older than this, on the next verification. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** OIDC: timeout and body cap of the discovery and JWKS requests. */
export const OIDC_FETCH_TIMEOUT_MS = 5_000;
export const OIDC_FETCH_BYTES_MAX = 1024 * 1024;

/** OIDC: tolerated clock skew on `exp`, `nbf` and `iat`, in seconds. */
export const OIDC_CLOCK_SKEW_S = 30;

/** A bcrypt worker idle this long ends, returning its memory; the next Basic check starts one (a few ms). */
export const BCRYPT_WORKER_IDLE_MS = 5_000;

/**
 * Static bearer tokens that matched are remembered by the SHA-256 of the token for this long
 * (at most this many), so a repeat request skips the digest object and the walk over every
 * configured token.
 */
export const TOKEN_CACHE_LIMITS = Object.freeze({ ttlMs: 60_000, entriesMax: 1024 });
