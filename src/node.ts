// createNode(config, deps): builds every component of one node in dependency order, then wires
// the observers between them in one explicit step. It holds no rule of its own (the rules live in
// the modules of their areas), does not bind ports (server.ts does) and reads no environment.
import type Koa from "koa";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "./config/index.js";
import { REPLICA_INSPECT_TIMEOUT_MS, SSE_BUFFER_FRAMES } from "./core/limits.js";
import { openAuthenticator, rateLimited, RateLimiter, type Authenticator } from "./auth/index.js";
import type {
  CatchUp, ClusterCache, DepartureOutcome, DrainHandoff, DrainStatus, HintQueue, HintReplayLoop, Lifecycle, MerkleAnswers, MerkleSyncer, Readiness, Rebalancer, SyncLoop,
} from "./cluster/index.js";
import { createDataEndpoint, ReplicaInspector, type ClusterView } from "./cluster/index.js";
import { ClusterEventsPublisher, createClientListener, createManagementApp, membersBody } from "./http/index.js";
import type { AppState } from "./http/koa-middleware.js";
import type { Gossiper, MemberTable, Prober } from "./membership/index.js";
import { createMembershipEndpoint } from "./membership/index.js";
import type { Metrics } from "./observability/index.js";
import { OperationLatencies, SseHub, type OtelMirror } from "./observability/index.js";
import { createPeerHandler, PeerConnectionTrust, type PeerRequestHandler } from "./peer/index.js";
import type { EvictionLoop, ExpirationLoop, ShardedStore } from "./store/index.js";
import type { PeerEndpoint, PeerRef } from "./transport/index.js";
import {
  buildDataPath, buildDrain, buildFoundation, buildLoops, buildObservability, type DataPath, type Drain, type Foundation, type Loops, type NodeDeps, type Observability,
} from "./node-parts.js";

export type { NodeDeps };

/** Request handler of the dist listener (Connect over HTTP/1.1 and HTTP/2). */
export type NodeHandlerFn = PeerRequestHandler;

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
  /** The dist listener's connections that carried a request the gate let through (for its server). */
  readonly peerTrust: PeerConnectionTrust;
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
  /** The drain hand-off status (GET /dist/drain). */
  drainStatus(): DrainStatus;
  /** The drain hand-off, for tests that drive its ticks by hand. */
  readonly handoff: DrainHandoff;
  /**
   * SIGTERM: drains until safe to stop or SERVICE_DRAIN_TIMEOUT, logging progress every 5 s, then
   * announces that the node left (only when it was safe). Does not stop the node.
   */
  depart(reason: string): Promise<DepartureOutcome>;
  /** server.ts reports that every listener is bound (a readiness check). */
  markBound(): void;
  readonly readiness: Readiness;
  /** Stops the background loops and flushes queued read repairs. */
  stop(): Promise<void>;
}

/** What the node serves: the client and management apps, and what it answers to peers. */
function buildServing(config: Config, deps: NodeDeps, f: Foundation, d: DataPath, l: Loops, drain: Drain, o: Observability) {
  const { logger, clock, timers } = deps;
  const { metrics, store, members, lifecycle } = f;
  const rateLimiter = new RateLimiter({ clock, settings: config.rateLimit, aliveMembers: () => members.aliveCount(), ipv6PrefixBits: config.authIpv6PrefixBits });
  const auth: Authenticator = rateLimited(deps.auth ?? openAuthenticator(), rateLimiter);
  const latencies = new OperationLatencies();
  const otel: OtelMirror = o.otel;
  const events = new SseHub({ metrics, bufferFrames: SSE_BUFFER_FRAMES });
  const publisher = new ClusterEventsPublisher({
    hub: events,
    members,
    timers,
    sources: { members: () => JSON.stringify(membersBody(config, members)), heartbeat: () => JSON.stringify(metrics.snapshot()) },
  });
  const limits = { maxKeyBytes: config.maxKeyBytes, maxValueBytes: config.maxValueBytes, maxBodyBytes: config.maxBodyBytes, maxBatchItems: config.maxBatchItems };
  const scheme = (tls: unknown) => (tls ? "https" : "http");
  const client = createClientListener({ cache: d.cache, auth, clock, logger, latencies, members, openapiYaml: deps.documents.client, limits, rateLimiter, inflight: o.inflight, durations: o.http.listener(scheme(config.apiTls), config.apiAddr.port) });
  const managementApp = createManagementApp({
    config,
    auth,
    inflight: o.inflight,
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
    expireNow: () => l.expiration.expireNow(),
    startedAtMonotonicMs: clock.monotonicMs(),
    catchingUp: () => !l.catchUp.caughtUp,
    readiness: drain.readiness,
    drainStatus: () => drain.handoff.status(),
    durations: o.http.listener(scheme(config.mgmtTls), config.mgmtAddr.port),
    ring: () => f.view.ring(),
    hints: d.hints,
    migrations: d.migrations,
    cache: d.cache,
    replicas: new ReplicaInspector({ selfId: config.nodeId, view: f.view, store, transport: f.transport, clock, timers, timeoutMs: REPLICA_INSPECT_TIMEOUT_MS }),
    dashboard: deps.documents.dashboard,
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
      hints: d.hints,
      clock,
      addressOf: (id) => members.get(id)?.address,
      leases: d.leases,
      votes: () => f.vote.voting,
      acknowledges: () => f.vote.acknowledges,
      rememberPushed: d.rememberPushed,
      owns: (key) => f.view.ring().isOwner(key, config.nodeId),
    }),
    ...createMembershipEndpoint({ selfId: config.nodeId, members, transport: f.transport }),
  };
  const peerTrust = new PeerConnectionTrust(timers);
  const peerHandler = createPeerHandler(endpoint, { token: config.peerToken, mutualTls: config.distTls !== undefined, insecure: config.peerInsecure }, { acceptCompressed: config.compressionThresholdBytes > 0 }, peerTrust);
  return { clientApp: client.app, clientHandler: client.handler, managementApp, endpoint, peerHandler, peerTrust, publisher, otel };
}

