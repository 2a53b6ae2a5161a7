// Fixed caps of the service. Configurable limits live in the config; these do not change.

/** Virtual nodes each node places on the consistent-hash ring. */
export const VIRTUAL_NODES = 128;

/**
 * Longest key any node accepts (the ceiling of SERVICE_MAX_KEY_BYTES). Keys from peers are held
 * to it rather than to this node's own setting, so a cluster whose nodes differ in that setting
 * still replicates.
 */
export const KEY_BYTES_CEILING = 65_536;

/** Largest time the service stores or answers (the largest JavaScript Date, in Unix ms). */
export const TIME_MS_MAX = 8_640_000_000_000_000;

/** How far ahead of this node's clock a peer's version may be (bounds clock skew's reach). */
export const PEER_VERSION_AHEAD_MAX_MS = 24 * 3_600_000;

/**
 * SERVICE_REPLICATION's ceiling, so also the most ids an owner list a peer sends may hold
 * (pushed owner checks, a forwarder's view of a key).
 */
export const REPLICATION_MAX = 64;

/** If-Match / If-None-Match: entity tags per header and header length at most (400 past them). */
export const ETAG_LIMITS = Object.freeze({ tagsMax: 64, headerCharsMax: 8192 });

/**
 * Conditional writes and touches on a primary: one at a time per key. At most `waitersPerKey`
 * wait behind the running one, and at most `keysMax` keys have writes running or waiting; past
 * either the write is 503 UNAVAILABLE with Retry-After 1, so a hot key cannot queue without bound.
 */
export const CONDITIONAL_LIMITS = Object.freeze({ waitersPerKey: 1024, keysMax: 65_536 });

/** Incr request body (JSON) at most. */
export const INCR_BODY_BYTES_MAX = 4096;

/** Idempotency-Key header of an incr: 1 to this many visible ASCII characters. */
export const IDEMPOTENCY_KEY_CHARS_MAX = 256;

/**
 * Incr results the key's primary remembers per Idempotency-Key: this long, and this many at most
 * (the oldest forgotten first), about 1 KiB each.
 */
export const IDEMPOTENCY_LIMITS = Object.freeze({ ttlMs: 600_000, entriesMax: 10_000 });

/**
 * Stampede leases (GET /v1/cache/{key}?lease=...&wait=...), held in the key's primary's memory:
 * a lease lasts `leaseMsMin` to `leaseMsMax` and a miss waits at most `waitMsMax` for the value
 * (anything else is 400). A node holds at most `leasesMax` leases: past it a miss gets a plain
 * 404 without a lease. At most `waitersPerKey` misses wait on one key: past it a miss is 404
 * LEASE_HELD at once. `tokenCharsMax`: the X-Cache-Lease header of a fill at most (else 400).
 */
export const LEASE_LIMITS = Object.freeze({ leaseMsMin: 100, leaseMsMax: 60_000, waitMsMax: 10_000, leasesMax: 10_000, waitersPerKey: 1_000, tokenCharsMax: 64 });

/** Touch request body (JSON) at most. */
export const TOUCH_BODY_BYTES_MAX = 4096;

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
/**
 * After a GOAWAY (the peer CA changed, a peer's idle close), how long a session may keep the
 * streams it has (nodes move their Exchange stream at once; this bounds a peer that does not):
 * the longest call, a lease that waits LEASE_LIMITS.waitMsMax plus its timeout, with a call
 * timeout to spare.
 */
export const PEER_RENEW_GRACE_MS = 2 * PEER_TIMEOUT_MS + LEASE_LIMITS.waitMsMax;

/**
 * A peer token shorter than this is logged as a warning at start-up: the dist listener answers
 * every guess (it has no failure limit: peers are few and a wrong token there is a
 * misconfiguration), so the token's length is what keeps it from being guessed.
 */
export const PEER_TOKEN_CHARS_ADVISED = 16;
/** Keys one peer Inspect call describes at most (record metadata, never values). */
export const INSPECT_KEYS_MAX = 1000;
/**
 * GET /cluster/keys/{key}/replicas: how long the route waits for each owner's answer before it
 * reports that owner as unreachable (the owners are asked in parallel).
 */
