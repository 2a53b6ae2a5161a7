// Shared helpers of the membership, rebalance and anti-entropy simulations: member views, log
// records in order and counter snapshots. A node joins a running cluster with c.join(id, env).
import { expect } from "chai";
import type { MemberState } from "../../src/membership/index.js";
import type { CounterName, GaugeName } from "../../src/observability/index.js";
import type { SimCluster } from "../helpers/sim-cluster.js";

/** The dist address the harness gives node `id`. */
export const addressOf = (id: string): string => `${id}.sim:7946`;

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
