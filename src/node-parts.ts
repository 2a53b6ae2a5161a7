// The parts of a node that createNode (node.ts) builds first, in dependency order: the foundation
// (state, membership, the ring, the view of the cluster), the data path and the background loops.
// Like node.ts it holds no rule of its own and only builds and connects.
import { oncePerTurn, yieldToEventLoop, type Clock, type Timers, type YieldToLoop } from "./core/clock.js";
import { formatAddress } from "./core/address.js";
import { bootIdFrom, randomInt, type Random } from "./core/random.js";
import type { HashSeed } from "./core/keyed-hash.js";
import type { Config } from "./config/index.js";
import type { Authenticator } from "./auth/index.js";
import {
  CatchUp, ClusterCache, ContactGuard, copyHoldMaxMs, createClusterView, Forwarder, ForwardReceiver, HINTED_METRICS, HintBytes, HintQueue, HintReplayLoop, KeyLister, Lifecycle,
  MerkleAnswers, MerkleScan, MerkleSyncer, MIGRATION_METRICS, Reader, ReadRepairer, Rebalancer, ReplicaApplier, ReplicaPusher, RingFollower, settleWindowMs,
  SettleWindow, SyncLoop, SyncReceipts, VersionClock, WriteCoordinator, ConditionalWriter, CounterWriter, IdempotencyCache, ClockOffsets, WritePath, DrainHandoff, HintHandoff, KeyHandoff, Readiness, depart, OwnershipCensus,
  LeaseTable, Leases, QuorumVote, ViewsDisagreement, hasMajority,
} from "./cluster/index.js";
import { CONDITIONAL_LIMITS, DRAIN_LIMITS, IDEMPOTENCY_LIMITS, LEASE_LIMITS, PEER_TIMEOUT_MS, REJOIN_HOLD_GOSSIP_ROUNDS, SHUTDOWN_LIMITS, VIEWS_DISAGREE_GOSSIP_ROUNDS } from "./core/limits.js";
import { withTimeout } from "./core/timeout.js";
import { KeyLock } from "./core/key-lock.js";
import { LOG } from "./log/index.js";
import type { Logger } from "./log/index.js";
import { ClientBytesBudget, type DashboardAssets } from "./http/index.js";
import { addSeeds, Gossiper, MemberTable, Prober } from "./membership/index.js";
import { createOtelMirror, HttpServerDurations, Metrics, PeerCallMetrics, RuntimeMetrics, type CacheFigures, type OtlpExporterFactory } from "./observability/index.js";
import { ConnectPeerTransport, type PeerTlsOptions } from "./peer/index.js";
import { EvictionLoop, ExpirationLoop, isLiveAt, ShardedStore, type VersionedRecord } from "./store/index.js";
import type { PeerTransport } from "./transport/index.js";

/** What createNode needs besides the configuration. */
export interface NodeDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
  /** The OpenAPI documents served by the listeners. */
  readonly documents: { readonly client: string; readonly management: string; readonly dashboard?: DashboardAssets | undefined };
  /** OTLP/HTTP endpoint for metrics export (OTEL_EXPORTER_OTLP_ENDPOINT), when set. */
  readonly otlpEndpoint?: string;
  /** OTLP export interval in ms (OTEL_METRIC_EXPORT_INTERVAL); 15 s when omitted. */
  readonly otlpIntervalMs?: number;
  /** Builds the OTLP exporter; required with otlpEndpoint (server.ts loads it on demand). */
  readonly otlpExporter?: OtlpExporterFactory;
  readonly serviceVersion: string;
  /** The peer transport; a ConnectPeerTransport when omitted (tests inject an in-memory one). */
  readonly transport?: PeerTransport;
  /** The node's metrics registry; a new one when omitted (simulations share it with their chaos transport). */
  readonly metrics?: Metrics;
  /**
   * The authenticator both the client and the management listener use (createAuthenticator,
   * built by server.ts before the node). Omitted only by in-process tests: the API is then open.
   */
  readonly auth?: Authenticator;
  /** Mutual-TLS options of the peer transport (peerTlsOptions(config.distTls)), when SERVICE_DIST_TLS_* are set. */
  readonly peerTls?: PeerTlsOptions;
  /** Subscribes to changes of the peer CA (LivePeerTls.onTrustChange): the peer client then renews its sessions. */
  readonly peerTrustChanges?: (listener: () => void) => void;
  /**
   * This process's boot id (server.ts draws a random UUID at start): with the node id it names the
   * node's counter slot, so a restarted node never reuses a slot. Omitted by in-process tests: it
   * is then drawn from `random` (a simulation that restarts a node passes a new one).
   */
  readonly bootId?: string;
  /**
   * The key of the store's own hash (StoreOptions.hashSeed): server.ts draws it from crypto random
   * bytes at start, so no client knows how this process places keys. Omitted by in-process tests:
   * it is then drawn from `random`, so a simulation replays from its seed.
   */
  readonly storeHashSeed?: HashSeed;
  /** How long store scans pause between slices; setImmediate when omitted. */
  readonly yieldToLoop?: YieldToLoop;
}

