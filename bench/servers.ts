// The servers under test, each a fresh process: the ceiling (bench/baseline-server.mjs), one
// hypercache-server node, and a cluster of nodes on loopback seeded with each other.
import { fileURLToPath } from "node:url";
import { freePorts } from "../test/helpers/ports.js";
import { getJson, request } from "./http.js";
import { startNodeProcess, type Placement, type Proc } from "./proc.js";

const NODE_BIN = fileURLToPath(new URL("../dist/src/main.js", import.meta.url));
const CEILING = fileURLToPath(new URL("./baseline-server.mjs", import.meta.url));

/** How long a server may take to answer its first request (a cluster: to see every member alive). */
const READY_TIMEOUT_MS = 30_000;
const READY_POLL_MS = 50;

/** What a load is sent to: the client API port of the entry process, and what to read from it. */
export interface Target {
  readonly port: number;
  /** The process receiving the load (its CPU is the per-request figure). */
  readonly entryPid: number;
  /** Every server process of the target, the entry one first. */
  readonly pids: readonly number[];
  /** Management ports of hypercache-server processes (none for the ceiling). */
  readonly mgmtPorts: readonly number[];
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(what: string, procs: readonly Proc[], check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    const dead = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    if (dead) throw new Error(`${what}: process ${dead.pid} exited (${dead.child.exitCode ?? dead.child.signalCode})`);
    if (await check().catch(() => false)) return;
    await sleep(READY_POLL_MS);
  }
  throw new Error(`${what}: not ready within ${READY_TIMEOUT_MS} ms`);
}

/** The ceiling: bare node:http + Map with the same GET and PUT routes and answers. */
export async function startCeiling(placement: Placement, nodeId: string): Promise<Target> {
  const [port] = (await freePorts(1)) as [number];
  const proc = startNodeProcess(placement, [CEILING, String(port), nodeId], {});
  try {
    await waitUntil("ceiling", [proc], async () => (await request(port, "GET", "/healthz")).status > 0);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { port, entryPid: proc.pid, pids: [proc.pid], mgmtPorts: [], stop: () => proc.stop() };
}

interface NodePorts {
  readonly id: string;
  readonly api: number;
  readonly mgmt: number;
  readonly dist: number;
}

function nodeEnv(p: NodePorts, env: Record<string, string>): Record<string, string> {
  return {
    SERVICE_NODE_ID: p.id,
    SERVICE_API_ADDR: `127.0.0.1:${p.api}`,
    SERVICE_MGMT_ADDR: `127.0.0.1:${p.mgmt}`,
    SERVICE_DIST_ADDR: `127.0.0.1:${p.dist}`,
    SERVICE_LOG_LEVEL: "warn",
    ...env,
  };
}

interface Members {
  members: Array<{ id: string; state: string }>;
}

/**
 * Starts `count` hypercache-server nodes (one: a single node; more: each seeded with the others)
 * and waits until every node answers and, in a cluster, sees every member alive. `placements[i]`
 * places node i; the load goes to the first node.
 */
export async function startNodes(count: number, placements: readonly Placement[], env: Record<string, string>, token?: string, bin = NODE_BIN): Promise<Target> {
  const ports = await freePorts(3 * count);
  const layout: NodePorts[] = Array.from({ length: count }, (_, i) => ({
    id: `bench-${i + 1}`,
    api: ports[3 * i] as number,
    mgmt: ports[3 * i + 1] as number,
    dist: ports[3 * i + 2] as number,
  }));
  const procs = layout.map((p, i) => {
    const seeds = layout.filter((o) => o !== p).map((o) => `${o.id}@127.0.0.1:${o.dist}`).join(",");
    return startNodeProcess(placements[i] ?? "unpinned", [bin], nodeEnv(p, { ...(seeds ? { SERVICE_SEEDS: seeds } : {}), ...env }));
  });
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
  };
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  try {
    await waitUntil("hypercache-server", procs, async () => {
      for (const p of layout) {
        if ((await request(p.api, "GET", "/healthz")).status !== 200) return false;
        const seen = await getJson<Members>(p.mgmt, "/cluster/members", headers);
        if (seen.members.filter((m) => m.state === "alive").length !== count) return false;
      }
      return true;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { port: layout[0]?.api as number, entryPid: (procs[0] as Proc).pid, pids: procs.map((p) => p.pid), mgmtPorts: layout.map((p) => p.mgmt), stop };
}

/** A counter from /dist/metrics summed over the nodes of `target`. */
export async function metricSum(target: Target, name: string): Promise<number> {
  let total = 0;
  for (const port of target.mgmtPorts) total += (await getJson<Record<string, number>>(port, "/dist/metrics"))[name] ?? 0;
  return total;
}
