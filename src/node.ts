// createNode(config, deps): builds every component of one node and wires them together.
// It does not bind ports (main.ts does) and reads no environment.
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type Koa from "koa";
import { yieldToEventLoop, type Clock, type Timers, type YieldToLoop } from "./core/clock.js";
import { formatAddress } from "./core/address.js";
import { PEER_BODY_BYTES_MAX, PEER_TIMEOUT_MS, VIRTUAL_NODES } from "./core/limits.js";
import type { Random } from "./core/random.js";
import type { Config } from "./config/index.js";
import { openAuthenticator, type Authenticator } from "./auth/index.js";
import {
  AntiEntropy, DistCache, HINTED_METRICS, HintQueue, HintReplayLoop, Lifecycle, MIGRATION_METRICS, PeerHandler, Reader, ReadRepairer, Rebalancer,
  ReplicaPusher, VersionClock, WriteCoordinator, type ClusterView,
} from "./dist/index.js";
import { ClusterEventsPublisher, createClientApp, createManagementApp, membersBody } from "./http/index.js";
import type { AppState } from "./http/koa-middleware.js";
import { LOG, type Logger } from "./log/index.js";
import { Gossiper, MemberTable, Prober } from "./membership/index.js";
import { createOtelMirror, Metrics, OperationLatencies, SseHub, type OtelMirror, type OtlpExporterFactory } from "./observability/index.js";
import { ConnectPeerTransport, createPeerAuth, createPeerRoutes, type PeerTlsOptions } from "./peer/index.js";
import { HashRing } from "./ring/index.js";
import { EvictionLoop, ExpirationLoop, ShardedStore } from "./store/index.js";
import type { PeerEndpoint, PeerMember, PeerRef, PeerTransport } from "./transport/index.js";

/** Request handler of the dist listener (Connect over HTTP/1.1 and HTTP/2). */
export type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;

/** Frames an SSE subscriber may have queued before the oldest are dropped. */
const SSE_BUFFER_FRAMES = 64;

export interface NodeDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
  /** The OpenAPI documents served by the listeners. */
  readonly documents: { readonly client: string; readonly management: string };
  /** OTLP/HTTP endpoint for metrics export (OTEL_EXPORTER_OTLP_ENDPOINT), when set. */
  readonly otlpEndpoint?: string;
  /** OTLP export interval in ms (OTEL_METRIC_EXPORT_INTERVAL); 15 s when omitted. */
  readonly otlpIntervalMs?: number;
  /** Builds the OTLP exporter; required with otlpEndpoint (main.ts loads it on demand). */
  readonly otlpExporter?: OtlpExporterFactory;
  readonly serviceVersion: string;
  /** The peer transport; a ConnectPeerTransport when omitted (tests inject an in-memory one). */
  readonly transport?: PeerTransport;
  /** The node's metrics registry; a new one when omitted (simulations share it with their chaos transport). */
  readonly metrics?: Metrics;
  /**
   * The authenticator both the client and the management listener use (createAuthenticator,
   * built by main.ts before the node). Omitted only by in-process tests: the API is then open.
   */
  readonly auth?: Authenticator;
  /** Mutual-TLS options of the peer transport (peerTlsOptions(config.distTls)), when SERVICE_DIST_TLS_* are set. */
  readonly peerTls?: PeerTlsOptions;
  /** How long store scans pause between slices; setImmediate when omitted. */
  readonly yieldToLoop?: YieldToLoop;
}

export interface HypercacheNode {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly store: ShardedStore;
  readonly lifecycle: Lifecycle;
  readonly members: MemberTable;
  readonly cache: DistCache;
  readonly hints: HintQueue;
  readonly clientApp: Koa<AppState>;
  readonly managementApp: Koa<AppState>;
  /** What this node answers to peers (registered on in-memory networks by tests). */
  readonly endpoint: PeerEndpoint;
  /** Request handler of the dist listener. */
  readonly peerHandler: NodeHandlerFn;
  /** Peer calls made so far (forwards, pushes, reads, hints). */
  peerCalls(): number;
  /** The loops, for tests that drive ticks by hand. */
  readonly loops: {
    readonly hints: HintReplayLoop;
    readonly eviction: EvictionLoop;
    readonly expiration: ExpirationLoop;
    readonly prober: Prober;
    readonly gossiper: Gossiper;
    readonly rebalancer: Rebalancer;
    readonly antiEntropy: AntiEntropy;
  };
  /** Queued failed migrations. */
  readonly migrations: HintQueue;
  /** Starts the background loops. */
  start(): void;
  /** Enters draining (one-way). Returns true on the transition. */
  drain(reason: string): boolean;
  /** Stops the background loops and flushes queued read repairs. */
  stop(): Promise<void>;
}