/** The parts every layer builds on: state, membership, the ring and the view of the cluster. */
export function buildFoundation(config: Config, deps: NodeDeps) {
  const { logger, clock } = deps;
  const metrics = deps.metrics ?? new Metrics();
  const peerCallMetrics = new PeerCallMetrics();
  const lifecycle = new Lifecycle({ nodeId: config.nodeId, metrics, logger, nowMs: () => clock.nowMs() });
  const versions = new VersionClock(clock);
  const clockOffsets = new ClockOffsets({ clock, metrics });
  const members = new MemberTable({ selfId: config.nodeId, selfAddress: formatAddress(config.distAddr), selfApiUrl: config.apiAdvertiseUrl, selfMgmtUrl: config.mgmtAdvertiseUrl, clock, metrics, logger });
  addSeeds(members, config.seeds, config.replication, logger);
  // A peer that left or was pruned stops counting toward the median clock (at the end of the turn:
  // once for a burst of changes).
  members.onChange(oncePerTurn(deps.timers, () => clockOffsets.retain(new Set(members.list().filter((m) => m.state !== "dead").map((m) => m.id)))));
  // A departed peer's call series leave /metrics (which ones: followDepartures, in node.ts).
  members.onChange(oncePerTurn(deps.timers, () => peerCallMetrics.forgetDeparted()));
  const ring = new RingFollower({ members, replication: config.replication, clock });
  const settle = new SettleWindow({ clock, ring, windowMs: settleWindowMs(config.hintTtlMs, config.rebalanceIntervalMs) });
  const view = createClusterView({ selfId: config.nodeId, members, ring, settle });
  // Tombstones stay until every known peer has pulled them (sync-receipts.ts).
  const peers = () => members.knownIds().filter((id) => id !== config.nodeId);
  const receipts = new SyncReceipts({ peers, clock, metrics, logger, tombstoneTtlMs: config.tombstoneTtlMs, enabled: config.autoSyncIntervalMs > 0 });
  const store = new ShardedStore({
    shards: config.evictionShards,
    capacity: config.capacity,
    algorithm: config.evictionAlgorithm,
    tombstoneTtlMs: config.tombstoneTtlMs,
    tombstoneBytesMax: config.tombstoneBytesMax,
    tombstoneHoldAfter: () => receipts.holdAfterMs(),
    maxDataBytes: config.maxDataBytes,
    hashSeed: deps.storeHashSeed ?? { k0: randomInt(deps.random, 2 ** 32), k1: randomInt(deps.random, 2 ** 32) },
    defer: (fn) => deps.timers.defer(fn),
    clock,
    metrics,
  });
  const transport: PeerTransport =
    deps.transport ?? new ConnectPeerTransport({
      token: config.peerToken,
      compressionThresholdBytes: config.compressionThresholdBytes,
      tls: deps.peerTls,
      trustChanges: deps.peerTrustChanges,
      metrics,
      callMetrics: peerCallMetrics,
      monotonicMs: () => clock.monotonicMs(),
    });
  const holdMs = REJOIN_HOLD_GOSSIP_ROUNDS * config.gossipIntervalMs;
  const vote = new QuorumVote({ holdMs, knownCount: () => view.knownCount(), majority: () => hasMajority(view.aliveCount(), view.knownCount()), logger, metrics });
  // Hearsay of pruned members, again and again for longer than a rejoin takes (quorum-vote.ts).
  const disagreement = new ViewsDisagreement(holdMs, VIEWS_DISAGREE_GOSSIP_ROUNDS * config.gossipIntervalMs);
  const viewsDisagree = () => disagreement.disagree(members.prunedHeardAliveAtMs, clock.nowMs());
  const contact = new ContactGuard({ clock, timers: deps.timers, view, store, metrics, logger, tombstoneTtlMs: config.tombstoneTtlMs, intervalMs: config.heartbeatIntervalMs, vote, viewsDisagree });
  return { metrics, peerCallMetrics, lifecycle, store, versions, clockOffsets, members, ring, settle, view, transport, contact, vote, receipts };
}

