// A 3-node cluster (replication 3, QUORUM writes, ONE reads) on loopback against one node, load
// through the cluster's first node. Nothing is pinned here: four processes plus wrk share the
// cores as the kernel sees fit, on both sides alike.
import { availableParallelism } from "node:os";
import { alternate, GET, PUT, type RoundResult, type Settings, type Side, type Workload } from "../measure.js";
import { median } from "../stats.js";
import { fmt, ratioFigure, type Figure, type Report } from "../report.js";
import { startNodes } from "../servers.js";

const NODES = 3;
const ENV = { SERVICE_REPLICATION: "3", SERVICE_WRITE_CONSISTENCY: "quorum", SERVICE_READ_CONSISTENCY: "one" };

const oneNode: Side = { name: "one node", start: () => startNodes(1, ["unpinned"], ENV), generator: "unpinned" };
const cluster: Side = { name: `${NODES} nodes`, start: () => startNodes(NODES, Array(NODES).fill("unpinned"), ENV), generator: "unpinned" };

export async function clusterPart(method: "PUT" | "GET", s: Settings, report: Report): Promise<void> {
  const what = method === "PUT" ? "PUT, QUORUM" : "GET, ONE";
  report.section(
    `cluster ${what}: ${NODES} nodes (replication 3) through one node / one node`,
    `fresh processes per round, unpinned; wrk -t1 -c${s.connections} (unpinned) to the first node; random keys out of ${fmt(s.keys)}; ` +
      `${s.warmupSeconds} s warm-up, ${s.seconds} s measured; ${s.rounds} rounds alternating; CPU is the entry node's, and all nodes' beside it; peer RPCs are dist.peer.calls of all nodes`,
  );
  const rounds = await alternate([oneNode, cluster], method === "PUT" ? PUT : GET, s, (r) => report.round(r));
  const many = rounds.get(cluster.name) as RoundResult[];
  const one = rounds.get(oneNode.name) as RoundResult[];
  const id = method === "PUT" ? "cluster-put" : "cluster-get";
  const target = method === "PUT" ? "≥ 0.8" : "≥ 0.9";
  const ops = ratioFigure(`${id}.ops`, `${NODES} nodes, ${what} through one node / one node`, many, one, (r) => r.opsPerSec, target);
  report.figure(sharedCores(ops));
  report.figure(ratioFigure(`${id}.cpu`, `  entry node CPU per request / one node's`, many, one, (r) => r.cpuUsPerRequest));
  // The cost of replication itself: every node's CPU per client request. Unlike ops/s on a machine
  // with fewer cores than processes, it hardly depends on how the kernel shared the cores.
  report.figure(ratioFigure(`${id}.cpu-all`, `  CPU of all ${NODES} nodes per request / one node's`, many, one, (r) => r.allCpuUsPerRequest));
  report.figure(peerCallsFigure(`${id}.peer-calls`, `  peer RPCs per client ${method === "PUT" ? "write" : "read"} (all nodes)`, many));
}

/**
 * `ops` with a note when the machine has no more cores than nodes: the nodes and wrk then take
 * each other's CPU, and an ops/s ratio is as much the machine's as the nodes'.
 */
function sharedCores(ops: Figure): Figure {
  const cores = availableParallelism();
  return cores > NODES ? ops : { ...ops, note: `${ops.note ? `${ops.note} ` : ""}(${cores} cores for ${NODES} nodes and wrk: they share cores, read with care)` };
}

/** The median peer RPCs per client request of `rs` (dist.peer.calls of all nodes), with its spread. */
function peerCallsFigure(id: string, label: string, rs: readonly RoundResult[]): Figure {
  const calls = rs.map((r) => r.peerCallsPerRequest ?? 0);
  return { id, label, value: median(calls), unit: "", digits: 2, min: Math.min(...calls), max: Math.max(...calls), valid: rs.every((r) => r.errors === 0), note: "(dist.peer.calls)" };
}

/** A conditional PUT that holds: `If-Match: *` on the preloaded keys. */
export const CONDITIONAL_PUT: Workload = Object.freeze({ name: "PUT If-Match", method: "PUT", header: "If-Match: *" });

/**
 * Conditional PUT (`If-Match: *`, QUORUM, evaluated by each key's primary under its lock) against
 * the plain PUT, both on the same 3-node cluster through its first node: the target is ≥ 0.7.
 */
export async function clusterConditionalPart(s: Settings, report: Report): Promise<void> {
  // A primary reads a quorum of the owners before each conditional write while its ring changed
  // within the settle window (the hint TTL, 30 s by default): a cluster this young is not the
  // steady state. With a 2 s hint TTL the window has passed before the warm-up ends.
  const settled: Side = { ...cluster, start: () => startNodes(NODES, Array(NODES).fill("unpinned"), { ...ENV, SERVICE_HINT_TTL: "2s" }) };
  const conditional: Side = { ...settled, name: `${NODES} nodes PUT If-Match`, workload: CONDITIONAL_PUT };
  const plain: Side = { ...settled, name: `${NODES} nodes PUT`, workload: PUT };
  report.section(
    `cluster conditional PUT: If-Match: * / plain PUT, ${NODES} nodes (replication 3, QUORUM) through one node`,
    `fresh processes per round, unpinned; wrk -t1 -c${s.connections} (unpinned) to the first node; random keys out of ${fmt(s.keys)} (preloaded, so every condition holds); ` +
      `${s.warmupSeconds} s warm-up, ${s.seconds} s measured; ${s.rounds} rounds alternating; CPU is the entry node's; SERVICE_HINT_TTL=2s on both sides (steady state: no quorum read before each conditional write)`,
  );
  const rounds = await alternate([plain, conditional], PUT, s, (r) => report.round(r));
  const c = rounds.get(conditional.name) as RoundResult[];
  const p = rounds.get(plain.name) as RoundResult[];
  report.figure(sharedCores(ratioFigure("cluster-cput.ops", `${NODES} nodes, conditional PUT / plain PUT (ops/s)`, c, p, (r) => r.opsPerSec, "≥ 0.7")));
  report.figure(ratioFigure("cluster-cput.cpu", "  entry node CPU per request, conditional / plain", c, p, (r) => r.cpuUsPerRequest));
  report.figure(ratioFigure("cluster-cput.cpu-all", `  CPU of all ${NODES} nodes per request, conditional / plain`, c, p, (r) => r.allCpuUsPerRequest));
  for (const [side, rs] of [["conditional", c], ["plain", p]] as const) report.figure(peerCallsFigure(`cluster-cput.peer-calls.${side}`, `  peer RPCs per ${side} write (all nodes)`, rs));
}