export const REPLICA_INSPECT_TIMEOUT_MS = 1_500;
export const PEER_IDLE_TIMEOUT_MS = 60_000;

/** Management listener idle timeout. Its requests (the SSE stream) have no time limit; an answer that stops moving is dropped after API_STALL_TIMEOUT_MS. */
export const MGMT_IDLE_TIMEOUT_MS = 60_000;

/** Client and management listeners: idle keep-alive timeout, time to receive a request's headers. */
export const HTTP_IDLE_TIMEOUT_MS = 60_000;
export const HTTP_HEADERS_TIMEOUT_MS = 60_000;
/**
 * Lingering close: after the last answer on a connection, the rest of an unread request body is
 * read and dropped (the connection half-closed) for at most this long, this long without bytes,
 * or this many bytes, so the client reads the answer instead of a reset that discards it.
 */
export const HTTP_LINGER = Object.freeze({ totalMs: 5_000, idleMs: 2_000, bytes: 16 * 1024 * 1024 });
/** Client and management listeners: an answer whose bytes do not move for a whole period of this length (30 to 60 s after it stalls) is dropped with its connection. */
export const API_STALL_TIMEOUT_MS = 30_000;
/** Client and management listeners: pipelined requests waiting behind an answer on one connection, at most (past it the connection is closed). */
export const HTTP_PIPELINED_WAITING_MAX = 64;
/** Client and management listeners: header lines of one request, at most (400 past it). */
export const HTTP_HEADER_LINES_MAX = 500;
/** Client listener: time to receive a whole request (headers and body). */
export const API_REQUEST_TIMEOUT_MS = 300_000;
/** Request line and headers at most, on every listener. */
export const HTTP_HEADER_BYTES_MAX = 64 * 1024;

/** Open connections per listener at most; past the cap new connections are closed at once. */
export const API_CONNECTIONS_MAX = 16_384;
export const MGMT_CONNECTIONS_MAX = 1024;
export const PEER_CONNECTIONS_MAX = 4096;
/**
 * At a listener's connection cap, a pending answer whose bytes have not reached the kernel for this
 * long counts as spare (src/http/connection-rank.ts): a client that stops reading cannot hold a
 * slot against new connections until the stall timeout drops it.
 */
export const CONNECTION_STALLED_EVICTABLE_MS = 5_000;
/** How often a listener at its cap samples the progress of its open connections' answers. */
export const CONNECTION_SAMPLE_MS = 1_000;

/** Event stream (/cluster/events) subscribers at once; one more is 503 UNAVAILABLE. */
export const SSE_SUBSCRIBERS_MAX = 256;

/** Client listener: time in-flight requests get to finish at shutdown. */
export const API_SHUTDOWN_GRACE_MS = 30_000;

/**
 * The other steps of a shutdown, each bounded so that SIGTERM to exit takes at most the drain +
 * 5 s (the leave) + 30 s (API_SHUTDOWN_GRACE_MS) + 10 s (the stop), the sum the Helm chart's
 * terminationGracePeriodSeconds floor is built on. Unbounded, an OTLP endpoint that never
 * answered held the stop for its exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT: 60 s seen).
 */
export const SHUTDOWN_LIMITS = Object.freeze({
  /** Announcing to the peers that this node left (one gossip push to each, at once). */
  leaveMaxMs: 5_000,
  /** Stopping the loops, flushing read repairs, closing peer sessions and the metric exporters. */
  stopMaxMs: 10_000,
});

/**
 * Batch request bodies, checked while the bytes arrive (before JSON.parse): nesting depth of
 * arrays and objects, and the JSON structure (arrays and objects opened, commas) allowed per
 * batch item, plus a little slack for the envelope around the list.
 */
export const BATCH_BODY_LIMITS = Object.freeze({ depthMax: 64, structurePerItem: 16, structureSlack: 64 });

/** Longest query string the listeners parse (room for a 4096-byte key filter, percent-encoded). */
export const QUERY_STRING_BYTES_MAX = 16 * 1024;