export type Foundation = ReturnType<typeof buildFoundation>;

/** The data path: the apply path, writes (coordinate, forward, push, hint), reads and listings. */
export function buildDataPath(config: Config, deps: NodeDeps, f: Foundation) {
  const { logger, clock, timers } = deps;
  const { metrics, store, versions, view, transport } = f;
  const selfId = config.nodeId;
  // Failed migrations queue like hints, with the same caps and TTL.
  // One byte cap (SERVICE_HINT_MAX_BYTES) covers both queues together.
  const queueDeps = { clock, metrics, logger, limits: { ttlMs: config.hintTtlMs, maxPerNode: config.hintMaxPerNode, maxBytes: config.hintMaxBytes }, budget: new HintBytes(config.hintMaxBytes) };
  const hints = new HintQueue({ ...queueDeps, names: HINTED_METRICS });
  const migrations = new HintQueue({ ...queueDeps, names: MIGRATION_METRICS });
  const applier = new ReplicaApplier({ selfId, store, versions, clock, metrics, logger, ring: view.ring, versionFloor: () => f.contact.versionFloor });
  const pusher = new ReplicaPusher({ transport, selfId, hints, timers, metrics });
  const repairer = new ReadRepairer({ transport, selfId, metrics, logger, timers, batchSize: config.readRepairBatchSize, intervalMs: config.readRepairIntervalMs });
  // Stampede leases of the keys this node is the primary of; every stored record reaches it (node.ts).
  const leaseTable = new LeaseTable({
    clock,
    timers,
    random: deps.random,
    metrics,
    limits: LEASE_LIMITS,
    liveRecord: (key) => {
      const rec = store.peek(key);
      return isLiveAt(rec, clock.nowMs()) ? rec : undefined;
    },
  });
  const coordinator = new WriteCoordinator({ selfId, store, versions, metrics, view, pusher, replication: config.replication, clockGuard: f.clockOffsets, leases: leaseTable, acknowledges: () => f.vote.acknowledges });
  const reader = new Reader({ selfId, store, clock, timers, view, transport, repairer, applier, metrics, replication: config.replication, votes: () => f.vote.voting });
  const forwarder = new Forwarder({ selfId, transport, timers, clock, metrics });
  const locks = new KeyLock(CONDITIONAL_LIMITS);
  // Conditional writes and increments are both read-modify-write on the key: they share its lock.
  const locked = { store, view, coordinator, newestRecord: reader.newestRecord.bind(reader), locks, metrics };
  const conditional = new ConditionalWriter({ ...locked, clock });
  const counters = new CounterWriter({
    ...locked,
    clock,
    idempotency: new IdempotencyCache({ clock, limits: IDEMPOTENCY_LIMITS }),
    writerId: `${selfId}@${deps.bootId ?? bootIdFrom(deps.random)}`,
    selfId,
  });
  const writes = new WritePath({ selfId, view, coordinator, conditional, counters, forwarder, applier, store, metrics, logger, acknowledges: () => f.vote.acknowledges });
  const keys = new KeyLister({ store, view, transport, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop });
  const leases = new Leases({ selfId, view, transport, table: leaseTable, logger });
  const cache = new ClusterCache({
    nodeId: selfId,
    lifecycle: f.lifecycle,
    view,
    reader,
    writes,
    keys,
    leases,
    clock,
    writeConsistency: config.writeConsistency,
    readConsistency: config.readConsistency,
    // A tombstone or an expired record reads as a miss (404), whatever its size.
    localValueBytes: (key) => {
      const h = store.peekHeader(key);
      return isLiveAt(h, clock.nowMs()) ? h.valueBytes : 0;
    },
  });
  const forwards = new ForwardReceiver({ selfId, clock, deadlineMs: PEER_TIMEOUT_MS, lifecycle: f.lifecycle, view, writes, writeConsistency: config.writeConsistency });
  const peerCalls = () => forwarder.calls + pusher.calls + reader.calls;
  const rememberPushed = (rec: VersionedRecord) => counters.rememberPushed(rec);
  return { hints, migrations, applier, repairer, cache, keys, forwards, peerCalls, leaseTable, leases, rememberPushed };
}

