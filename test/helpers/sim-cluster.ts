// Several real nodes (createNode) in one process over the in-memory network, with a manual
// clock and seeded fault injection: deterministic, no sleeps. A failing run prints its seed.
import type { YieldToLoop } from "../../src/core/clock.js";
import { hash32 } from "../../src/core/hash.js";
import { bootIdFrom, seededRandom } from "../../src/core/random.js";
import { recordingLogger, type RecordingLogger } from "../../src/log/index.js";
import { createNode, type HypercacheNode } from "../../src/node.js";
import { Chaos, ChaosTransport, InMemoryNetwork } from "../../src/transport/index.js";
import { Metrics } from "../../src/observability/index.js";
import { flush, ManualClock } from "./manual-clock.js";
import { testConfig } from "./test-config.js";

export interface SimNode {
  readonly id: string;
  readonly address: string;
  readonly node: HypercacheNode;
  readonly logger: RecordingLogger;
}

export interface SimCluster {
  readonly seed: number;
  readonly clock: ManualClock;
  readonly network: InMemoryNetwork;
  readonly chaos: Chaos;
  readonly nodes: SimNode[];
  node(id: string): HypercacheNode;
  sim(id: string): SimNode;
  /** Advances time, letting promises settle after every timer. */
  advance(ms: number): Promise<void>;
  /** Lets pending promises and microtasks run without moving time. */
  settle(): Promise<void>;
  /** Takes a node off the network both ways (a crash: its state is kept for a revive). */
  crash(id: string): void;
  /** Puts a crashed node back (same state, as after a network blip). */
  revive(id: string): void;
  /** Builds a fresh node with the same id and address (a restart that lost its memory). */
  restart(id: string): Promise<SimNode>;
  /** Builds and starts a brand-new node seeded with the running nodes (a join). */
  join(id: string, env?: Record<string, string>): SimNode;
  /** Stops a node and takes it out of the cluster for good (its peers will prune it). */
  remove(id: string): Promise<void>;
  stop(): Promise<void>;
}

export interface SimOptions {
  readonly nodes: number;
  readonly seed?: number;
  /** SERVICE_* overrides for every node. */
  readonly env?: Record<string, string>;
  /** Whether to start the background loops (hint replay, eviction, ...). Default true. */
  readonly startLoops?: boolean;
  /** How store scans pause between slices (setImmediate when omitted). */
  readonly yieldToLoop?: YieldToLoop;
}

const DOCS = { client: "openapi: 3.1.0\n", management: "openapi: 3.1.0\n" };

/**
 * For a describe block: a simCluster factory whose clusters are stopped after each test (also
 * when the test fails).
 */
export function simClusters(): (opts: SimOptions) => Promise<SimCluster> {
  let started: SimCluster[] = [];
  afterEach(async () => {
    const stopping = started;
    started = [];
    for (const c of stopping) await c.stop();
  });
  return async (opts) => {
    const c = await simCluster(opts);
    started.push(c);
    return c;
  };
}

export async function simCluster(opts: SimOptions): Promise<SimCluster> {
  const seed = opts.seed ?? 1;
  const clock = new ManualClock();
  const network = new InMemoryNetwork();
  const random = seededRandom(seed);
  const chaos = new Chaos(random, clock);
  const ids = Array.from({ length: opts.nodes }, (_, i) => `n${i + 1}`);
  const addressOf = (id: string) => `${id}.sim:7946`;

  /** Restarts so far per node id: a restarted process draws a new boot id (main.ts), so a new counter slot. */
  const restarts = new Map<string, number>();
  const build = (id: string, seedIds: readonly string[] = ids, extraEnv: Record<string, string> = {}, bootId?: string): SimNode => {
    const seeds = seedIds.filter((o) => o !== id).map((o) => `${o}@${addressOf(o)}`).join(",");
    const config = testConfig({
      SERVICE_NODE_ID: id,
      SERVICE_DIST_ADDR: addressOf(id),
      SERVICE_SEEDS: seeds,
      SERVICE_API_ADDR: ":0",
      SERVICE_MGMT_ADDR: ":0",
      ...opts.env,
      ...extraEnv,
    });
    const logger = recordingLogger("debug");
    const metrics = new Metrics();
    const transport = new ChaosTransport(network.transport(), chaos, id, metrics);
    // Each node draws from its own stream, derived from the cluster seed and its id.
    const node = createNode(config, { logger, clock, timers: clock, random: seededRandom((seed ^ hash32(id)) >>> 0), documents: DOCS, serviceVersion: "test", transport, metrics, yieldToLoop: opts.yieldToLoop, ...(bootId !== undefined ? { bootId } : {}) });
    network.register(addressOf(id), node.endpoint);
    if (opts.startLoops !== false) node.start();
    return { id, address: addressOf(id), node, logger };
  };

  const nodes = ids.map((id) => build(id));
  // Started nodes run their start-up catch-up (a timer due now) before they count towards quorum reads.
  if (opts.startLoops !== false) {
    await clock.advanceAsync(0);
    await flush(10);
  }
  const cluster: SimCluster = {
    seed,
    clock,
    network,
    chaos,
    nodes,
    node: (id) => cluster.sim(id).node,
    sim: (id) => {
      const n = nodes.find((s) => s.id === id);
      if (!n) throw new Error(`no sim node ${id} (seed=${seed})`);
      return n;
    },
    advance: (ms) => clock.advanceAsync(ms),
    settle: () => flush(5),
    crash: (id) => {
      network.unregister(addressOf(id));
      chaos.isolate(id);
    },
    revive: (id) => {
      network.register(addressOf(id), cluster.node(id).endpoint);
      chaos.reconnect(id);
    },
    async restart(id) {
      const old = cluster.sim(id);
      network.unregister(old.address);
      await old.node.stop();
      chaos.reconnect(id);
      const n = (restarts.get(id) ?? 0) + 1;
      restarts.set(id, n);
      // Its own stream for the boot id alone: the node's other draws replay as before.
      const fresh = build(id, ids, {}, bootIdFrom(seededRandom((seed ^ hash32(`${id}#${n}`)) >>> 0)));
      nodes[nodes.indexOf(old)] = fresh;
      return fresh;
    },
    join(id, env) {
      const fresh = build(id, nodes.map((n) => n.id).concat(id), env);
      nodes.push(fresh);
      return fresh;
    },
    async remove(id) {
      const gone = cluster.sim(id);
      network.unregister(gone.address);
      chaos.isolate(id);
      await gone.node.stop();
      nodes.splice(nodes.indexOf(gone), 1);
    },
    async stop() {
      for (const n of nodes) await n.node.stop();
    },
  };
  return cluster;
}

/** Wraps a mocha test body so a failure names the seed that replays it. */
export function withSeed(seed: number, body: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await body();
    } catch (err) {
      if (err instanceof Error) err.message = `${err.message} (seed=${seed})`;
      throw err;
    }
  };
}
