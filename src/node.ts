// createNode(config, deps): builds every component of one node in dependency order, then wires
// the observers between them in one explicit step. It holds no rule of its own (the rules live in
// the modules of their areas), does not bind ports (main.ts does) and reads no environment.
import type Koa from "koa";
import type { IncomingMessage, ServerResponse } from "node:http";
import { yieldToEventLoop, type Clock, type Timers, type YieldToLoop } from "./core/clock.js";
import { formatAddress } from "./core/address.js";
import { PEER_TIMEOUT_MS, SSE_BUFFER_FRAMES } from "./core/limits.js";
import type { Random } from "./core/random.js";
import type { Config } from "./config/index.js";
import { openAuthenticator, type Authenticator } from "./auth/index.js";
import {
  CatchUp, ClusterCache, ContactGuard, createClusterView, createDataEndpoint, Forwarder, ForwardReceiver, HINTED_METRICS, HintQueue, HintReplayLoop, KeyLister, Lifecycle,
  MerkleAnswers, MerkleScan, MerkleSyncer, MIGRATION_METRICS, Reader, ReadRepairer, Rebalancer, ReplicaApplier, ReplicaPusher, RingFollower, settleWindowMs,
  SettleWindow, SyncLoop, VersionClock, WriteCoordinator, WritePath, type ClusterView,
} from "./cluster/index.js";
import { ClusterEventsPublisher, createClientListener, createManagementApp, membersBody } from "./http/index.js";
import type { AppState } from "./http/koa-middleware.js";
import type { Logger } from "./log/index.js";
import { addSeeds, createMembershipEndpoint, Gossiper, MemberTable, Prober } from "./membership/index.js";
import { createOtelMirror, Metrics, OperationLatencies, SseHub, type OtelMirror, type OtlpExporterFactory } from "./observability/index.js";
import { ConnectPeerTransport, createPeerHandler, type PeerRequestHandler, type PeerTlsOptions } from "./peer/index.js";
import { EvictionLoop, ExpirationLoop, ShardedStore } from "./store/index.js";
import type { PeerEndpoint, PeerRef, PeerTransport } from "./transport/index.js";

/** Request handler of the dist listener (Connect over HTTP/1.1 and HTTP/2). */
export type NodeHandlerFn = PeerRequestHandler;

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
  readonly cache: ClusterCache;
  readonly hints: HintQueue;
  /** Queued failed migrations. */
  readonly migrations: HintQueue;
  readonly clientApp: Koa<AppState>;
  /** Request handler of the client listener: the item routes before Koa, the rest through clientApp. */
  readonly clientHandler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly managementApp: Koa<AppState>;
  /** What this node answers to peers (registered on in-memory networks by tests). */
  readonly endpoint: PeerEndpoint;
  /** Request handler of the dist listener. */
  readonly peerHandler: NodeHandlerFn;
  /** Merkle anti-entropy: one sync with a peer, and the answering side (for tests). */
  readonly merkle: { readonly syncer: MerkleSyncer; readonly answers: MerkleAnswers };
  /** Peer calls made so far (forwards, pushes, reads). */
  peerCalls(): number;
  /** The loops, for tests that drive ticks by hand. */
  readonly loops: {
    readonly hints: HintReplayLoop;
    readonly eviction: EvictionLoop;
    readonly expiration: ExpirationLoop;
    readonly prober: Prober;
    readonly gossiper: Gossiper;
    readonly rebalancer: Rebalancer;
    readonly antiEntropy: SyncLoop;
    readonly catchUp: CatchUp;
  };
  /** Starts the background loops. */
  start(): void;
  /** Enters draining (one-way). Returns true on the transition. */
  drain(reason: string): boolean;
  /** Stops the background loops and flushes queued read repairs. */
  stop(): Promise<void>;
}

/** The parts every layer builds on: state, membership, the ring and the view of the cluster. */
function buildFoundation(config: Config, deps: NodeDeps) {
  const { logger, clock } = deps;
  const metrics = deps.metrics ?? new Metrics();
  const lifecycle = new Lifecycle({ metrics, logger, nowMs: () => clock.nowMs() });
  const store = new ShardedStore({
    shards: config.evictionShards,
    capacity: config.capacity,
    algorithm: config.evictionAlgorithm,
    tombstoneTtlMs: config.tombstoneTtlMs,
    tombstoneBytesMax: config.tombstoneBytesMax,
    clock,
    metrics,
  });
  const versions = new VersionClock(clock);
  const members = new MemberTable({ selfId: config.nodeId, selfAddress: formatAddress(config.distAddr), selfApiUrl: config.apiAdvertiseUrl, selfMgmtUrl: config.mgmtAdvertiseUrl, clock, metrics, logger });
  addSeeds(members, config.seeds, config.replication, logger);
  const ring = new RingFollower({ members, replication: config.replication, clock });
  const settle = new SettleWindow({ clock, ring, windowMs: settleWindowMs(config.hintTtlMs, config.rebalanceIntervalMs) });
  const view = createClusterView({ selfId: config.nodeId, members, ring, settle });
  const transport: PeerTransport =
    deps.transport ?? new ConnectPeerTransport({ token: config.peerToken, compressionThresholdBytes: config.compressionThresholdBytes, tls: deps.peerTls, metrics });
  const contact = new ContactGuard({ clock, timers: deps.timers, view, store, metrics, logger, tombstoneTtlMs: config.tombstoneTtlMs, intervalMs: config.heartbeatIntervalMs });
  return { metrics, lifecycle, store, versions, members, ring, settle, view, transport, contact };
}