export type DataPath = ReturnType<typeof buildDataPath>;

/** The background loops: hint replay, rebalance, anti-entropy and catch-up, store loops, membership. */
export function buildLoops(config: Config, deps: NodeDeps, f: Foundation, d: DataPath) {
  const { logger, clock, timers, random } = deps;
  const { metrics, store, view, transport, members } = f;
  const selfId = config.nodeId;
  const hints = new HintReplayLoop({ queues: [d.hints, d.migrations], transport, selfId, timers, intervalMs: config.hintReplayMs, logger, holdExpiry: () => f.lifecycle.draining });
  const rebalancer = new Rebalancer({
    yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop,
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
    holdMaxMs: copyHoldMaxMs(config.tombstoneTtlMs),
  });
  const scan = new MerkleScan({
    selfId,
    store,
    clock,
    ring: view.ring,
    yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop,
    chunkSize: config.merkleChunkSize,
    tombstoneTtlMs: config.tombstoneTtlMs,
    reportedBy: (peerId) => f.receipts.reportedBy(peerId),
  });
  const syncer = new MerkleSyncer({ selfId, scan, transport, applier: d.applier, metrics, logger, clock, receipts: f.receipts, mayReport: () => f.vote.voting });
  const antiEntropy = new SyncLoop({ view, syncer, metrics, logger, clock, timers, intervalMs: config.autoSyncIntervalMs, maxFactor: config.autoSyncMaxFactor });
  const catchUp = new CatchUp({ view, syncer, logger, timers, retryMs: config.heartbeatIntervalMs, hasSeeds: config.seeds.length > 0 });
  const storeLoopDeps = { store, clock, timers, metrics, logger };
  const eviction = new EvictionLoop(storeLoopDeps, config.evictionIntervalMs);
  const expiration = new ExpirationLoop(storeLoopDeps, config.expirationIntervalMs);
  const prober = new Prober({ members, transport, timers, random, metrics, logger, heartbeatMs: config.heartbeatIntervalMs, indirectProbeK: config.indirectProbeK, deadAfterMs: config.deadAfterMs, clock, offsets: f.clockOffsets });
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
  return { hints, rebalancer, antiEntropy, catchUp, eviction, expiration, prober, gossiper, merkle: { syncer, answers: new MerkleAnswers(scan, f.receipts) } };
}

export type Loops = ReturnType<typeof buildLoops>;

