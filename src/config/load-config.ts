// loadConfig(env): parses every SERVICE_* variable once, fills defaults, checks cross-field
// rules and returns a frozen Config. A bad value throws a SettingError naming the variable.
import { base64Length } from "../core/byte-string.js";
import { formatAddress, isUnspecifiedHost, type Address } from "../core/address.js";
import { defaultBaseUrl } from "../core/base-url.js";
import { isNodeId } from "../core/node-id.js";
import { EVICTION_SHARDS_MAX, STORE_SHARD_RECORDS_MAX } from "../core/limits.js";
import type { Config, ConsistencyLevel, EvictionAlgorithm, LogLevel, OidcConfig, RateLimitConfig, SettingView, TlsFiles } from "./config.js";
import { InvalidValue, SettingError, type Seed } from "./parsers.js";
import { SETTINGS } from "./settings.js";

export interface ConfigDefaults {
  /** Node id used when SERVICE_NODE_ID is unset (the host name in production). */
  readonly hostname: string;
  /**
   * Bytes of memory the process may use (its cgroup limit, else the machine's), which the
   * default of SERVICE_MAX_DATA_BYTES is a share of; absent, that default sets no byte limit.
   */
  readonly memoryBytes?: number;
}

/** The share of the process's memory the live keys and values may take by default. */
export const DATA_BYTES_MEMORY_SHARE = 0.4;

/**
 * SERVICE_MAX_DATA_BYTES, effective: as given (0: no limit; otherwise room for the largest key
 * and value), or a share of the process's memory. /config shows the effective value.
 */
function dataBudget(v: <T>(name: string) => T, views: SettingView[], defaults: ConfigDefaults, maxValueBytes: number): number {
  const given = v<number | undefined>("SERVICE_MAX_DATA_BYTES");
  const largest = maxValueBytes + v<number>("SERVICE_MAX_KEY_BYTES");
  if (given !== undefined) {
    if (given > 0 && given < largest) {
      throw new SettingError("SERVICE_MAX_DATA_BYTES", `must be 0 (no limit) or at least SERVICE_MAX_VALUE_BYTES + SERVICE_MAX_KEY_BYTES (${largest}); got ${given}`);
    }
    return given;
  }
  const derived = defaults.memoryBytes === undefined ? 0 : Math.max(largest, Math.floor(defaults.memoryBytes * DATA_BYTES_MEMORY_SHARE));
  showDerived(views, "SERVICE_MAX_DATA_BYTES", String(derived));
  return derived;
}

/** The share of the process's memory the client bodies and answers under way may take by default. */
export const INFLIGHT_BYTES_MEMORY_SHARE = 0.1;
/** SERVICE_MAX_INFLIGHT_BYTES when the process's memory is not known. */
const INFLIGHT_BYTES_UNKNOWN_MEMORY = 1024 * 1024 * 1024;

/**
 * SERVICE_MAX_INFLIGHT_BYTES, effective: as given (0: no limit; otherwise room for the largest
 * answer, a value or a batch get's values as base64 with room for the rest, so that one answer
 * alone always fits), or a share of the process's memory. /config shows the effective value.
 */
function inflightBudget(v: <T>(name: string) => T, views: SettingView[], defaults: ConfigDefaults, maxValueBytes: number, maxBodyBytes: number): number {
  const largest = base64Length(Math.max(maxValueBytes, maxBodyBytes)) + 1024 * 1024;
  const given = v<number | undefined>("SERVICE_MAX_INFLIGHT_BYTES");
  if (given !== undefined) {
    if (given > 0 && given < largest) {
      throw new SettingError("SERVICE_MAX_INFLIGHT_BYTES", `must be 0 (no limit) or at least the largest answer, SERVICE_MAX_VALUE_BYTES or SERVICE_MAX_BODY_BYTES as base64 plus 1 MiB (${largest}); got ${given}`);
    }
    return given;
  }
  const share = defaults.memoryBytes === undefined ? INFLIGHT_BYTES_UNKNOWN_MEMORY : Math.floor(defaults.memoryBytes * INFLIGHT_BYTES_MEMORY_SHARE);
  const effective = Math.max(largest, share);
  showDerived(views, "SERVICE_MAX_INFLIGHT_BYTES", String(effective));
  return effective;
}

