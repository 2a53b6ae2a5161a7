// The typed configuration of one node. Field names carry their units.
import type { Address } from "../core/address.js";
import type { Seed } from "./parsers.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type ConsistencyLevel = "one" | "quorum" | "all";
export type EvictionAlgorithm = "lru" | "lfu" | "cawolfu";

/** A PEM certificate and key pair, optionally with a CA bundle for verifying the other side. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string | undefined;
}

export interface OidcConfig {
  readonly issuer: string;
  readonly audience: string;
  readonly identityClaim: string;
  readonly scopeClaim: string;
}

/** One setting as /config shows it. */
export interface SettingView {
  readonly name: string;
  readonly value: string;
  readonly source: "env" | "default";
}

/** SERVICE_RATE_LIMIT, SERVICE_RATE_BURST and SERVICE_RATE_LIMIT_SCOPE. */
export interface RateLimitConfig {
  /** Requests per second per identity. */
  readonly ratePerS: number;
  /** Bucket size (requests at once). */
  readonly burst: number;
  /** "cluster" divides the rate by the alive members. */
  readonly scope: "node" | "cluster";
}

export interface Config {
  readonly nodeId: string;
  readonly apiAddr: Address;
  readonly mgmtAddr: Address;
  readonly distAddr: Address;
  /**
   * Base URLs advertised to clients (GET /v1/cluster/endpoints, gossiped to peers). Undefined when
   * neither set nor derivable: the dist host is unspecified (a cluster of one on ":7946").
   */
  readonly apiAdvertiseUrl: string | undefined;
  readonly mgmtAdvertiseUrl: string | undefined;
  /** SERVICE_ALLOWED_HOSTS: names browser requests without a credential may be sent to (rebinding-guard.ts). */
  readonly allowedHosts: readonly string[];
  /** SERVICE_DASHBOARD: the web dashboard is served on the management listener. */
  readonly dashboardEnabled: boolean;
  readonly seeds: readonly Seed[];
  readonly replication: number;
  readonly capacity: number;
  /** SERVICE_TLS_RELOAD_INTERVAL; 0: TLS files are read at start only. */
  readonly tlsReloadIntervalMs: number;
  /** SERVICE_MAX_DATA_BYTES, effective (the derived default filled in); 0: no byte limit. */
  readonly maxDataBytes: number;
  readonly logLevel: LogLevel;

  readonly heartbeatIntervalMs: number;
  readonly indirectProbeK: number;
  readonly deadAfterMs: number;
  readonly gossipIntervalMs: number;

  readonly hintTtlMs: number;
  readonly hintReplayMs: number;
  readonly hintMaxPerNode: number;
  readonly hintMaxBytes: number;

  readonly rebalanceIntervalMs: number;
  readonly rebalanceBatchSize: number;
  readonly rebalanceMaxConcurrent: number;
  readonly removalGraceMs: number;

  readonly autoSyncIntervalMs: number;
  readonly autoSyncMaxFactor: number;
  readonly merkleChunkSize: number;

  readonly readRepairBatchSize: number;
  readonly readRepairIntervalMs: number;

  readonly writeConsistency: ConsistencyLevel;
  readonly readConsistency: ConsistencyLevel;
  readonly tombstoneTtlMs: number;
  /** SERVICE_TOMBSTONE_MAX_BYTES: the tombstone byte budget. */
  readonly tombstoneBytesMax: number;

  readonly evictionAlgorithm: EvictionAlgorithm;
  readonly evictionShards: number;
  readonly evictionIntervalMs: number;
  readonly expirationIntervalMs: number;

  readonly maxValueBytes: number;
  readonly maxBodyBytes: number;
  /** SERVICE_MAX_INFLIGHT_BYTES, effective (the derived default filled in); 0: no limit. */
  readonly maxInflightBytes: number;
  readonly maxKeyBytes: number;
  readonly maxBatchItems: number;

  readonly compressionThresholdBytes: number;

  readonly apiTls: TlsFiles | undefined;
  readonly mgmtTls: TlsFiles | undefined;
  readonly distTls: TlsFiles | undefined;

  readonly authToken: string | undefined;
  readonly authConfigPath: string | undefined;
  /** Failed authentications per client address per second before 429 (SERVICE_AUTH_FAIL_LIMIT); 0 = no limit. */
  readonly authFailLimitPerS: number;
  /** SERVICE_AUTH_IPV6_PREFIX: IPv6 clients are counted by this prefix (128: each address). */
  readonly authIpv6PrefixBits: number;
  /** SIGTERM: longest hand-off before the node stops anyway (exit 3), ms. */
  readonly drainTimeoutMs: number;
  /** /readyz stops waiting for the start-up catch-up this long after start, ms. */
  readonly readyCatchupTimeoutMs: number;
  /** Rate limits per identity; undefined when off (SERVICE_RATE_LIMIT=0). */
  readonly rateLimit: RateLimitConfig | undefined;
  /** Token of the peer transport: SERVICE_PEER_TOKEN, else SERVICE_AUTH_TOKEN. */
  readonly peerToken: string | undefined;
  /** SERVICE_PEER_INSECURE: no protected mode without a peer credential. */
  readonly peerInsecure: boolean;
  readonly oidc: OidcConfig | undefined;

  /** Every setting with its effective value and source, secrets redacted (for /config). */
  readonly settings: readonly SettingView[];
  /** SERVICE_* variables that name no setting (logged as a warning at start-up). */
  readonly unknownVariables: readonly string[];
}