export function createNode(config: Config, deps: NodeDeps): HypercacheNode {
  const { logger, clock, timers } = deps;
  const yieldToLoop = deps.yieldToLoop ?? yieldToEventLoop;
  const selfId = config.nodeId;
  const startedAtMonotonicMs = clock.monotonicMs();
  const metrics = deps.metrics ?? new Metrics();
  const lifecycle = new Lifecycle({ metrics, logger, nowMs: () => clock.nowMs() });
  const store = new ShardedStore({
    shards: config.evictionShards,
    capacity: config.capacity,
    algorithm: config.evictionAlgorithm,
    tombstoneTtlMs: config.tombstoneTtlMs,
    clock,
    metrics,
  });
  const versions = new VersionClock(clock);
  const members = new MemberTable({ selfId, selfAddress: formatAddress(config.distAddr), selfApiUrl: config.apiAdvertiseUrl, selfMgmtUrl: config.mgmtAdvertiseUrl, clock, metrics, logger });
  logger.info(LOG.clusterJoin, { seeds: config.seeds.map((s) => `${s.id}@${s.address}`), replication: config.replication });
  for (const seed of config.seeds) {
    if (seed.id === "") logger.warn(LOG.bareSeed, { seed: seed.address });
    else members.addPeer(seed.id, seed.address);
  }

  // The ring follows membership: rebuilt on every change, swapped only when owners move.
  // The ring follows membership. A change only marks it stale; the next reader rebuilds it, so a
  // burst of membership changes costs one rebuild, and each member's points are hashed once.
  const ringPoints = new Map<string, Uint32Array>();
  let ring = HashRing.build(members.ringMembers(), config.replication, VIRTUAL_NODES, ringPoints);
  let ringStale = false;
  let ringChangedAtMs = clock.nowMs();
  members.onChange(() => {
    ringStale = true;
  });
  const currentRing = (): HashRing => {
    if (ringStale) {
      ringStale = false;
      const ids = members.ringMembers();
      for (const id of ringPoints.keys()) if (!ids.includes(id)) ringPoints.delete(id);
      const next = HashRing.build(ids, config.replication, VIRTUAL_NODES, ringPoints);
      if (!next.sameAs(ring)) {
        ring = next;
        ringChangedAtMs = clock.nowMs();
        // New ownership: pull what this node now owns from its co-owners.
        antiEntropy.requestCatchUp(config.heartbeatIntervalMs);
      }
    }
    return ring;
  };
  // How long after a ring change (or the start) reads look past a local miss.
  const settleMs = Math.max(config.hintTtlMs, 10 * config.rebalanceIntervalMs);
  const view: ClusterView = {
    selfId,
    ring: currentRing,
    peer: (id) => {
      const m = members.get(id);
      return m && id !== selfId ? { id, address: m.address } : undefined;
    },
    alivePeers: () => members.peers("alive").map((m) => ({ id: m.id, address: m.address })),
    ringPeers: () => members.peers("alive", "suspect").map((m) => ({ id: m.id, address: m.address })),
    knownCount: () => members.knownCount(),
    notDeadCount: () => members.notDeadCount(),
    // Called only once the node is built (rebalancer is initialised below).
    unsettled: () => {
      currentRing();
      return !antiEntropy.caughtUp || clock.nowMs() - ringChangedAtMs < settleMs || rebalancer.busy;
    },
  };

  const transport: PeerTransport =
    deps.transport ?? new ConnectPeerTransport({ token: config.peerToken, compressionThresholdBytes: config.compressionThresholdBytes, tls: deps.peerTls, metrics });
  // Failed migrations queue like hints, with the same caps and TTL.
  const queueDeps = { clock, metrics, logger, limits: { ttlMs: config.hintTtlMs, maxPerNode: config.hintMaxPerNode, maxBytes: config.hintMaxBytes } };
  const hints = new HintQueue({ ...queueDeps, names: HINTED_METRICS });
  const migrations = new HintQueue({
    ...queueDeps,
    names: MIGRATION_METRICS,
    onReplayed: (_peer, record) => rebalancer.releaseMigrated(record),
  });
  const hintLoop = new HintReplayLoop({ queues: [hints, migrations], transport, selfId, timers, intervalMs: config.hintReplayMs, logger });
  const pusher = new ReplicaPusher({ transport, selfId, hints });
  const repairer = new ReadRepairer({
    transport,
    selfId,
    metrics,
    logger,
    timers,
    batchSize: config.readRepairBatchSize,
    intervalMs: config.readRepairIntervalMs,
  });
  const coordinator = new WriteCoordinator({ selfId, store, versions, metrics, view, pusher, replication: config.replication });
  const reader = new Reader({ selfId, store, clock, view, transport, repairer, replication: config.replication });
  const cache = new DistCache({
    nodeId: selfId,
    store,
    clock,
    metrics,
    logger,
    lifecycle,
    view,
    transport,
    coordinator,
    reader,
    yieldToLoop,
    writeConsistency: config.writeConsistency,
    readConsistency: config.readConsistency,
  });
  const rebalancer = new Rebalancer({
    selfId,
    store,
    view,
    transport,
    migrations,
    metrics,
    logger,
    clock,
    timers,
    intervalMs: config.rebalanceIntervalMs,
    batchSize: config.rebalanceBatchSize,
    maxConcurrent: config.rebalanceMaxConcurrent,
    removalGraceMs: config.removalGraceMs,
  });
  const antiEntropy = new AntiEntropy({
    selfId,
    store,
    view,
    transport,
    versions,
    metrics,
    logger,
    clock,
    timers,
    yieldToLoop,
    intervalMs: config.autoSyncIntervalMs,
    maxFactor: config.autoSyncMaxFactor,
    chunkSize: config.merkleChunkSize,
  });
  const prober = new Prober({
    members,
    transport,
    timers,
    random: deps.random,
    metrics,
    logger,
    heartbeatMs: config.heartbeatIntervalMs,
    indirectProbeK: config.indirectProbeK,
    deadAfterMs: config.deadAfterMs,
  });
  const gossiper = new Gossiper({
    members,
    transport,
    timers,
    random: deps.random,
    logger,
    intervalMs: config.gossipIntervalMs,
    seeds: config.seeds,
    timeoutMs: Math.max(1000, config.heartbeatIntervalMs),
  });
  const peerData = new PeerHandler({ nodeId: selfId, store, versions, clock, metrics, logger, lifecycle, ring: currentRing, incarnation: () => members.selfIncarnation });

  const endpoint: PeerEndpoint = {
    forward: (req) => cache.handleForward(req),
    applySet: (from, records) => peerData.applySet(from, records),
    applyRemove: (from, tombstones) => peerData.applyRemove(from, tombstones),
    getRecords: (keys) => peerData.getRecords(keys),
    keysPage: (cursor, limit, q) => peerData.keysPage(cursor, limit, q),
    health: () => peerData.health(),
    probe: async (targetId) => {
      const target = view.peer(targetId);
      if (!target) return { target: targetId, ok: false, error: "unknown member" };
      try {
        await transport.health(target);
        return { target: targetId, ok: true, error: "" };
      } catch (err) {
        return { target: targetId, ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
    gossip: (from, claims) => {
      // The answer carries this node's view of the caller from before the merge: a caller
      // suspected here learns of the claim and refutes it with a higher incarnation.
      const before = members.get(from);
      members.merge(from, claims);
      const list = members.list() as PeerMember[];
      return before && before.state !== "alive" ? list.map((m) => (m.id === from ? before : m)) : list;
    },
    merkleRoot: (requester, leafCount) => antiEntropy.root(requester, leafCount),
    merkleLeaves: (requester, leafCount) => antiEntropy.leaves(requester, leafCount),
    merkleRange: (requester, leafCount, leaves, cursor) => antiEntropy.range(requester, leafCount, leaves, cursor),
    drain: () => peerData.drain(),
  };

  const auth: Authenticator = deps.auth ?? openAuthenticator();
  const latencies = new OperationLatencies();
  const otel: OtelMirror = createOtelMirror(metrics, { nodeId: selfId, serviceVersion: deps.serviceVersion, otlpEndpoint: deps.otlpEndpoint, otlpIntervalMs: deps.otlpIntervalMs, otlpExporter: deps.otlpExporter });
  const events = new SseHub({ metrics, bufferFrames: SSE_BUFFER_FRAMES });
  const loopDeps = { store, clock, timers, metrics, logger };
  const eviction = new EvictionLoop(loopDeps, config.evictionIntervalMs);
  const expiration = new ExpirationLoop(loopDeps, config.expirationIntervalMs);
  const publisher = new ClusterEventsPublisher({
    hub: events,
    members,
    timers,
    sources: { members: () => JSON.stringify(membersBody(config, members)), heartbeat: () => JSON.stringify(metrics.snapshot()) },
  });

  const limits = {
    maxKeyBytes: config.maxKeyBytes,
    maxValueBytes: config.maxValueBytes,
    maxBodyBytes: config.maxBodyBytes,
    maxBatchItems: config.maxBatchItems,
  };
  const clientApp = createClientApp({ cache, auth, clock, logger, latencies, members, openapiYaml: deps.documents.client, limits });
  const managementApp = createManagementApp({
    config,
    auth,
    lifecycle,
    logger,
    clock,
    openapiYaml: deps.documents.management,
    store,
    members,
    metrics,
    latencies,
    otel,
    events,
    evictNow: () => eviction.runTick(),
    expireNow: () => expiration.runTick(),
    startedAtMonotonicMs,
    catchingUp: () => !antiEntropy.caughtUp,
  });
  // The same token signs outgoing peer calls and is required on incoming ones; the construction
  // rule refuses a node that would sign without verifying ("insecure auth config").
  const peerAuth = createPeerAuth({ outboundToken: config.peerToken, inboundToken: config.peerToken });
  const peerHandler = connectNodeAdapter({
    routes: createPeerRoutes(endpoint),
    requestPathPrefix: "/internal",
    readMaxBytes: PEER_BODY_BYTES_MAX,
    writeMaxBytes: PEER_BODY_BYTES_MAX,
    maxTimeoutMs: PEER_TIMEOUT_MS,
    interceptors: [...peerAuth.inbound],
    jsonOptions: { ignoreUnknownFields: true, useProtoFieldName: true, alwaysEmitImplicit: true },
  });


  return {
    config,
    metrics,
    store,
    lifecycle,
    members,
    cache,
    hints,
    clientApp,
    managementApp,
    endpoint,
    peerHandler,
    peerCalls: () => cache.forwardCalls + pusher.calls + reader.calls,
    loops: { hints: hintLoop, eviction, expiration, prober, gossiper, rebalancer, antiEntropy },
    migrations,
    start() {
      // The start-up records of SPEC.md come in this order: heartbeat, rebalance, hint replay.
      prober.start();
      gossiper.start();
      rebalancer.start();
      hintLoop.start();
      antiEntropy.start();
      // A node starts empty: it pulls what it owns from its peers before it counts as caught up.
      antiEntropy.requestCatchUp(config.heartbeatIntervalMs);
      repairer.start();
      eviction.start();
      expiration.start();
      publisher.start();
    },
    drain: (reason) => lifecycle.drain(reason),
    async stop() {
      prober.stop();
      gossiper.stop();
      rebalancer.stop();
      antiEntropy.stop();
      hintLoop.stop();
      eviction.stop();
      expiration.stop();
      publisher.stop();
      await repairer.drain();
      await transport.close();
      await otel.shutdown();
    },
  };
}

export type { PeerRef };
