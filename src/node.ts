// createNode(config, deps): builds every component of one node and wires them together.
// It does not bind ports (main.ts does) and reads no environment.
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type Koa from "koa";
import type { Clock, Timers } from "./core/clock.js";
import { formatAddress } from "./core/address.js";
import { PEER_BODY_BYTES_MAX, PEER_TIMEOUT_MS, VIRTUAL_NODES } from "./core/limits.js";
import type { Random } from "./core/random.js";
import type { Config } from "./config/index.js";
import { openAuthenticator, type Authenticator } from "./auth/index.js";
import { DistCache, Lifecycle, PeerHandler, VersionClock } from "./dist/index.js";
import { ClusterEventsPublisher, createClientApp, createManagementApp, membersBody } from "./http/index.js";
import type { AppState } from "./http/koa-middleware.js";
import { LOG, type Logger } from "./log/index.js";
import { MemberTable } from "./membership/index.js";
import { createOtelMirror, Metrics, OperationLatencies, SseHub, type OtelMirror } from "./observability/index.js";
import { createPeerRoutes, peerTokenInterceptor } from "./peer/index.js";
import { HashRing } from "./ring/index.js";
import { EvictionLoop, ExpirationLoop, ShardedStore } from "./store/index.js";

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
  readonly serviceVersion: string;
}

export interface HypercacheNode {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly store: ShardedStore;
  readonly lifecycle: Lifecycle;
  readonly members: MemberTable;
  readonly clientApp: Koa<AppState>;
  readonly managementApp: Koa<AppState>;
  /** Request handler of the dist listener. */
  readonly peerHandler: NodeHandlerFn;
  /** Starts the background loops. */
  start(): void;
  /** Enters draining (one-way). Returns true on the transition. */
  drain(reason: string): boolean;
  /** Stops the background loops and flushes queued work. */
  stop(): Promise<void>;
}

export function createNode(config: Config, deps: NodeDeps): HypercacheNode {
  const { logger, clock, timers } = deps;
  const startedAtMonotonicMs = clock.monotonicMs();
  const metrics = new Metrics();
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
  const members = new MemberTable({ selfId: config.nodeId, selfAddress: formatAddress(config.distAddr), clock, metrics, logger });
  let ring = HashRing.build(members.ringMembers(), config.replication, VIRTUAL_NODES);
  members.onChange(() => {
    const next = HashRing.build(members.ringMembers(), config.replication, VIRTUAL_NODES);
    if (!next.sameAs(ring)) ring = next;
  });
  const auth: Authenticator = openAuthenticator();
  const latencies = new OperationLatencies();
  const otel: OtelMirror = createOtelMirror(metrics, { nodeId: config.nodeId, serviceVersion: deps.serviceVersion, otlpEndpoint: deps.otlpEndpoint });
  const events = new SseHub({ metrics, bufferFrames: SSE_BUFFER_FRAMES });

  const cache = new DistCache({
    nodeId: config.nodeId,
    store,
    versions,
    clock,
    metrics,
    logger,
    lifecycle,
    ring: () => ring,
    writeConsistency: config.writeConsistency,
    readConsistency: config.readConsistency,
  });
  const peer = new PeerHandler({
    nodeId: config.nodeId,
    store,
    versions,
    metrics,
    logger,
    lifecycle,
    ring: () => ring,
    incarnation: () => members.selfIncarnation,
  });

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
  const clientApp = createClientApp({ cache, auth, clock, logger, latencies, openapiYaml: deps.documents.client, limits });
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
  });
  const peerHandler = connectNodeAdapter({
    routes: createPeerRoutes(peer),
    requestPathPrefix: "/internal",
    readMaxBytes: PEER_BODY_BYTES_MAX,
    writeMaxBytes: PEER_BODY_BYTES_MAX,
    maxTimeoutMs: PEER_TIMEOUT_MS,
    interceptors: config.peerToken ? [peerTokenInterceptor(config.peerToken)] : [],
    jsonOptions: { ignoreUnknownFields: true, useProtoFieldName: true, alwaysEmitImplicit: true },
  });

  logger.info(LOG.clusterJoin, { seeds: config.seeds.map((s) => `${s.id}@${s.address}`), replication: config.replication });

  return {
    config,
    metrics,
    store,
    lifecycle,
    members,
    clientApp,
    managementApp,
    peerHandler,
    start() {
      eviction.start();
      expiration.start();
      publisher.start();
    },
    drain: (reason) => lifecycle.drain(reason),
    async stop() {
      eviction.stop();
      expiration.stop();
      publisher.stop();
      await otel.shutdown();
    },
  };
}
