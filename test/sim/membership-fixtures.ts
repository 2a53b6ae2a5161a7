// Shared helpers of the membership, rebalance and anti-entropy simulations: member views, log
// records in order, counter snapshots, and a node that joins a running cluster.
//
// joinNode() works around a gap of test/helpers/sim-cluster.ts: the harness builds every node at
// start, each with every other node as a seed, so a "new" node is already in everyone's member
// table and ring. joinNode() builds a node exactly as the harness does (same network, chaos,
// clock, seed-derived random, recording logger) but with only the running nodes as its seeds, so
// they learn about it through its join; it is appended to c.nodes so c.node(id), c.sim(id) and
// c.stop() cover it.
import { expect } from "chai";
import { seededRandom } from "../../src/core/random.js";
import { recordingLogger } from "../../src/log/index.js";
import type { MemberState } from "../../src/membership/index.js";
import { createNode } from "../../src/node.js";
import type { CounterName, GaugeName } from "../../src/observability/index.js";
import { Metrics } from "../../src/observability/index.js";
import { ChaosTransport } from "../../src/transport/index.js";
import type { SimCluster, SimNode } from "../helpers/sim-cluster.js";
import { testConfig } from "../helpers/test-config.js";

/** The dist address the harness gives node `id`. */
export const addressOf = (id: string): string => `${id}.sim:7946`;

/** Builds node `id` with the running nodes as seeds, registers and starts it. */
export function joinNode(c: SimCluster, id: string, env: Record<string, string> = {}): SimNode {
  const seeds = c.nodes.map((n) => `${n.id}@${n.address}`).join(",");
  const config = testConfig({
    SERVICE_NODE_ID: id,
    SERVICE_DIST_ADDR: addressOf(id),
    SERVICE_SEEDS: seeds,
    SERVICE_API_ADDR: ":0",
    SERVICE_MGMT_ADDR: ":0",
    ...env,
  });
  const logger = recordingLogger("debug");
  const metrics = new Metrics();
  const transport = new ChaosTransport(c.network.transport(), c.chaos, id, metrics);
  const node = createNode(config, {
    logger,
    clock: c.clock,
    timers: c.clock,
    random: seededRandom(c.seed + id.length),
    documents: { client: "openapi: 3.1.0\n", management: "openapi: 3.1.0\n" },
    serviceVersion: "test",
    transport,
    metrics,
  });
  c.network.register(addressOf(id), node.endpoint);
  node.start();
  const sim: SimNode = { id, address: addressOf(id), node, logger };
  c.nodes.push(sim);
  return sim;
}

/** "id:state" of every member `viewer` lists, sorted by id. */
export function view(c: SimCluster, viewer: string): string[] {
  return c.node(viewer).members.list().map((m) => `${m.id}:${m.state}`);
}

/** The state `viewer` holds for `id`, or "absent". */
export function stateOf(c: SimCluster, viewer: string, id: string): MemberState | "absent" {
  return c.node(viewer).members.get(id)?.state ?? "absent";
}

/** Asserts that every listed node sees exactly `members`, all alive. */
export function expectFullyAlive(c: SimCluster, viewers: readonly string[], members: readonly string[]): void {
  const want = [...members].sort().map((id) => `${id}:alive`);
  for (const v of viewers) expect(view(c, v), `membership as ${v} sees it`).to.deep.equal(want);
}

/** Records of `id` from index `from` on, as "level message" (optionally only some messages). */
export function recordsSince(c: SimCluster, id: string, from: number, messages?: readonly string[]): string[] {
  return c
    .sim(id)
    .logger.records.slice(from)
    .filter((r) => !messages || messages.includes(r.message))
    .map((r) => `${r.level} ${r.message}`);
}

/** Records of `id` about peer `peer` with one of `messages`, as "level message", in order. */
export function peerRecords(c: SimCluster, id: string, peer: string, messages: readonly string[], from = 0): string[] {
  return c
    .sim(id)
    .logger.records.slice(from)
    .filter((r) => messages.includes(r.message) && r.fields.peer === peer)
    .map((r) => `${r.level} ${r.message}`);
}

/** Current record count of every node (a mark for recordsSince). */
export function recordMarks(c: SimCluster): Record<string, number> {
  return Object.fromEntries(c.nodes.map((n) => [n.id, n.logger.records.length]));
}

/** Sum of a counter over every node. */
export function total(c: SimCluster, name: CounterName | GaugeName): number {
  return c.nodes.reduce((s, n) => s + n.node.metrics.get(name), 0);
}

/** Every `dist.rebalance.*` and `dist.migration.*` metric of every node. */
export function rebalanceCounters(c: SimCluster): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of c.nodes) {
    const snap = n.node.metrics.snapshot() as Record<string, number>;
    for (const [k, v] of Object.entries(snap)) if (k.startsWith("dist.rebalance.") || k.startsWith("dist.migration.")) out[`${n.id} ${k}`] = v;
  }
  return out;
}

/** Every node's incarnation as each node sees it, and each node's membership version. */
export function membershipFingerprint(c: SimCluster): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of c.nodes) {
    out[n.id] = `v${n.node.members.version} ` + n.node.members.list().map((m) => `${m.id}:${m.state}@${m.incarnation}`).join(" ");
  }
  return out;
}

/** Advances in steps of `stepMs` until `done()` or `maxMs` elapsed; returns the time it took. */
export async function advanceUntil(c: SimCluster, done: () => boolean, maxMs: number, stepMs = 100): Promise<number> {
  let waited = 0;
  while (!done() && waited < maxMs) {
    await c.advance(stepMs);
    waited += stepMs;
  }
  expect(done(), `condition not reached within ${maxMs} ms`).to.equal(true);
  return waited;
}