/** Shows `value` in /config as the effective value of `name` when the setting was not given (its derived default). */
function showDerived(views: SettingView[], name: string, value: string): void {
  const i = views.findIndex((s) => s.name === name);
  const view = views[i];
  if (view !== undefined && view.value === "") views[i] = { ...view, value };
}

/**
 * The store's shard count: SERVICE_EVICTION_SHARDS, raised to one shard per
 * STORE_SHARD_RECORDS_MAX items of SERVICE_CAPACITY (at most EVICTION_SHARDS_MAX), so a shard's
 * page compaction stays short. /config shows the count in use.
 */
export function storeShards(configured: number, capacity: number, views: SettingView[]): number {
  const shards = Math.max(configured, Math.min(EVICTION_SHARDS_MAX, Math.ceil(capacity / STORE_SHARD_RECORDS_MAX)));
  const i = views.findIndex((s) => s.name === "SERVICE_EVICTION_SHARDS");
  const view = views[i];
  if (shards !== configured && view !== undefined) views[i] = { ...view, value: String(shards) };
  return shards;
}

const PREFIX = "SERVICE_";

/** Every setting parsed (undefined when empty), and how /config shows it. */
function parseSettings(env: Readonly<Record<string, string | undefined>>): { values: Map<string, unknown>; views: SettingView[]; unknownVariables: string[] } {
  const values = new Map<string, unknown>();
  const views: SettingView[] = [];
  for (const spec of SETTINGS) {
    const given = env[spec.name];
    const fromEnv = given !== undefined && given !== "";
    const raw = fromEnv ? given : spec.default;
    let value: unknown = undefined;
    if (raw !== "") {
      try {
        value = spec.parse(raw);
      } catch (err) {
        if (err instanceof InvalidValue) throw new SettingError(spec.name, err.message);
        throw err;
      }
    }
    values.set(spec.name, value);
    views.push({ name: spec.name, value: spec.secret && raw !== "" ? "[redacted]" : raw, source: fromEnv ? "env" : "default" });
  }
  const known = new Set(SETTINGS.map((s) => s.name));
  const unknownVariables = Object.keys(env).filter((k) => k.startsWith(PREFIX) && !known.has(k)).sort();
  return { values, views, unknownVariables };
}

/**
 * The values derived from others: the node id (the host name when unset) and the dead window
 * (6 x the heartbeat when unset). /config shows the effective values.
 */
function derivedValues(v: <T>(name: string) => T, views: SettingView[], defaults: ConfigDefaults): { nodeId: string; deadAfterMs: number } {
  const nodeId = v<string | undefined>("SERVICE_NODE_ID")?.trim() || defaults.hostname;
  if (!isNodeId(nodeId)) {
    throw new SettingError("SERVICE_NODE_ID", `node id ${JSON.stringify(nodeId)} must be 1 to 128 of letters, digits, ".", "_" and "-"`);
  }
  showDerived(views, "SERVICE_NODE_ID", nodeId);
  const deadAfterMs = v<number | undefined>("SERVICE_DEAD_AFTER") ?? 6 * v<number>("SERVICE_HEARTBEAT");
  showDerived(views, "SERVICE_DEAD_AFTER", `${deadAfterMs}ms`);
  return { nodeId, deadAfterMs };
}

