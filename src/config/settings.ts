// The table of every SERVICE_* setting: name, default, parser and meaning. loadConfig reads it,
// /config shows it and the README's configuration table is written from it.
import * as p from "./parsers.js";
import { KEY_BYTES_CEILING, REPLICATION_MAX } from "../core/limits.js";

/** Raw (string) values of the settings after defaults, keyed by variable name. */
export interface SettingSpec {
  readonly name: string;
  /** Default as the user would write it; "" means unset. */
  readonly default: string;
  readonly parse: p.Parser<unknown>;
  readonly meaning: string;
  /** Shown as "[redacted]" by /config. */
  readonly secret?: boolean;
}

const D = (min = 1) => p.durationMs({ min });

export const SETTINGS: readonly SettingSpec[] = Object.freeze([
  { name: "SERVICE_NODE_ID", default: "", parse: p.text(), meaning: "stable node identifier (1 to 128 letters, digits, `.`, `_`, `-`); empty means the host name" },
  { name: "SERVICE_API_ADDR", default: ":8080", parse: p.address(), meaning: "client API listener, host:port or :port" },
  { name: "SERVICE_MGMT_ADDR", default: ":8081", parse: p.address(), meaning: "management listener" },
  { name: "SERVICE_DIST_ADDR", default: ":7946", parse: p.address(), meaning: "peer (dist) listener; also the address advertised to peers" },
  { name: "SERVICE_API_ADVERTISE_URL", default: "", parse: p.baseUrl(), meaning: "base URL clients are told to use for this node's client API (endpoint discovery, gossiped); empty means http, or https with SERVICE_API_TLS_CERT, the host of SERVICE_DIST_ADDR and the port of SERVICE_API_ADDR (none when that host is unspecified)" },
  { name: "SERVICE_DASHBOARD", default: "on", parse: p.oneOf(["on", "off"]), meaning: "on serves the web dashboard at /dashboard/ of the management listener (and redirects / to it); off answers 404 there" },
  { name: "SERVICE_MGMT_ADVERTISE_URL", default: "", parse: p.baseUrl(), meaning: "base URL clients are told to use for this node's management listener; empty means http, or https with SERVICE_MGMT_TLS_CERT, the host of SERVICE_DIST_ADDR and the port of SERVICE_MGMT_ADDR" },
  {
    name: "SERVICE_ALLOWED_HOSTS",
    default: "",
    parse: p.hostNames(),
    meaning:
      "comma-separated host names (.example.com: it and its subdomains; *: any) that browser requests holding no credential may name in Host, besides IP addresses, localhost and the hosts of this node's addresses and advertised URLs; other such requests are 403 FORBIDDEN host_not_allowed (DNS rebinding)",
  },
  { name: "SERVICE_SEEDS", default: "", parse: p.seeds(), meaning: "comma-separated seed peers, id@host:port (a bare host:port is accepted with a warning)" },
  { name: "SERVICE_REPLICATION", default: "3", parse: p.integer({ min: 1, max: REPLICATION_MAX }), meaning: "owners (replicas) per key" },
  { name: "SERVICE_CAPACITY", default: "100000", parse: p.integer({ min: 1 }), meaning: "items this node holds at most (replicas included), within plus or minus the shard count" },
  {
    name: "SERVICE_MAX_DATA_BYTES",
    default: "",
    parse: p.byteSize({ min: 0 }),
    meaning: "bytes of live keys and values this node holds at most (replicas included); past it writes evict by SERVICE_EVICTION_ALGORITHM, as past SERVICE_CAPACITY, and while eviction lags more than an eighth of it (at least 1 MiB) behind, writes that add bytes are refused 503 with Retry-After: 1; empty means 40% of the memory the process may use (its cgroup limit, else the machine's memory), at least SERVICE_MAX_VALUE_BYTES + SERVICE_MAX_KEY_BYTES; 0 means no byte limit",
  },
  { name: "SERVICE_TLS_RELOAD_INTERVAL", default: "10s", parse: D(0), meaning: "how often the TLS files of the three listeners are checked for a change; a changed set is read, checked and used for new connections (a bad one is logged and the old stays); 0 disables" },
  { name: "SERVICE_LOG_LEVEL", default: "info", parse: p.oneOf(["debug", "info", "warn", "error"]), meaning: "debug, info, warn or error" },
  { name: "SERVICE_HEARTBEAT", default: "1s", parse: D(), meaning: "interval of direct heartbeat probes; a probe times out after half of it" },
  { name: "SERVICE_INDIRECT_PROBE_K", default: "2", parse: p.integer({ min: 0, max: 16 }), meaning: "relays asked for an indirect probe after a failed direct one; 0 disables" },
  { name: "SERVICE_DEAD_AFTER", default: "", parse: D(), meaning: "time without a successful probe after which a suspect peer is declared dead and pruned; empty means 6 x SERVICE_HEARTBEAT" },
  { name: "SERVICE_GOSSIP_INTERVAL", default: "1s", parse: D(), meaning: "interval at which the member list is pushed to one random alive peer" },
  { name: "SERVICE_HINT_TTL", default: "30s", parse: D(), meaning: "how long failed replica writes stay queued for replay; at most half of SERVICE_TOMBSTONE_TTL (a hint replayed after the tombstones of a later delete were compacted would bring the key back, and a hint a draining node hands off lives a second TTL on its receiver)" },
  { name: "SERVICE_HINT_REPLAY", default: "200ms", parse: D(), meaning: "hint replay tick" },
  { name: "SERVICE_HINT_MAX_PER_NODE", default: "10000", parse: p.integer({ min: 1 }), meaning: "queued hints per target node; past it new hints are dropped" },
  { name: "SERVICE_HINT_MAX_BYTES", default: "64MiB", parse: p.byteSize({ min: 1 }), meaning: "bytes of queued hints for all nodes together, replica hints and failed migrations in one count (a hint counts 2 bytes per key character, its value's bytes and 320 bytes of bookkeeping, what it holds in the heap); past it new hints are dropped" },
  { name: "SERVICE_REBALANCE_INTERVAL", default: "250ms", parse: D(), meaning: "ownership rebalance scan interval" },
  { name: "SERVICE_REBALANCE_BATCH_SIZE", default: "64", parse: p.integer({ min: 1, max: 10_000 }), meaning: "keys per migration batch" },
  { name: "SERVICE_REBALANCE_MAX_CONCURRENT", default: "1", parse: p.integer({ min: 1, max: 64 }), meaning: "migration batches in flight at once" },
  { name: "SERVICE_REMOVAL_GRACE", default: "0s", parse: D(0), meaning: "delay before a migrated key's local copy is released; 0 releases at once" },
  { name: "SERVICE_AUTO_SYNC_INTERVAL", default: "30s", parse: D(0), meaning: "Merkle anti-entropy interval; 0 disables" },
  { name: "SERVICE_AUTO_SYNC_MAX_FACTOR", default: "8", parse: p.integer({ min: 1, max: 1024 }), meaning: "adaptive backoff ceiling of the anti-entropy interval; 1 disables backoff" },
  { name: "SERVICE_MERKLE_CHUNK_SIZE", default: "128", parse: p.integer({ min: 1, max: 65_536 }), meaning: "target records per Merkle leaf" },
  { name: "SERVICE_READ_REPAIR_BATCH_SIZE", default: "0", parse: p.integer({ min: 0, max: 10_000 }), meaning: "read-repair batch size per peer; 0 sends each repair at once" },
  { name: "SERVICE_READ_REPAIR_INTERVAL", default: "100ms", parse: D(), meaning: "flush interval of batched read repairs" },
  { name: "SERVICE_WRITE_CONSISTENCY", default: "quorum", parse: p.oneOf(["one", "quorum", "all"]), meaning: "default write consistency: one, quorum or all" },
  { name: "SERVICE_READ_CONSISTENCY", default: "one", parse: p.oneOf(["one", "quorum", "all"]), meaning: "default read consistency: one, quorum or all" },
  { name: "SERVICE_TOMBSTONE_TTL", default: "10m", parse: D(), meaning: "how long delete markers are kept at least; past it, until every known peer has pulled them by anti-entropy. Keep it above twice SERVICE_AUTO_SYNC_INTERVAL x SERVICE_AUTO_SYNC_MAX_FACTOR" },
  {
    name: "SERVICE_TOMBSTONE_MAX_BYTES",
    default: "64MiB",
    parse: p.byteSize({ min: 1024 }),
    meaning: "bytes of tombstones (delete markers) kept at most, apart from the item capacity; past it the oldest go first, counted in dist.tombstones.dropped",
  },
  { name: "SERVICE_EVICTION_ALGORITHM", default: "lru", parse: p.oneOf(["lru", "lfu", "cawolfu"]), meaning: "lru, lfu or cawolfu" },
  { name: "SERVICE_EVICTION_SHARDS", default: "32", parse: p.integer({ min: 1, max: 1024 }), meaning: "store shards; capacity is honoured within plus or minus this count. Raised to one per 65,536 items of `SERVICE_CAPACITY` (a shard compacts its pages in one write)" },
  { name: "SERVICE_EVICTION_INTERVAL", default: "1s", parse: D(), meaning: "background eviction loop interval" },
  { name: "SERVICE_EXPIRATION_INTERVAL", default: "1s", parse: D(), meaning: "background expiration loop interval" },
  { name: "SERVICE_MAX_VALUE_BYTES", default: "8MiB", parse: p.byteSize({ min: 1, max: 15 * 1024 * 1024 }), meaning: "largest value; larger PUT bodies get 413" },
  {
    name: "SERVICE_MAX_INFLIGHT_BYTES",
    default: "",
    parse: p.byteSize({ min: 0 }),
    meaning: "bytes the client listener holds for its clients at once: request bodies over 16 KiB while they arrive and are used, and answers over 16 KiB until their clients take them (a client that does not read holds its answer); a request that would pass it is refused 503 UNAVAILABLE with Retry-After: 1; empty means 10% of the memory the process may use (its cgroup limit, else the machine's memory; 1 GiB when unknown), at least the largest answer (the larger of SERVICE_MAX_VALUE_BYTES and SERVICE_MAX_BODY_BYTES as base64, plus 1 MiB), which a given value must also be; 0 means no limit",
  },
  { name: "SERVICE_MAX_BODY_BYTES", default: "16MiB", parse: p.byteSize({ min: 1024, max: 256 * 1024 * 1024 }), meaning: "largest JSON request body (batch routes); larger get 413" },
  { name: "SERVICE_MAX_KEY_BYTES", default: "4096", parse: p.integer({ min: 1, max: KEY_BYTES_CEILING }), meaning: "longest key in UTF-8 bytes" },
  { name: "SERVICE_MAX_BATCH_ITEMS", default: "1000", parse: p.integer({ min: 1, max: 100_000 }), meaning: "items or keys per batch call" },
  { name: "SERVICE_COMPRESSION_THRESHOLD", default: "0", parse: p.byteSize({ min: 0 }), meaning: "peer requests larger than this are gzipped, and peers gzip their answers over 1 KiB to this node's calls; 0 disables compression both ways and refuses gzip bodies from peers (400), so set it on every peer (a large value compresses little) before lowering it on any" },
  { name: "SERVICE_API_TLS_CERT", default: "", parse: p.text(), meaning: "PEM certificate of the client API; with the key, the API serves HTTPS" },
  { name: "SERVICE_API_TLS_KEY", default: "", parse: p.text(), meaning: "PEM private key of the client API" },
  { name: "SERVICE_API_TLS_CLIENT_CA", default: "", parse: p.text(), meaning: "PEM CA bundle; when set the client API requires and verifies client certificates (mTLS)" },
  { name: "SERVICE_MGMT_TLS_CERT", default: "", parse: p.text(), meaning: "PEM certificate of the management listener" },
  { name: "SERVICE_MGMT_TLS_KEY", default: "", parse: p.text(), meaning: "PEM private key of the management listener" },
  { name: "SERVICE_DIST_TLS_CERT", default: "", parse: p.text(), meaning: "PEM certificate of the peer transport (mutual TLS between nodes)" },
  { name: "SERVICE_DIST_TLS_KEY", default: "", parse: p.text(), meaning: "PEM private key of the peer transport" },
  { name: "SERVICE_DIST_TLS_CA", default: "", parse: p.text(), meaning: "PEM CA bundle every node uses to verify every peer" },
  { name: "SERVICE_AUTH_TOKEN", default: "", parse: p.bearerToken(), meaning: "shared bearer token: one identity with every scope, and the peer token", secret: true },
  { name: "SERVICE_AUTH_CONFIG", default: "", parse: p.text(), meaning: "path of the auth policy file (YAML or JSON)" },
  { name: "SERVICE_AUTH_FAIL_LIMIT", default: "10", parse: p.integer({ min: 0, max: 1_000_000 }), meaning: "failed authentications one client address (see SERVICE_AUTH_IPV6_PREFIX) may make per second on the client and management listeners; past it 429 with Retry-After (and no password check); 0 disables" },
  { name: "SERVICE_AUTH_IPV6_PREFIX", default: "128", parse: p.integer({ min: 1, max: 128 }), meaning: "prefix length by which IPv6 clients are counted for the failed-authentication limit, the password-check queues and anonymous rate limits: 128 counts each address (hosts of one cloud subnet share its /64); 64 suits a node that faces the internet, where one host holds a whole /64" },
  { name: "SERVICE_PEER_TOKEN", default: "", parse: p.bearerToken(), meaning: "bearer token of the peer transport; overrides SERVICE_AUTH_TOKEN there", secret: true },
  {
    name: "SERVICE_PEER_INSECURE",
    default: "false",
    parse: p.boolean(),
    meaning: "with no peer token and no peer mTLS, serve peer calls from any address (protected mode otherwise serves loopback callers only); logs a warning",
  },
  {
    name: "SERVICE_DRAIN_TIMEOUT",
    default: "60s",
    parse: D(0),
    meaning: "on SIGTERM, how long the node hands off its data before it stops anyway (exit code 3 when it was not safe to stop); progress is logged every 5 s",
  },
  {
    name: "SERVICE_READY_CATCHUP_TIMEOUT",
    default: "60s",
    parse: D(0),
    meaning: "/readyz waits for the start-up catch-up at most this long after start, then reports ready without it",
  },
  { name: "SERVICE_RATE_LIMIT", default: "0", parse: p.decimal({ min: 0, max: 1e9 }), meaning: "requests per second each identity may make on this node (a token bucket; anonymous callers per address); 0 turns rate limits off" },
  { name: "SERVICE_RATE_BURST", default: "", parse: p.decimal({ min: 1, max: 1e9 }), meaning: "bucket size of the rate limit (requests at once); empty means 2 x SERVICE_RATE_LIMIT (at least 1)" },
  {
    name: "SERVICE_RATE_LIMIT_SCOPE",
    default: "node",
    parse: p.oneOf(["node", "cluster"]),
    meaning: "node: each node allows the rate; cluster: each node allows the rate divided by the alive members, so the cluster as a whole allows about the rate",
  },
  { name: "SERVICE_OIDC_ISSUER", default: "", parse: p.text(), meaning: "OIDC issuer URL (keys from its discovery document)" },
  { name: "SERVICE_OIDC_AUDIENCE", default: "", parse: p.text(), meaning: "required aud claim; set together with the issuer" },
  { name: "SERVICE_OIDC_IDENTITY_CLAIM", default: "sub", parse: p.text({ nonEmpty: true }), meaning: "claim used as the identity id" },
  { name: "SERVICE_OIDC_SCOPE_CLAIM", default: "scope", parse: p.text({ nonEmpty: true }), meaning: "claim mapped to scopes (space-separated string or array)" },
] satisfies SettingSpec[]);