/** Gossip: entries read from one message, members a table holds, pruned members remembered. */
export const GOSSIP_ENTRIES_MAX = 1024;
export const MEMBERS_MAX = 4096;
export const PRUNED_REMEMBERED_MAX = 1024;

/** Merkle anti-entropy: target records per leaf. */
export const MERKLE_CHUNK_SIZE = 128;

/**
 * Gossip rounds a node back in contact with a majority waits, so the others have re-added it and
 * the ring views agree, before the catch-up pass after which it counts towards quorum reads again.
 */
export const REJOIN_HOLD_GOSSIP_ROUNDS = 5;

/**
 * Gossip rounds over which peers keep gossiping as alive members this node pruned before the views
 * count as disagreeing (a bridge) rather than a rejoin under way (quorum-vote.ts).
 */
export const VIEWS_DISAGREE_GOSSIP_ROUNDS = 4;

/** Eviction shard count ceiling (a shard is a unit of locking-free work and of key paging). */
export const EVICTION_SHARDS_MAX = 1024;

/**
 * Items of SERVICE_CAPACITY per store shard at most: the shard count is raised to match (up to
 * EVICTION_SHARDS_MAX). A shard compacts its record pages in one go, in the write that finds a
 * quarter of them garbage, at about 180-220 ns per record (a million records of 100 bytes:
 * 180 ms, 40 of them the sort); 65,536 records keep that write near 14 ms.
 */
export const STORE_SHARD_RECORDS_MAX = 65_536;

/**
 * Records a whole-store scan (Merkle summaries and range pages, key listings) looks at before it
 * yields to the event loop: a few milliseconds of work, so requests never wait for a whole scan.
 */
export const SCAN_SLICE_RECORDS = 8192;

/**
 * Key browser listings (GET /v1/cache/keys, GET /cluster/keys) a node coordinates at once; one more
 * is 503 UNAVAILABLE with Retry-After. Each listing is sliced, so none stalls the event loop, but a
 * listing scans every node's whole store and a glob over long keys costs CPU in proportion to
 * both lengths (seconds for pathological ones): without a cap, concurrent listings could take
 * every node's CPU from the item routes for as long as a client keeps sending them.
 */
export const KEY_LISTINGS_AT_ONCE_MAX = 4;
/** Retry-After, in seconds, of a listing refused by KEY_LISTINGS_AT_ONCE_MAX. */
export const KEY_LISTINGS_RETRY_AFTER_S = 1;

/** How one per-peer batch is cut: items and payload bytes per call, calls under way per peer. */
export interface PeerBatchLimits {
  readonly items: number;
  readonly bytes: number;
  readonly inFlight: number;
  /**
   * Items waiting for one peer at most; past it new items fail at once (a peer that stopped
   * answering cannot make the node queue without bound: replica writes become hints).
   */
  readonly queued: number;
}

/**
 * Per-peer batching of every peer call that carries records or keys. Items pending for the same
 * peer travel in one call up to these caps; a call's bytes stay under PEER_BATCH_BYTES.
 */
export const PEER_BATCHING: Readonly<Record<"forward" | "push" | "get" | "repair" | "hintReplay", PeerBatchLimits>> = Object.freeze({
  /** Client writes forwarded to their primary. */
  forward: Object.freeze({ items: 512, bytes: PEER_BATCH_BYTES, inFlight: 1, queued: 4096 }),
  /** Replica sets and removes pushed by a coordinator. */
  push: Object.freeze({ items: 512, bytes: PEER_BATCH_BYTES, inFlight: 1, queued: 4096 }),
  /** Reads of records from other owners. */
  get: Object.freeze({ items: 512, bytes: PEER_BATCH_BYTES, inFlight: 1, queued: 4096 }),
  /** Read repairs sent to one owner. */
  repair: Object.freeze({ items: 512, bytes: PEER_BATCH_BYTES, inFlight: 1, queued: 4096 }),
  /** Hints (and queued migrations) replayed to one target per call. */
  hintReplay: Object.freeze({ items: 256, bytes: PEER_BATCH_BYTES, inFlight: 1, queued: 4096 }),
});

