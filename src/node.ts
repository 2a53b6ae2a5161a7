// createNode(config, deps): builds every component of one node and wires them together.
// It does not bind ports (main.ts does) and reads no environment.
import { connectNodeAdapter } from "@connectrpc/connect-node";

/** Request handler of the dist listener. */
export type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;
import type Koa from "koa";
import type { Clock, Timers } from "./core/clock.js";
import { PEER_BODY_BYTES_MAX, PEER_TIMEOUT_MS, VIRTUAL_NODES } from "./core/limits.js";
import type { Random } from "./core/random.js";
import type { Config } from "./config/index.js";
import { openAuthenticator, type Authenticator } from "./auth/index.js";
import { DistCache, Lifecycle, PeerHandler, VersionClock } from "./dist/index.js";
import { createClientApp, createManagementApp } from "./http/index.js";
import { LOG, type Logger } from "./log/index.js";
import { Metrics } from "./observability/index.js";
import { createPeerRoutes, peerTokenInterceptor } from "./peer/index.js";
import { HashRing } from "./ring/index.js";
import { EvictionLoop, ExpirationLoop, ShardedStore } from "./store/index.js";
import type { AppState } from "./http/koa-middleware.js";

export interface NodeDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
  /** The OpenAPI documents served by the listeners. */
  readonly documents: { readonly client: string; readonly management: string };
}

export interface HypercacheNode {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly store: ShardedStore;
  readonly lifecycle: Lifecycle;
  readonly clientApp: Koa<AppState>;
  readonly managementApp: Koa<AppState>;
  /** Request handler of the dist listener (Connect, HTTP/1.1 and HTTP/2). */
  readonly peerHandler: NodeHandlerFn;
  /** Starts the background loops. */
  start(): void;
  /** Enters draining (one-way). Returns true on the transition. */
  drain(reason: string): boolean;
  /** Stops the background loops. */
  stop(): Promise<void>;
}

export function createNode(config: Config, deps: NodeDeps): HypercacheNode {
  const { logger, clock, timers } = deps;
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
  const ring = HashRing.build([config.nodeId], config.replication, VIRTUAL_NODES);
  metrics.set("dist.members.alive", 1);
  const auth: Authenticator = openAuthenticator();

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
  const peer = new PeerHandler({ nodeId: config.nodeId, store, versions, metrics, logger, lifecycle, ring: () => ring, incarnation: () => 1 });

  const limits = {
    maxKeyBytes: config.maxKeyBytes,
    maxValueBytes: config.maxValueBytes,
    maxBodyBytes: config.maxBodyBytes,
    maxBatchItems: config.maxBatchItems,
  };
  const clientApp = createClientApp({ cache, auth, clock, logger, openapiYaml: deps.documents.client, limits });
  const managementApp = createManagementApp({ nodeId: config.nodeId, auth, lifecycle, logger, openapiYaml: deps.documents.management });
  const peerHandler = connectNodeAdapter({
    routes: createPeerRoutes(peer),
    requestPathPrefix: "/internal",
    readMaxBytes: PEER_BODY_BYTES_MAX,
    writeMaxBytes: PEER_BODY_BYTES_MAX,
    maxTimeoutMs: PEER_TIMEOUT_MS,
    interceptors: config.peerToken ? [peerTokenInterceptor(config.peerToken)] : [],
    jsonOptions: { ignoreUnknownFields: true, useProtoFieldName: true, alwaysEmitImplicit: true },
  });

  const loopDeps = { store, clock, timers, metrics, logger };
  const eviction = new EvictionLoop(loopDeps, config.evictionIntervalMs);
  const expiration = new ExpirationLoop(loopDeps, config.expirationIntervalMs);

  logger.info(LOG.clusterJoin, { seeds: config.seeds.map((s) => `${s.id}@${s.address}`), replication: config.replication });

  return {
    config,
    metrics,
    store,
    lifecycle,
    clientApp,
    managementApp,
    peerHandler,
    start() {
      eviction.start();
      expiration.start();
    },
    drain: (reason) => lifecycle.drain(reason),
    async stop() {
      eviction.stop();
      expiration.stop();
    },
  };
}