/** The drain hand-off (what a draining node does until it is safe to stop) and leaving. */
export function buildDrain(config: Config, deps: NodeDeps, f: Foundation, d: DataPath, l: Loops) {
  const { logger, clock, timers } = deps;
  const { metrics, store, view, transport, members } = f;
  const selfId = config.nodeId;
  const reachable = (id: string) => {
    const m = members.get(id);
    return m !== undefined && m.state === "alive" && m.draining !== true;
  };
  const keys = new KeyHandoff({ selfId, store, view, transport, migrations: d.migrations, metrics, clock, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop, reachable });
  const hintHandoff = new HintHandoff({
    selfId,
    view,
    transport,
    queues: [d.hints, d.migrations],
    reachable,
    onError: (receiver, target, err) => logger.warn(LOG.drainHandoffFailed, { receiver, target, error: err instanceof Error ? err.message : String(err) }),
  });
  const handoff = new DrainHandoff({
    view,
    lifecycle: f.lifecycle,
    membership: {
      seesSelfDraining: (id) => members.seesSelfDraining(id),
      get left() {
        return members.hasLeft;
      },
      peersLeaving: () => {
        const peers = members.peers();
        return peers.length > 0 && peers.every((m) => m.draining);
      },
    },
    announce: (peer) => l.gossiper.pushTo(peer),
    hints: d.hints,
    migrations: d.migrations,
    keys,
    hintHandoff,
    replay: () => l.hints.runReplayTick(),
    repairsQueued: () => d.repairer.queued,
    timers,
    intervalMs: DRAIN_LIMITS.tickMs,
  });
  /** Announces to every alive peer that this node left (their removal lowers quorum sizes). */
  const leave = async (): Promise<void> => {
    members.leave();
    const told = Promise.all(view.alivePeers().map((p) => l.gossiper.pushTo(p)));
    await withTimeout(timers, SHUTDOWN_LIMITS.leaveMaxMs, told, "leave").catch(() => logger.warn(LOG.leaveTimedOut, { after_ms: SHUTDOWN_LIMITS.leaveMaxMs }));
  };
  const readiness = new Readiness({
    clock,
    catchupTimeoutMs: config.readyCatchupTimeoutMs,
    draining: () => f.lifecycle.draining,
    contacted: () => members.contacted,
    hasSeeds: config.seeds.length > 0,
    everCaughtUp: () => l.catchUp.everCaughtUp,
  });
  const departure = (reason: string) =>
    depart(
      {
        drain: (r) => f.lifecycle.drain(r),
        status: () => handoff.status(),
        leave,
        clock,
        timers,
        logger,
        timeoutMs: config.drainTimeoutMs,
        progressEveryMs: DRAIN_LIMITS.progressEveryMs,
        pollMs: DRAIN_LIMITS.pollMs,
      },
      reason,
    );
  return { handoff, leave, readiness, depart: departure };
}

export type Drain = ReturnType<typeof buildDrain>;

/** The operator metrics: request and runtime figures, the ownership census, the OpenTelemetry export. */
export function buildObservability(config: Config, deps: NodeDeps, f: Foundation) {
  const { clock, timers } = deps;
  const { store } = f;
  const http = new HttpServerDurations();
  const inflight = new ClientBytesBudget(config.maxInflightBytes);
  const runtime = new RuntimeMetrics();
  const census = new OwnershipCensus({ selfId: config.nodeId, store, view: f.view, clock, timers, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop });
  const cache = (): CacheFigures => {
    const c = store.counters;
    return {
      hits: c.hits,
      misses: c.misses,
      sets: c.sets,
      deletes: c.deletes,
      evictions: c.evictions,
      expirations: c.expirations,
      items: store.items,
      bytes: store.bytes,
      capacity: store.capacity,
      dataBytes: store.dataBytes,
      maxDataBytes: store.maxDataBytes,
      tombstones: store.tombstones,
      storeMemory: store.memory(),
      byRole: census.last,
    };
  };
  const otel = createOtelMirror(
    { metrics: f.metrics, http, peers: f.peerCallMetrics, runtime, cache, inflight },
    { nodeId: config.nodeId, serviceVersion: deps.serviceVersion, nowMs: () => clock.nowMs(), otlpEndpoint: deps.otlpEndpoint, otlpIntervalMs: deps.otlpIntervalMs, otlpExporter: deps.otlpExporter,
      onScrapeError: (err) => deps.logger.error(LOG.metricsScrapeFailed, { error: String(err) }) },
  );
  return {
    http,
    inflight,
    otel,
    start: () => {
      runtime.start(timers);
      census.start();
    },
    stop: () => {
      runtime.stop();
      census.stop();
    },
  };
}

export type Observability = ReturnType<typeof buildObservability>;