/** Parses the environment into a frozen Config, or throws SettingError. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, defaults: ConfigDefaults): Config {
  const { values, views, unknownVariables } = parseSettings(env);
  const v = <T>(name: string): T => values.get(name) as T;
  const opt = (name: string): string | undefined => v<string | undefined>(name);

  const { nodeId, deadAfterMs } = derivedValues(v, views, defaults);
  const heartbeatIntervalMs = v<number>("SERVICE_HEARTBEAT");
  const maxValueBytes = v<number>("SERVICE_MAX_VALUE_BYTES");
  const maxBodyBytes = v<number>("SERVICE_MAX_BODY_BYTES");

  const apiTls = tlsFiles(opt, "SERVICE_API_TLS_CERT", "SERVICE_API_TLS_KEY", "SERVICE_API_TLS_CLIENT_CA");
  const mgmtTls = tlsFiles(opt, "SERVICE_MGMT_TLS_CERT", "SERVICE_MGMT_TLS_KEY", undefined);
  const advertise = advertisedUrls(opt, views, v<Address>("SERVICE_DIST_ADDR"), { api: v<Address>("SERVICE_API_ADDR"), mgmt: v<Address>("SERVICE_MGMT_ADDR") }, { api: apiTls !== undefined, mgmt: mgmtTls !== undefined });

  const config: Config = {
    nodeId,
    apiAddr: v<Address>("SERVICE_API_ADDR"),
    mgmtAddr: v<Address>("SERVICE_MGMT_ADDR"),
    distAddr: v<Address>("SERVICE_DIST_ADDR"),
    apiAdvertiseUrl: advertise.api,
    mgmtAdvertiseUrl: advertise.mgmt,
    allowedHosts: v<readonly string[] | undefined>("SERVICE_ALLOWED_HOSTS") ?? [],
    dashboardEnabled: v<"on" | "off">("SERVICE_DASHBOARD") === "on",
    seeds: Object.freeze((v<readonly Seed[] | undefined>("SERVICE_SEEDS") ?? []).filter((s) => s.id !== nodeId)),
    replication: v<number>("SERVICE_REPLICATION"),
    capacity: v<number>("SERVICE_CAPACITY"),
    tlsReloadIntervalMs: v<number>("SERVICE_TLS_RELOAD_INTERVAL"),
    maxDataBytes: dataBudget(v, views, defaults, maxValueBytes),
    maxInflightBytes: inflightBudget(v, views, defaults, maxValueBytes, maxBodyBytes),
    logLevel: v<LogLevel>("SERVICE_LOG_LEVEL"),
    heartbeatIntervalMs,
    indirectProbeK: v<number>("SERVICE_INDIRECT_PROBE_K"),
    deadAfterMs,
    gossipIntervalMs: v<number>("SERVICE_GOSSIP_INTERVAL"),
    hintTtlMs: v<number>("SERVICE_HINT_TTL"),
    hintReplayMs: v<number>("SERVICE_HINT_REPLAY"),
    hintMaxPerNode: v<number>("SERVICE_HINT_MAX_PER_NODE"),
    hintMaxBytes: v<number>("SERVICE_HINT_MAX_BYTES"),
    rebalanceIntervalMs: v<number>("SERVICE_REBALANCE_INTERVAL"),
    rebalanceBatchSize: v<number>("SERVICE_REBALANCE_BATCH_SIZE"),
    rebalanceMaxConcurrent: v<number>("SERVICE_REBALANCE_MAX_CONCURRENT"),
    removalGraceMs: v<number>("SERVICE_REMOVAL_GRACE"),
    autoSyncIntervalMs: v<number>("SERVICE_AUTO_SYNC_INTERVAL"),
    autoSyncMaxFactor: v<number>("SERVICE_AUTO_SYNC_MAX_FACTOR"),
    merkleChunkSize: v<number>("SERVICE_MERKLE_CHUNK_SIZE"),
    readRepairBatchSize: v<number>("SERVICE_READ_REPAIR_BATCH_SIZE"),
    readRepairIntervalMs: v<number>("SERVICE_READ_REPAIR_INTERVAL"),
    writeConsistency: v<ConsistencyLevel>("SERVICE_WRITE_CONSISTENCY"),
    readConsistency: v<ConsistencyLevel>("SERVICE_READ_CONSISTENCY"),
    tombstoneTtlMs: v<number>("SERVICE_TOMBSTONE_TTL"),
    tombstoneBytesMax: v<number>("SERVICE_TOMBSTONE_MAX_BYTES"),
    evictionAlgorithm: v<EvictionAlgorithm>("SERVICE_EVICTION_ALGORITHM"),
    evictionShards: storeShards(v<number>("SERVICE_EVICTION_SHARDS"), v<number>("SERVICE_CAPACITY"), views),
    evictionIntervalMs: v<number>("SERVICE_EVICTION_INTERVAL"),
    expirationIntervalMs: v<number>("SERVICE_EXPIRATION_INTERVAL"),
    maxValueBytes,
    maxBodyBytes,
    maxKeyBytes: v<number>("SERVICE_MAX_KEY_BYTES"),
    maxBatchItems: v<number>("SERVICE_MAX_BATCH_ITEMS"),
    compressionThresholdBytes: v<number>("SERVICE_COMPRESSION_THRESHOLD"),
    apiTls,
    mgmtTls,
    distTls: tlsFiles(opt, "SERVICE_DIST_TLS_CERT", "SERVICE_DIST_TLS_KEY", "SERVICE_DIST_TLS_CA", true),
    authToken: opt("SERVICE_AUTH_TOKEN"),
    authConfigPath: opt("SERVICE_AUTH_CONFIG"),
    authFailLimitPerS: v<number>("SERVICE_AUTH_FAIL_LIMIT"),
    authIpv6PrefixBits: v<number>("SERVICE_AUTH_IPV6_PREFIX"),
    drainTimeoutMs: v<number>("SERVICE_DRAIN_TIMEOUT"),
    readyCatchupTimeoutMs: v<number>("SERVICE_READY_CATCHUP_TIMEOUT"),
    rateLimit: rateLimitConfig(v, views),
    peerToken: opt("SERVICE_PEER_TOKEN") ?? opt("SERVICE_AUTH_TOKEN"),
    peerInsecure: v<boolean>("SERVICE_PEER_INSECURE"),
    oidc: oidcConfig(opt),
    settings: Object.freeze(views.map((s) => Object.freeze(s))),
    unknownVariables: Object.freeze(unknownVariables),
  };
  checkCombinations(config);
  return Object.freeze(config);
}

/** The rules across settings: distinct listeners, an address peers can dial, hints that do not outlive tombstones. */
function checkCombinations(config: Config): void {
  checkListeners(config);
  checkAdvertisedAddress(config);
  checkHintTtl(config);
}