/** The observers between the parts, all in one place. */
function wireParts(f: Foundation, d: DataPath, l: Loops, drain: Drain): void {
  // New ownership: pull what this node now owns from its co-owners.
  f.ring.onRingChange(() => l.catchUp.request());
  // A node back in contact with a majority votes in quorum reads again after a catch-up pass.
  f.vote.catchUpWith(l.catchUp);
  // Reads look past a local miss until catch-up is done, while a rebalance moves keys, and while
  // this node does not count towards quorum reads (its copies may miss writes).
  f.settle.watch(() => !l.catchUp.caughtUp);
  f.settle.watch(() => !f.vote.voting);
  f.settle.watch(() => l.rebalancer.busy);
  // A node that dropped its data after losing contact catches up like a new node.
  // It is not ready until then (or SERVICE_READY_CATCHUP_TIMEOUT after the drop).
  f.contact.onReset(() => {
    drain.readiness.restartCatchUpWait();
    l.catchUp.restartEmpty();
    // Queued hints and migrations from before contact was lost are as old as the data dropped.
    for (const q of [d.hints, d.migrations]) q.dropBefore(f.contact.versionFloor);
  });
  // Every record this node stores ends the key's stampede lease, if any (and answers its waiters).
  f.store.onStored((rec) => d.leaseTable.stored(rec));
  // A replayed migration releases the local copy as a direct one would.
  d.migrations.onReplayed((_peer, record) => l.rebalancer.releaseMigrated(record));
  // A peer removed from the membership (by hand, or it left) takes its call series off /metrics.
  // (forgetDeparted runs after membership changes: buildFoundation)
  f.peerCallMetrics.followDepartures((id) => f.members.isRemoved(id));
  // Draining: off this node's own ring (gossiped), the rebalancer gives way to the hand-off.
  f.lifecycle.onDrain(() => {
    f.members.startDraining();
    l.rebalancer.stop();
    drain.handoff.start();
  });
}

export function createNode(config: Config, deps: NodeDeps): HypercacheNode {
  const f = buildFoundation(config, deps);
  const d = buildDataPath(config, deps, f);
  const l = buildLoops(config, deps, f, d);
  const drain = buildDrain(config, deps, f, d, l);
  const o = buildObservability(config, deps, f);
  const s = buildServing(config, deps, f, d, l, drain, o);

  wireParts(f, d, l, drain);

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
    peerHandler: s.peerHandler, peerTrust: s.peerTrust,
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
      // A node starts empty: it pulls what it owns from its peers before it counts as caught up,
      // and before its copies count towards quorum reads.
      l.catchUp.request();
      f.vote.starting();
      d.repairer.start();
      l.eviction.start();
      l.expiration.start();
      f.contact.start();
      s.publisher.start();
      o.start();
    },
    drain: (reason) => f.lifecycle.drain(reason),
    drainStatus: () => drain.handoff.status(),
    handoff: drain.handoff,
    readiness: drain.readiness,
    markBound: () => drain.readiness.markBound(),
    depart: drain.depart,
    async stop() {
      for (const loop of [l.prober, l.gossiper, l.rebalancer, l.antiEntropy, l.catchUp, l.hints, l.eviction, l.expiration, f.contact, s.publisher, drain.handoff, o, d.leaseTable]) loop.stop();
      await d.repairer.drain();
      await f.transport.close();
      await s.otel.shutdown();
    },
  };
}

export type { ClusterView, PeerRef };