type Foundation = ReturnType<typeof buildFoundation>;

/** The data path: the apply path, writes (coordinate, forward, push, hint), reads and listings. */
function buildDataPath(config: Config, deps: NodeDeps, f: Foundation) {
  const { logger, clock, timers } = deps;
  const { metrics, store, versions, view, transport } = f;
  const selfId = config.nodeId;
  // Failed migrations queue like hints, with the same caps and TTL.
  const queueDeps = { clock, metrics, logger, limits: { ttlMs: config.hintTtlMs, maxPerNode: config.hintMaxPerNode, maxBytes: config.hintMaxBytes } };
  const hints = new HintQueue({ ...queueDeps, names: HINTED_METRICS });
  const migrations = new HintQueue({ ...queueDeps, names: MIGRATION_METRICS });
  const applier = new ReplicaApplier({ selfId, store, versions, clock, metrics, logger, ring: view.ring, versionFloor: () => f.contact.versionFloor });
  const pusher = new ReplicaPusher({ transport, selfId, hints, timers, metrics });
  const repairer = new ReadRepairer({ transport, selfId, metrics, logger, timers, batchSize: config.readRepairBatchSize, intervalMs: config.readRepairIntervalMs });
  const coordinator = new WriteCoordinator({ selfId, store, versions, metrics, view, pusher, replication: config.replication });
  const reader = new Reader({ selfId, store, clock, timers, view, transport, repairer, applier, metrics, replication: config.replication });
  const forwarder = new Forwarder({ selfId, transport, timers, clock, metrics });
  const writes = new WritePath({ selfId, view, coordinator, forwarder, applier, metrics, logger });
  const keys = new KeyLister({ store, view, transport, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop });
  const cache = new ClusterCache({
    nodeId: selfId,
    lifecycle: f.lifecycle,
    view,
    reader,
    writes,
    keys,
    writeConsistency: config.writeConsistency,
    readConsistency: config.readConsistency,
  });
  const forwards = new ForwardReceiver({ selfId, clock, deadlineMs: PEER_TIMEOUT_MS, lifecycle: f.lifecycle, view, coordinator, writeConsistency: config.writeConsistency });
  const peerCalls = () => forwarder.calls + pusher.calls + reader.calls;
  return { hints, migrations, applier, repairer, cache, keys, forwards, peerCalls };
}

type DataPath = ReturnType<typeof buildDataPath>;

/** The background loops: hint replay, rebalance, anti-entropy and catch-up, store loops, membership. */
function buildLoops(config: Config, deps: NodeDeps, f: Foundation, d: DataPath) {
  const { logger, clock, timers, random } = deps;
  const { metrics, store, view, transport, members } = f;
  const selfId = config.nodeId;
  const hints = new HintReplayLoop({ queues: [d.hints, d.migrations], transport, selfId, timers, intervalMs: config.hintReplayMs, logger });
  const rebalancer = new Rebalancer({
    selfId,
    store,
    view,
    transport,
    migrations: d.migrations,
    metrics,
    logger,
    clock,
    timers,
    intervalMs: config.rebalanceIntervalMs,
    batchSize: config.rebalanceBatchSize,
    maxConcurrent: config.rebalanceMaxConcurrent,
    removalGraceMs: config.removalGraceMs,
  });
  const scan = new MerkleScan({ selfId, store, clock, ring: view.ring, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop, chunkSize: config.merkleChunkSize });
  const syncer = new MerkleSyncer({ selfId, scan, transport, applier: d.applier, metrics, logger, clock });
  const antiEntropy = new SyncLoop({ view, syncer, metrics, logger, clock, timers, intervalMs: config.autoSyncIntervalMs, maxFactor: config.autoSyncMaxFactor });
  const catchUp = new CatchUp({ view, syncer, logger, timers, retryMs: config.heartbeatIntervalMs });
  const storeLoopDeps = { store, clock, timers, metrics, logger };
  const eviction = new EvictionLoop(storeLoopDeps, config.evictionIntervalMs);
  const expiration = new ExpirationLoop(storeLoopDeps, config.expirationIntervalMs);
  const prober = new Prober({ members, transport, timers, random, metrics, logger, heartbeatMs: config.heartbeatIntervalMs, indirectProbeK: config.indirectProbeK, deadAfterMs: config.deadAfterMs });
  const gossiper = new Gossiper({
    members,
    transport,
    timers,
    random,
    logger,
    intervalMs: config.gossipIntervalMs,
    seeds: config.seeds,
    timeoutMs: Math.max(1000, config.heartbeatIntervalMs),
  });
  return { hints, rebalancer, antiEntropy, catchUp, eviction, expiration, prober, gossiper, merkle: { syncer, answers: new MerkleAnswers(scan) } };
}