/**
 * A hint must not outlive the tombstones of a later delete: replayed after they were compacted,
 * it would bring the deleted key back. The tombstones live SERVICE_TOMBSTONE_TTL from when they
 * arrived, no earlier than the write a hint carries was queued; a hint a draining node hands off
 * starts its TTL again on the receiver, so a hint lives up to two TTLs (and the drain): at most
 * half SERVICE_TOMBSTONE_TTL each.
 */
function checkHintTtl(c: Config): void {
  const max = Math.floor(c.tombstoneTtlMs / 2);
  if (c.hintTtlMs <= max) return;
  throw new SettingError(
    "SERVICE_HINT_TTL",
    `must be at most half of SERVICE_TOMBSTONE_TTL (${c.tombstoneTtlMs} ms), ${max} ms: a hint replayed after the tombstones of a later delete were compacted would bring the key back; got ${c.hintTtlMs} ms`,
  );
}

/**
 * The advertised client and management base URLs: as set, or the listener's scheme (https with
 * TLS), the dist host (the address peers dial) and the listener's port. With an unspecified dist
 * host (or an ephemeral port) there is nothing to advertise, so no default. /config shows the
 * effective values.
 */
function advertisedUrls(
  opt: (n: string) => string | undefined,
  views: SettingView[],
  dist: Address,
  listeners: { api: Address; mgmt: Address },
  tls: { api: boolean; mgmt: boolean },
): { api: string | undefined; mgmt: string | undefined } {
  const hostKnown = !isUnspecifiedHost(dist.host);
  const pick = (name: string, listener: Address, withTls: boolean): string | undefined => {
    const url = opt(name) ?? (hostKnown && listener.port !== 0 ? defaultBaseUrl(withTls, dist.host, listener.port) : undefined);
    if (url) showDerived(views, name, url);
    return url;
  };
  return { api: pick("SERVICE_API_ADVERTISE_URL", listeners.api, tls.api), mgmt: pick("SERVICE_MGMT_ADVERTISE_URL", listeners.mgmt, tls.mgmt) };
}

/** A listener's TLS files; `caRequired` makes the CA mandatory with the certificate (mutual TLS). */
function tlsFiles(opt: (n: string) => string | undefined, certVar: string, keyVar: string, caVar: string | undefined, caRequired = false): TlsFiles | undefined {
  const certFile = opt(certVar);
  const keyFile = opt(keyVar);
  const caFile = caVar ? opt(caVar) : undefined;
  if (certFile && !keyFile) throw new SettingError(keyVar, `must be set together with ${certVar}`);
  if (keyFile && !certFile) throw new SettingError(certVar, `must be set together with ${keyVar}`);
  if (caFile && !certFile) throw new SettingError(caVar as string, `needs ${certVar} and ${keyVar}: client certificates are only verified over TLS`);
  if (certFile && caRequired && caVar && !caFile) throw new SettingError(caVar, `must be set together with ${certVar}: every node verifies every peer (mutual TLS)`);
  return certFile && keyFile ? Object.freeze({ certFile, keyFile, caFile }) : undefined;
}