/** Pages and scan budgets of the background paths. */
export const SCAN_LIMITS = Object.freeze({
  /** Records a whole-store scan looks at before it yields (see SCAN_SLICE_RECORDS). */
  sliceRecords: SCAN_SLICE_RECORDS,
  /**
   * Records the ownership census looks at before it yields, across shard boundaries: each costs a
   * key decode, a ring lookup and an owner check, about 2 µs, so a slice stays near 2 ms. (With
   * the whole-scan slice and a budget that started again at every shard, a store of small shards
   * was counted in one pass: 21 ms for 10,000 items in the p99 profile, whole seconds at a million.)
   */
  censusRecords: 1024,
  /**
   * Records a Merkle summary or range scan looks at before it yields, across shard boundaries.
   * A summary decodes each shared record and hashes a digest string twice, 2-4 µs a record: with
   * the whole-scan slice (8,192) its slices took 19 ms at the median and 36 ms at p90 in a soak
   * node's profile (100,000 items, every 30 s against each peer, on every node at about the same
   * time), the largest recurring pause of the event loop; at 1,024 they stay near 2-5 ms.
   */
  merkleRecords: 1024,
  /** Records a rebalance scan looks at per batch before a tick gives the event loop back. */
  rebalanceRecordsPerBatch: 4096,
  /** Records per Merkle range page (and at most PEER_BATCH_BYTES of them). */
  merkleRangePage: 1000,
  /** Keys asked per page when the key browser lists a peer's keys. */
  keyListingPage: 5000,
  /** Largest Merkle tree, in leaves. */
  merkleLeavesMax: 65_536,
});

/**
 * Bookkeeping bytes counted per queued hint on top of its key and value: the record, the queue
 * entry, its map slot and two string headers, 234-247 bytes measured alone on Node 20 and about
 * 270 inside the test suite's process (the maps' spare slots), so 320 (64 were counted, and a
 * queue filled to SERVICE_HINT_MAX_BYTES with small hints held 3.3 times it).
 */
export const HINT_OVERHEAD_BYTES = 320;

/** Frames an SSE subscriber may have queued behind a full socket before the oldest are dropped. */
export const SSE_BUFFER_FRAMES = 64;

/** Exchange stream (one per peer): frames served at once, and answer bytes waiting to be sent. */
export const EXCHANGE_LIMITS = Object.freeze({ pendingFramesMax: 64, unsentBytesMax: 16 * 1024 * 1024 });

/** Client operations the /stats latency summaries cover (per operation). */
export const LATENCY_WINDOW_OPS = 2048;

/**
 * Times a coordinator stamps a write again after an owner answered that it holds a newer version
 * (then the write fails with QUORUM_FAILED if the quorum is still short).
 */
export const WRITE_RESTAMPS_MAX = 3;

/**
 * The drain hand-off: its tick (confirmations, hint hand-off, key pass start), how often the
 * shutdown logs progress while it waits for safe_to_stop, how often it checks, and how many
 * peers a draining node pushes its member list to per tick, taking turns (each push carries every
 * member: with thousands of members, all at once held the event loop for seconds and grew memory
 * by hundreds of MB, a review found).
 */
export const DRAIN_LIMITS = Object.freeze({ tickMs: 200, progressEveryMs: 5000, pollMs: 100, announcePerTick: 16 });

/**
 * Clock offset guard (cluster/write/clock-offsets.ts): a node further than `offsetMaxMs` from the
 * cluster's median wall clock stamps no writes; probe samples older than `sampleTtlMs` are ignored.
 */
export const CLOCK_LIMITS = Object.freeze({ offsetMaxMs: 1_000, sampleTtlMs: 30_000 });

/** Bytes of a value GET /cluster/keys/{key}/value answers at most (the dashboard's preview). */
export const VALUE_PREVIEW_BYTES_MAX = 4096;
/**
 * Value previews waiting for their turn at most (they run one per event-loop turn: each reads the
 * whole value); past it a preview is refused 503 UNAVAILABLE with Retry-After: 1.
 */
export const VALUE_PREVIEW_QUEUE_MAX = 64;