type Loops = ReturnType<typeof buildLoops>;

/** What the node serves: the client and management apps, and what it answers to peers. */
function buildServing(config: Config, deps: NodeDeps, f: Foundation, d: DataPath, l: Loops) {
  const { logger, clock, timers } = deps;
  const { metrics, store, members, lifecycle } = f;
  const auth: Authenticator = deps.auth ?? openAuthenticator();
  const latencies = new OperationLatencies();
  const otel: OtelMirror = createOtelMirror(metrics, { nodeId: config.nodeId, serviceVersion: deps.serviceVersion, otlpEndpoint: deps.otlpEndpoint, otlpIntervalMs: deps.otlpIntervalMs, otlpExporter: deps.otlpExporter });
  const events = new SseHub({ metrics, bufferFrames: SSE_BUFFER_FRAMES });
  const publisher = new ClusterEventsPublisher({
    hub: events,
    members,
    timers,
    sources: { members: () => JSON.stringify(membersBody(config, members)), heartbeat: () => JSON.stringify(metrics.snapshot()) },
  });
  const limits = { maxKeyBytes: config.maxKeyBytes, maxValueBytes: config.maxValueBytes, maxBodyBytes: config.maxBodyBytes, maxBatchItems: config.maxBatchItems };
  const client = createClientListener({ cache: d.cache, auth, clock, logger, latencies, members, openapiYaml: deps.documents.client, limits });
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
    evictNow: () => l.eviction.runTick(),
    expireNow: () => l.expiration.runTick(),
    startedAtMonotonicMs: clock.monotonicMs(),
    catchingUp: () => !l.catchUp.caughtUp,
  });
  const endpoint: PeerEndpoint = {
    ...createDataEndpoint({
      selfId: config.nodeId,
      store,
      lifecycle,
      applier: d.applier,
      forwards: d.forwards,
      keys: d.keys,
      merkle: l.merkle.answers,
      incarnation: () => members.selfIncarnation,
      beforeAnswering: () => f.contact.check(),
    }),
    ...createMembershipEndpoint({ selfId: config.nodeId, members, transport: f.transport }),
  };
  const peerHandler = createPeerHandler(endpoint, { token: config.peerToken, mutualTls: config.distTls !== undefined, insecure: config.peerInsecure });
  return { clientApp: client.app, clientHandler: client.handler, managementApp, endpoint, peerHandler, publisher, otel };
}

export function createNode(config: Config, deps: NodeDeps): HypercacheNode {
  const f = buildFoundation(config, deps);
  const d = buildDataPath(config, deps, f);
  const l = buildLoops(config, deps, f, d);
  const s = buildServing(config, deps, f, d, l);

  // Wiring: the observers between the parts, all in one place.
  // New ownership: pull what this node now owns from its co-owners.
  f.ring.onRingChange(() => l.catchUp.request());
  // Reads look past a local miss until catch-up is done and while a rebalance moves keys.
  f.settle.watch(() => !l.catchUp.caughtUp);
  f.settle.watch(() => l.rebalancer.busy);
  // A node that dropped its data after losing contact catches up like a new node.
  f.contact.onReset(() => l.catchUp.request());
  // A replayed migration releases the local copy as a direct one would.
  d.migrations.onReplayed((_peer, record) => l.rebalancer.releaseMigrated(record));

  return {
    config,
    metrics: f.metrics,
    store: f.store,
    lifecycle: f.lifecycle,
    members: f.members,
    cache: d.cache,
    hints: d.hints,
    migrations: d.migrations,
    clientApp: s.clientApp,
    clientHandler: s.clientHandler,
    managementApp: s.managementApp,
    endpoint: s.endpoint,
    peerHandler: s.peerHandler,
    merkle: l.merkle,
    peerCalls: d.peerCalls,
    loops: { hints: l.hints, eviction: l.eviction, expiration: l.expiration, prober: l.prober, gossiper: l.gossiper, rebalancer: l.rebalancer, antiEntropy: l.antiEntropy, catchUp: l.catchUp },
    start() {
      // The start-up records of SPEC.md come in this order: heartbeat, rebalance, hint replay.
      l.prober.start();
      l.gossiper.start();
      l.rebalancer.start();
      l.hints.start();
      l.antiEntropy.start();
      // A node starts empty: it pulls what it owns from its peers before it counts as caught up.
      l.catchUp.request();
      d.repairer.start();
      l.eviction.start();
      l.expiration.start();
      f.contact.start();
      s.publisher.start();
    },
    drain: (reason) => f.lifecycle.drain(reason),
    async stop() {
      for (const loop of [l.prober, l.gossiper, l.rebalancer, l.antiEntropy, l.catchUp, l.hints, l.eviction, l.expiration, f.contact, s.publisher]) loop.stop();
      await d.repairer.drain();
      await f.transport.close();
      await s.otel.shutdown();
    },
  };
}

export type { ClusterView, PeerRef };