/** The rate limit settings: off at 0; the burst defaults to twice the rate (at least 1). */
function rateLimitConfig(v: <T>(name: string) => T, views: SettingView[]): RateLimitConfig | undefined {
  const ratePerS = v<number>("SERVICE_RATE_LIMIT");
  if (ratePerS <= 0) return undefined;
  const burst = v<number | undefined>("SERVICE_RATE_BURST") ?? Math.max(1, 2 * ratePerS);
  showDerived(views, "SERVICE_RATE_BURST", String(burst));
  return Object.freeze({ ratePerS, burst, scope: v<"node" | "cluster">("SERVICE_RATE_LIMIT_SCOPE") });
}

function oidcConfig(opt: (n: string) => string | undefined): OidcConfig | undefined {
  const issuer = opt("SERVICE_OIDC_ISSUER");
  const audience = opt("SERVICE_OIDC_AUDIENCE");
  if (issuer && !audience) throw new SettingError("SERVICE_OIDC_AUDIENCE", "must be set together with SERVICE_OIDC_ISSUER");
  if (audience && !issuer) throw new SettingError("SERVICE_OIDC_ISSUER", "must be set together with SERVICE_OIDC_AUDIENCE");
  if (!issuer || !audience) return undefined;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new SettingError("SERVICE_OIDC_ISSUER", `expected an http(s) URL, got ${JSON.stringify(issuer)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new SettingError("SERVICE_OIDC_ISSUER", `expected an http(s) URL, got ${JSON.stringify(issuer)}`);
  }
  return Object.freeze({
    issuer,
    audience,
    identityClaim: opt("SERVICE_OIDC_IDENTITY_CLAIM") ?? "sub",
    scopeClaim: opt("SERVICE_OIDC_SCOPE_CLAIM") ?? "scope",
  });
}

/**
 * SERVICE_DIST_ADDR is also the address peers dial. With seeds to join, an unspecified host
 * (":7946", "0.0.0.0:7946", "[::]:7946") would be gossiped to peers that then cannot reach this
 * node (or dial themselves). A cluster of one keeps the default; peers that join it keep the
 * address they reached it at.
 */
function checkAdvertisedAddress(c: Config): void {
  if (c.seeds.length === 0) return;
  if (c.distAddr.port === 0) {
    // Port 0 binds a port the system picks; peers would be told to dial port 0 (a review's node
    // stayed suspect to every peer, reported ready, and refused every QUORUM write).
    throw new SettingError("SERVICE_DIST_ADDR", `${JSON.stringify(formatAddress(c.distAddr))} has port 0, but with SERVICE_SEEDS set this address is advertised to peers, which dial it: give the port, such as ${formatAddress({ ...c.distAddr, port: 7946 })}`);
  }
  if (!isUnspecifiedHost(c.distAddr.host)) return;
  throw new SettingError(
    "SERVICE_DIST_ADDR",
    `${JSON.stringify(formatAddress(c.distAddr))} has no host, but with SERVICE_SEEDS set this address is advertised to peers, which dial it: give a host name or IP they can reach, such as 10.0.0.5:${c.distAddr.port}`,
  );
}

/**
 * Two of the node's listeners on one explicit port are refused whatever their hosts: a wildcard
 * host (`:8080`, the default form) takes the port on every address, so only listeners on distinct
 * explicit addresses (127.0.0.1:8080 and 127.0.0.2:8080) could share one, which is a mistake far
 * more often than a choice.
 */
function checkListeners(c: Config): void {
  const seen = new Map<string, string>();
  for (const [name, a] of [["SERVICE_API_ADDR", c.apiAddr], ["SERVICE_MGMT_ADDR", c.mgmtAddr], ["SERVICE_DIST_ADDR", c.distAddr]] as const) {
    if (a.port === 0) continue;
    const key = `${a.port}`;
    const other = seen.get(key);
    if (other) throw new SettingError(name, `port ${a.port} is already used by ${other}`);
    seen.set(key, name);
  }
}
