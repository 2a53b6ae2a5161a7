// The hypercache-server process once its entry (main.ts) caught the stop signals: reads SERVICE_*
// from the environment, builds the node, binds the three listeners, handles SIGTERM/SIGINT,
// exits. Nothing else reads the environment or binds ports.
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { Server as TlsServer } from "node:tls";
import { hostname, totalmem } from "node:os";
import { join } from "node:path";
import type net from "node:net";
import { formatAddress, type Address } from "./core/address.js";
import { systemClock, systemTimers } from "./core/clock.js";
import {
  API_CONNECTIONS_MAX,
  API_REQUEST_TIMEOUT_MS,
  API_SHUTDOWN_GRACE_MS,
  API_STALL_TIMEOUT_MS,
  HTTP_HEADER_BYTES_MAX,
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_IDLE_TIMEOUT_MS,
  MGMT_CONNECTIONS_MAX,
  MGMT_IDLE_TIMEOUT_MS,
  PEER_TOKEN_CHARS_ADVISED,
  SHUTDOWN_LIMITS,
  VIRTUAL_NODES,
} from "./core/limits.js";
import { withTimeout } from "./core/timeout.js";
import { packageRoot } from "./core/package-root.js";
import { systemRandom } from "./core/random.js";
import { hashSeedFrom } from "./core/keyed-hash.js";
import { checkPeerCredential, fileStamps, loadConfig, readTlsMaterial, SettingError, TlsMaterialError, TlsReloader, type Config, type TlsCheck, type TlsFiles, type TlsMaterial } from "./config/index.js";
import { createAuthenticator, OidcSetupError, PolicyFileError, type Authenticator } from "./auth/index.js";
import { createLogger, LOG, type Logger } from "./log/index.js";
import type { CapOutcome } from "./http/connection-slots.js";
import { ClientCaRenewal } from "./http/client-ca-renewal.js";
import { createListenerServer, type ListenerServer } from "./http/listener-server.js";
import { hostAllowListOf, readDashboardAssets, rebindingGuard } from "./http/index.js";
import type { Metrics, OtlpExporterFactory } from "./observability/index.js";
import { createPeerServer, createSecurePeerServer, livePeerTls, peerTlsOptions, type LivePeerTls, type PeerServer, type PeerTlsOptions } from "./peer/index.js";
import { progressFields } from "./cluster/index.js";
import { createNode, type HypercacheNode } from "./node.js";
import type { BootSignals } from "./boot-signals.js";

/** The memory this process may use: its cgroup's limit when there is one, else the machine's. */
function processMemoryBytes(): number {
  const limit = process.constrainedMemory?.() ?? 0;
  return limit > 0 && limit < totalmem() ? limit : totalmem();
}

