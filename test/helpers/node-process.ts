// Starts the real hypercache-server (the built bin entry) as a child process on loopback ports
// picked at run time, and collects its JSON log records.
import { spawn, type ChildProcess } from "node:child_process";
import { totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { freePorts } from "./ports.js";
import { Waiters } from "./waiters.js";

export const BIN = fileURLToPath(new URL("../../dist/src/main.js", import.meta.url));

export interface LogRecord {
  level: string;
  message: string;
  node_id?: string;
  [field: string]: unknown;
}

export interface NodeProcess {
  readonly id: string;
  readonly apiPort: number;
  readonly mgmtPort: number;
  readonly distPort: number;
  readonly api: string;
  readonly mgmt: string;
  readonly dist: string;
  readonly child: ChildProcess;
  readonly logs: LogRecord[];
  readonly stderr: string[];
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Waits for a log record with this message (and optional matching fields). */
  waitForLog(message: string, timeoutMs?: number, where?: (r: LogRecord) => boolean): Promise<LogRecord>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface StartOptions {
  id?: string;
  env?: Record<string, string>;
  ports?: { api: number; mgmt: number; dist: number };
  /** Wait for this record before resolving; false to resolve at once. */
  readyMessage?: string | false;
  timeoutMs?: number;
  /** A command the node runs under, such as ["ip", "netns", "exec", "ns1"]. */
  wrap?: readonly string[];
}

/**
 * Node processes still running, killed when the test process exits: a suite whose before hook
 * failed half way (one of several nodes did not start) never stops the ones that did, and they
 * outlived the run (sdk-tls and sdk-plain were found running an hour after a failed run).
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of running) c.kill("SIGKILL");
});

function track(child: ChildProcess): void {
  running.add(child);
  child.once("exit", () => running.delete(child));
}

export async function startNode(opts: StartOptions = {}): Promise<NodeProcess> {
  const id = opts.id ?? "n1";
  const [api, mgmt, dist] = opts.ports ? [opts.ports.api, opts.ports.mgmt, opts.ports.dist] : await freePorts(3);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    SERVICE_NODE_ID: id,
    SERVICE_API_ADDR: `127.0.0.1:${api}`,
    SERVICE_MGMT_ADDR: `127.0.0.1:${mgmt}`,
    SERVICE_DIST_ADDR: `127.0.0.1:${dist}`,
    ...opts.env,
  };
  const argv = [...(opts.wrap ?? []), process.execPath, BIN];
  const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
  track(child);
  const logs: LogRecord[] = [];
  const stderr: string[] = [];
  const waiters = new Waiters();
  let buffer = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as LogRecord);
      } catch {
        logs.push({ level: "raw", message: line });
      }
      waiters.notify();
    }
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr.push(chunk);
    waiters.notify();
  });
  // 'close', not 'exit': it comes once stdout and stderr are drained too, so every record the
  // process wrote before exiting is in `logs` when `exited` resolves.
  const exited = new Promise<number | string>((resolve) => {
    child.once("close", (code, signal) => {
      resolve(code ?? signal ?? -1);
      waiters.notify();
    });
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const waitForLog = (message: string, timeoutMs = opts.timeoutMs ?? 15_000, where?: (r: LogRecord) => boolean) =>
    waiters.until<LogRecord>(
      () => {
        const found = logs.find((r) => r.message === message && (!where || where(r)));
        if (found) return { ok: found };
        if (hasExited) return { error: new Error(`node ${id} exited before logging ${JSON.stringify(message)}; stderr: ${stderr.join("")}`) };
        return undefined;
      },
      timeoutMs,
      () => `node ${id} did not log ${JSON.stringify(message)} within ${timeoutMs} ms; last records: ${JSON.stringify(logs.slice(-5))}`,
    );

  const node: NodeProcess = {
    id,
    apiPort: api as number,
    mgmtPort: mgmt as number,
    distPort: dist as number,
    api: `http://127.0.0.1:${api}`,
    mgmt: `http://127.0.0.1:${mgmt}`,
    dist: `http://127.0.0.1:${dist}`,
    child,
    logs,
    stderr,
    exited,
    waitForLog,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (!hasExited) child.kill(signal);
      return exited;
    },
  };
  const ready = opts.readyMessage ?? "client API listener started";
  if (ready !== false) await waitForLog(ready);
  return node;
}

export interface ClusterPorts {
  readonly id: string;
  readonly api: number;
  readonly mgmt: number;
  readonly dist: number;
}

/** Picks ports for `n` nodes (ids n1..nN) up front, so every node can be seeded with the others. */
export async function clusterPorts(n: number, prefix = "n"): Promise<ClusterPorts[]> {
  const ports = await freePorts(3 * n);
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i + 1}`, api: ports[3 * i] as number, mgmt: ports[3 * i + 1] as number, dist: ports[3 * i + 2] as number }));
}

/** The SERVICE_SEEDS value naming every node of `layout` but `self`. */
export function seedsFor(layout: readonly ClusterPorts[], self: string): string {
  return layout.filter((p) => p.id !== self).map((p) => `${p.id}@127.0.0.1:${p.dist}`).join(",");
}

/** Starts one node of a layout (also used to restart it with the same id and ports). */
export function startMember(layout: readonly ClusterPorts[], id: string, env: Record<string, string> = {}): Promise<NodeProcess> {
  const p = layout.find((x) => x.id === id);
  if (!p) throw new Error(`no node ${id} in the layout`);
  return startNode({ id, ports: { api: p.api, mgmt: p.mgmt, dist: p.dist }, env: { SERVICE_SEEDS: seedsFor(layout, id), ...env } });
}

/**
 * Starts every node of a fresh layout of `n` nodes and waits until each is ready (/readyz 200:
 * joined and caught up with its peers), as an orchestrator would before sending traffic: until
 * then a node's copies do not count towards quorum reads (cluster/quorum-vote.ts).
 */
export async function startCluster(n: number, env: Record<string, string> = {}): Promise<{ layout: ClusterPorts[]; nodes: NodeProcess[] }> {
  const layout = await clusterPorts(n);
  const nodes = await Promise.all(layout.map((p) => startMember(layout, p.id, env)));
  await Promise.all(nodes.map((node) => waitReady(node)));
  return { layout, nodes };
}

/** Polls the node's /readyz until it answers 200 (at most `timeoutMs`). */
export async function waitReady(node: NodeProcess, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${node.mgmt}/readyz`).then((r) => r.status, () => 0);
    if (status === 200) return;
    if (Date.now() > until) throw new Error(`node ${node.id} not ready within ${timeoutMs} ms (/readyz ${status})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The memory a node started here may use: its cgroup's memory limit, else the machine's. */
function processMemory(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 && constrained < totalmem() ? constrained : totalmem();
}

/** SERVICE_MAX_DATA_BYTES of a node started here without it: 40% of its memory. */
export function defaultDataBudget(): number {
  return Math.floor(processMemory() * 0.4);
}

/** SERVICE_MAX_INFLIGHT_BYTES of a node started here without it: 10% of its memory, at least the largest answer (16 MiB as base64, plus 1 MiB). */
export function defaultInflightBudget(): number {
  return Math.max(Math.ceil((16 * 1024 * 1024) / 3) * 4 + 1024 * 1024, Math.floor(processMemory() * 0.1));
}