function readConfig(): Config {
  try {
    return loadConfig(process.env, { hostname: hostname(), memoryBytes: processMemoryBytes() });
  } catch (err) {
    if (err instanceof SettingError) {
      process.stderr.write(`hypercache-server: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** Stops accepting, lets in-flight requests finish for up to `graceMs`, then cuts the rest. */
function closeGracefully(server: ListenerServer, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idle = systemTimers.every(100, () => server.closeIdleConnections());
    const deadline = systemTimers.after(graceMs, () => server.closeAllConnections());
    server.close(() => {
      idle.cancel();
      deadline.cancel();
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** The OTLP/HTTP metric exporter, loaded only when an endpoint is configured. */
async function loadOtlpExporter(endpoint: string | undefined): Promise<OtlpExporterFactory | undefined> {
  if (!endpoint) return undefined;
  const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-http");
  return (url) => new OTLPMetricExporter({ url });
}

/** A positive number from a standard (non SERVICE_) variable, or undefined. */
function positiveNumber(raw: string | undefined): number | undefined {
  const n = Number(raw);
  return raw !== undefined && raw !== "" && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Counts what a listener's connection cap closed, as dist.connections.<listener>.<outcome>. */
function capCounter(metrics: Metrics, listener: "client" | "management" | "peer"): (outcome: CapOutcome) => void {
  return (outcome) => metrics.inc(`dist.connections.${listener}.${outcome}`);
}

function listen(server: net.Server, addr: Address): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen({ port: addr.port, host: addr.host === "" ? undefined : addr.host }, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

/** Logs one error record, lets the logger flush it, and exits with `code`. */
async function exitWith(logger: Logger, code: number, message: string, fields: Record<string, unknown>): Promise<never> {
  logger.error(message, fields);
  await new Promise<void>((resolve) => systemTimers.defer(resolve));
  process.exit(code);
}

/**
 * The authentication chain, browsers held to the node's names without a credential (DNS
 * rebinding), or exit: code 2 for a missing or invalid policy file (a configuration error), code 1
 * when the OIDC issuer cannot be used at boot. Never an open API instead.
 */
async function buildAuthenticator(config: Config, logger: Logger): Promise<Authenticator> {
  try {
    return rebindingGuard(await createAuthenticator(config, { clock: systemClock }), hostAllowListOf(config));
  } catch (err) {
    if (err instanceof PolicyFileError) return exitWith(logger, 2, LOG.authPolicyInvalid, { path: config.authConfigPath, error: err.message });
    if (err instanceof OidcSetupError) return exitWith(logger, 1, LOG.oidcConstructionFailed, { issuer: config.oidc?.issuer, error: err.message });
    throw err;
  }
}

interface ListenerTls {
  readonly api: TlsMaterial | undefined;
  readonly mgmt: TlsMaterial | undefined;
  readonly dist: PeerTlsOptions | undefined;
}

/** The TLS files of the three listeners, read and checked, or exit 2 naming the variable. */
async function readListenerTls(config: Config, logger: Logger): Promise<ListenerTls> {
  try {
    const tls = {
      api: config.apiTls && readTlsMaterial(config.apiTls, "api", systemClock.nowMs()),
      mgmt: config.mgmtTls && readTlsMaterial(config.mgmtTls, "mgmt", systemClock.nowMs()),
      dist: peerTlsOptions(config.distTls, systemClock.nowMs()),
    };
    checkPeerCredential(config.peerToken, tls.api?.ca, tls.dist?.ca);
    return tls;
  } catch (err) {
    if (err instanceof TlsMaterialError) return exitWith(logger, 2, LOG.tlsInvalid, { error: err.message });
    throw err;
  }
}

/** The node's start-up record, with the addresses and sizes it runs with. */
function logStarting(config: Config, logger: Logger): void {
  logger.info(LOG.starting, {
    api_addr: formatAddress(config.apiAddr),
    mgmt_addr: formatAddress(config.mgmtAddr),
    dist_addr: formatAddress(config.distAddr),
    oidc_enabled: config.oidc !== undefined,
    virtual_nodes: VIRTUAL_NODES,
    replication: config.replication,
    capacity: config.capacity,
  });
  for (const name of config.unknownVariables) logger.warn(LOG.unknownSetting, { variable: name });
  if (!config.authToken && !config.authConfigPath && !config.oidc) logger.warn(LOG.authOpen);
}

interface Listeners {
  readonly api: ListenerServer;
  /** With mutual TLS on the client API: applies a reloaded set, ending the connections of a replaced CA. */
  readonly apiRenewal: ClientCaRenewal | undefined;
  readonly mgmt: ListenerServer;
  readonly peer: PeerServer;
}

/**
 * Looks at the listeners' TLS files every SERVICE_TLS_RELOAD_INTERVAL and puts a changed, checked
 * set in use for new connections (tls-reload.ts): the servers' secure contexts, and the peer
 * client's options for its next sessions.
 */
/** The files of a listener's TLS set. */
const tlsFilesOf = (f: TlsFiles) => [f.certFile, f.keyFile, ...(f.caFile ? [f.caFile] : [])];

/** The stamps of every listener's TLS files, taken before they are read: a change in between is seen by the first look. */
async function tlsBaselines(config: Config): Promise<Partial<Record<"api" | "mgmt" | "dist", string>>> {
  const stampOf = (f: TlsFiles | undefined) => (f === undefined ? undefined : fileStamps(tlsFilesOf(f), (p) => stat(p)));
  const [api, mgmt, dist] = await Promise.all([stampOf(config.apiTls), stampOf(config.mgmtTls), stampOf(config.distTls)]);
  return { api, mgmt, dist };
}

async function watchTls(config: Config, listeners: Listeners, livePeer: LivePeerTls | undefined, logger: Logger, baselines: Partial<Record<"api" | "mgmt" | "dist", string>>): Promise<readonly TlsCheck[]> {
  if (config.tlsReloadIntervalMs === 0) return [];
  const all: TlsCheck[] = [];
  const deps = { timers: systemTimers, intervalMs: config.tlsReloadIntervalMs, stamp: (p: string) => stat(p), logger };
  const started: Promise<void>[] = [];
  // The client and peer CAs are checked against each other: a set refused because of the other
  // listener's CA is read again once that one changes.
  const reloaders: Partial<Record<"api" | "dist", { retryRefused(): void }>> = {};
  for (const [listener, files, server] of [["api", config.apiTls, listeners.api], ["mgmt", config.mgmtTls, listeners.mgmt]] as const) {
    if (files === undefined || !(server instanceof TlsServer)) continue;
    const renewal = listener === "api" ? listeners.apiRenewal : undefined;
    const apply = (m: TlsMaterial) => {
      if (renewal === undefined) return server.setSecureContext(m);
      renewal.apply(m);
      reloaders.dist?.retryRefused();
    };
    // The boot check holds for a reloaded set too, against the peer CA in use.
    const load = () => {
      const m = readTlsMaterial(files, listener, systemClock.nowMs());
      if (listener === "api") checkPeerCredential(config.peerToken, m.ca, livePeer?.options.ca);
      return m;
    };
    const reloader = new TlsReloader(listener, tlsFilesOf(files), load, apply, deps);
    all.push(reloader);
    if (listener === "api") reloaders.api = reloader;
    started.push(reloader.start(baselines[listener]));
  }
  const peerServer = listeners.peer.server;
  if (config.distTls !== undefined && livePeer !== undefined && peerServer instanceof TlsServer) {
    const apply = (m: PeerTlsOptions) => {
      peerServer.setSecureContext(m);
      livePeer.replace(m);
      reloaders.api?.retryRefused();
    };
    // A changed CA: the sessions peers opened under the old one get GOAWAY (the client's own are renewed by the transport).
    livePeer.onTrustChange(() => listeners.peer.renewTrust?.());
    const load = () => {
      const m = peerTlsOptions(config.distTls, systemClock.nowMs()) as PeerTlsOptions;
      checkPeerCredential(config.peerToken, listeners.apiRenewal?.ca, m.ca);
      return m;
    };
    const reloader = new TlsReloader("dist", tlsFilesOf(config.distTls), load, apply, deps);
    reloaders.dist = reloader;
    all.push(reloader);
    started.push(reloader.start(baselines.dist));
  }
  await Promise.all(started);
  return all;
}

/**
 * Binds the dist listener, starts the node's loops, then binds the management and client
 * listeners. A bind failure stops what was started and exits 1 with an error record.
 */
async function startListeners(config: Config, node: HypercacheNode, tls: ListenerTls, logger: Logger): Promise<Listeners> {
  const fail = async (message: string, fields: Record<string, unknown>): Promise<never> => {
    logger.error(message, fields);
    await node.stop();
    process.exit(1);
  };
  const peerLimits = { onCapped: capCounter(node.metrics, "peer") };
  const peer = tls.dist ? createSecurePeerServer(node.peerHandler, tls.dist, node.peerTrust, peerLimits) : createPeerServer(node.peerHandler, node.peerTrust, peerLimits);
  try {
    await listen(peer.server, config.distAddr);
  } catch (err) {
    return fail(LOG.distListenerBindFailed, { dist_addr: formatAddress(config.distAddr), error: String(err) });
  }
  logger.info(LOG.distListenerStarted, { dist_addr: formatAddress(config.distAddr) });
  node.start();

  // Management: 60 s idle timeout, no request timeout (the SSE stream stays open); an answer whose
  // client stops reading it (an SSE subscriber too) is dropped after 30-60 s without progress.
  const mgmt = createListenerServer(
    node.managementApp.callback(),
    { keepAliveTimeout: MGMT_IDLE_TIMEOUT_MS, headersTimeout: HTTP_HEADERS_TIMEOUT_MS, requestTimeout: 0, maxHeaderSize: HTTP_HEADER_BYTES_MAX },
    tls.mgmt,
    { maxConnections: MGMT_CONNECTIONS_MAX, stallTimeoutMs: API_STALL_TIMEOUT_MS, onCapped: capCounter(node.metrics, "management") },
  );
  try {
    await listen(mgmt, config.mgmtAddr);
  } catch (err) {
    await peer.close();
    return fail(LOG.listenerBindFailed, { listener: "management", mgmt_addr: formatAddress(config.mgmtAddr), error: String(err) });
  }
  logger.info(LOG.mgmtListening, { mgmt_addr: formatAddress(config.mgmtAddr) });

  // With SERVICE_API_TLS_CERT/KEY: HTTPS; with SERVICE_API_TLS_CLIENT_CA also mutual TLS.
  const apiRenewal = tls.api?.ca !== undefined ? new ClientCaRenewal(tls.api.ca) : undefined;
  const api = createListenerServer(
    node.clientHandler,
    { keepAliveTimeout: HTTP_IDLE_TIMEOUT_MS, headersTimeout: HTTP_HEADERS_TIMEOUT_MS, requestTimeout: API_REQUEST_TIMEOUT_MS, maxHeaderSize: HTTP_HEADER_BYTES_MAX },
    tls.api,
    { maxConnections: API_CONNECTIONS_MAX, stallTimeoutMs: API_STALL_TIMEOUT_MS, onCapped: capCounter(node.metrics, "client") },
    apiRenewal,
  );
  try {
    await listen(api, config.apiAddr);
  } catch (err) {
    mgmt.close();
    await peer.close();
    return fail(LOG.listenerBindFailed, { listener: "client", api_addr: formatAddress(config.apiAddr), error: String(err) });
  }
  logger.info(LOG.apiListening, { api_addr: formatAddress(config.apiAddr) });
  node.markBound();
  return { api, apiRenewal, mgmt, peer };
}

/**
 * SIGTERM and SIGINT stop the node: it drains and hands its data off until it is safe to stop or
 * SERVICE_DRAIN_TIMEOUT passes, announces that it left (when safe), then shuts down as SPEC.md
 * describes. Exit 0 when it was safe to stop, 3 when the drain timed out; a second signal exits
 * 130 at once.
 */
function installShutdown(node: HypercacheNode, listeners: Listeners, auth: Authenticator, logger: Logger, boot: BootSignals): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn(LOG.secondSignal, { signal });
      process.exit(130);
    }
    stopping = true;
    logger.info(LOG.shutdownSignal, { signal });
    // 1. Drain: writes are refused from now on, reads keep serving; the node hands its hints and
    //    keys off until safe to stop (or the drain timeout), then gossips that it left.
    const departure = await node.depart(`signal ${signal}`);
    // 2. The client listener stops accepting; in-flight requests get up to 30 s.
    await closeGracefully(listeners.api, API_SHUTDOWN_GRACE_MS);
    // 3. Stop the cache: background loops, queued work, then the management and dist listeners.
    await withTimeout(systemTimers, SHUTDOWN_LIMITS.stopMaxMs, node.stop(), "stop").catch(() => logger.warn(LOG.stopTimedOut, { after_ms: SHUTDOWN_LIMITS.stopMaxMs }));
    listeners.mgmt.close();
    listeners.mgmt.closeAllConnections();
    await listeners.peer.close();
    // 4. The bcrypt workers of HTTP Basic.
    await auth.close();
    const code = departure.safe ? 0 : 3;
    if (departure.safe) logger.info(LOG.stoppedCleanly, { signal });
    else logger.error(LOG.stoppedDrainTimedOut, { signal, exit_code: code, ...progressFields(departure.status) });
    process.exitCode = code;
    // Let the logger flush its last record before the process ends.
    systemTimers.defer(() => process.exit(code));
  };
  const heldSignal = boot.handOver(() => {
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
  });
  if (heldSignal !== undefined) void shutdown(heldSignal);
}

/** Runs the node; `boot` holds the stop signals since the process started (main.ts). */
export async function runServer(boot: BootSignals): Promise<void> {
  const config = readConfig();
  const logger: Logger = createLogger({ nodeId: config.nodeId, level: config.logLevel });
  boot.exitWith((signal, code) => {
    if (code === 0) {
      logger.info(LOG.shutdownSignal, { signal, booting: true });
      logger.info(LOG.stoppedCleanly, { signal });
    } else {
      logger.warn(LOG.secondSignal, { signal, booting: true });
    }
    systemTimers.defer(() => process.exit(code));
  });
  // SIGHUP (a closed terminal, or an operator who expects a reload) ended the node with no drain
  // and no record (exit 129). It now looks at the TLS files at once and the node runs on.
  let tlsReloaders: readonly TlsCheck[] = [];
  process.on("SIGHUP", () => {
    logger.info(LOG.hangup, { tls_reloaders: tlsReloaders.length });
    for (const r of tlsReloaders) void r.check();
  });
  const root = packageRoot(import.meta.url);
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  const documents = {
    client: readFileSync(join(root, "openapi", "client.yaml"), "utf8"),
    management: readFileSync(join(root, "openapi", "management.yaml"), "utf8"),
    dashboard: config.dashboardEnabled ? readDashboardAssets(join(root, "dist", "dashboard")) : undefined,
  };
  if (config.dashboardEnabled && documents.dashboard === undefined) logger.warn(LOG.dashboardMissing, { dir: join(root, "dist", "dashboard") });
  logStarting(config, logger);
  const auth = await buildAuthenticator(config, logger);
  if (auth.enabled) logger.info(LOG.authEnabled, { methods: auth.methods });
  if (auth.enabled && !config.peerToken) logger.warn(LOG.peerTokenMissing);
  if (config.peerToken && config.peerToken.length < PEER_TOKEN_CHARS_ADVISED) {
    logger.warn(LOG.peerTokenShort, { chars: config.peerToken.length, advised_min_chars: PEER_TOKEN_CHARS_ADVISED, hint: "openssl rand -hex 32" });
  }
  if (!config.peerToken && !config.distTls) {
    if (config.peerInsecure) logger.warn(LOG.peerInsecure, { dist_addr: formatAddress(config.distAddr) });
    else logger.info(LOG.peerProtectedMode, { dist_addr: formatAddress(config.distAddr) });
  }
  const tlsStamps = await tlsBaselines(config);
  const tls = await readListenerTls(config, logger);
  const livePeer = tls.dist && livePeerTls(tls.dist);
  const otlpEndpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  const node = createNode(config, {
    logger,
    clock: systemClock,
    timers: systemTimers,
    random: systemRandom,
    documents,
    otlpEndpoint,
    otlpIntervalMs: positiveNumber(process.env.OTEL_METRIC_EXPORT_INTERVAL),
    otlpExporter: await loadOtlpExporter(otlpEndpoint),
    serviceVersion: version,
    // New per process: the boot id (a counter slot is never reused) and the store's hash key (no client can collide keys).
    bootId: randomUUID().replace(/-/g, ""),
    storeHashSeed: hashSeedFrom(randomBytes(8)),
    auth,
    peerTls: livePeer?.options,
    peerTrustChanges: livePeer?.onTrustChange,
  });
  boot.hold();
  const listeners = await startListeners(config, node, tls, logger);
  tlsReloaders = await watchTls(config, listeners, livePeer, logger, tlsStamps);
  installShutdown(node, listeners, auth, logger, boot);
}
