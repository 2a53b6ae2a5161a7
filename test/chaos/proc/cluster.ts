// The nodes of a chaos run: their layout (namespace and address, or loopback ports), seeds, and
// the waits the nemeses need (everyone sees everyone alive, a node has caught up).
import { nodeAddress } from "../net/addresses.js";
import type { NetLab } from "../net/netns.js";
import { nodeNamespace } from "../net/netns.js";
import type { ClockSample, RingSample } from "../checker/history.js";
import type { HttpClient } from "../workload/http-client.js";
import { ChaosNode, type NodeDeps, type NodeSpec } from "./chaos-node.js";

/** Ports every node uses inside its own namespace. */
const NETNS_PORTS = { api: 8080, mgmt: 8081, dist: 7946 };

export interface PortSource {
  /** Three free loopback ports (loopback mode only). */
  next(): Promise<[number, number, number]>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Cluster {
  readonly nodes: ChaosNode[] = [];

  constructor(
    private readonly deps: NodeDeps & { lab?: NetLab; ports?: PortSource; http: HttpClient },
  ) {}

  get mode(): "netns" | "loopback" {
    return this.deps.lab ? "netns" : "loopback";
  }

  get lab(): NetLab | undefined {
    return this.deps.lab;
  }

  node(id: string): ChaosNode {
    const n = this.nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** Defines (and in netns mode wires) one more node; it is not started. */
  async add(id: string): Promise<ChaosNode> {
    const index = this.nodes.length;
    let spec: NodeSpec;
    if (this.deps.lab) {
      const host = nodeAddress(index);
      await this.deps.lab.addNode(id, host);
      spec = { id, host, apiPort: NETNS_PORTS.api, mgmtPort: NETNS_PORTS.mgmt, distPort: NETNS_PORTS.dist, netns: nodeNamespace(id) };
    } else {
      if (!this.deps.ports) throw new Error("loopback mode needs a port source");
      const [api, mgmt, dist] = await this.deps.ports.next();
      spec = { id, host: "127.0.0.1", apiPort: api, mgmtPort: mgmt, distPort: dist };
    }
    const node = new ChaosNode(spec, this.deps);
    this.nodes.push(node);
    return node;
  }

  /** SERVICE_SEEDS for `self`: every other defined node. */
  seedsFor(self: string): string {
    return this.nodes
      .filter((n) => n.id !== self)
      .map((n) => `${n.id}@${n.spec.host}:${n.spec.distPort}`)
      .join(",");
  }

  async start(node: ChaosNode, clockOffset?: string): Promise<void> {
    await node.start({ seeds: this.seedsFor(node.id), ...(clockOffset ? { clockOffset } : {}) });
  }

  private async mgmtJson<T>(node: ChaosNode, path: string): Promise<T | undefined> {
    try {
      const a = await this.deps.http.request({ host: node.spec.host, port: node.spec.mgmtPort, method: "GET", path, timeoutMs: 3000 });
      return a.status === 200 ? (JSON.parse(a.body.toString("utf8")) as T) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The ids on the node's ring (GET /cluster/ring), sorted; undefined when it does not answer. */
  async ringOf(node: ChaosNode): Promise<string[] | undefined> {
    const ring = await this.mgmtJson<{ nodes: { id: string }[] }>(node, "/cluster/ring");
    return ring?.nodes.map((n) => n.id).sort();
  }

  /** Waits until every running node lists every running node as alive. */
  async waitMembership(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const running = this.nodes.filter((n) => n.running);
      const ids = new Set(running.map((n) => n.id));
      const views = await Promise.all(running.map((n) => this.mgmtJson<{ members: { id: string; state: string }[] }>(n, "/cluster/members")));
      const ok = views.every((v) => v && [...ids].every((id) => v.members.some((m) => m.id === id && m.state === "alive")));
      if (ok) return;
      if (performance.now() > deadline) throw new Error(`membership did not settle within ${timeoutMs} ms: ${JSON.stringify(views.map((v) => v?.members.map((m) => `${m.id}:${m.state}`)))}`);
      await sleep(250);
    }
  }

  /** Waits until the node reports catching_up: false on its management /health. */
  async waitCaughtUp(node: ChaosNode, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const h = await this.mgmtJson<{ catching_up: boolean }>(node, "/health");
      if (h && h.catching_up === false) return;
      if (performance.now() > deadline) throw new Error(`${node.id} still catching up after ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** True when the node answers GET /healthz on its client listener. */
  async healthy(node: ChaosNode, timeoutMs = 3000): Promise<string | undefined> {
    try {
      const a = await this.deps.http.request({ host: node.spec.host, port: node.spec.apiPort, method: "GET", path: "/healthz", timeoutMs });
      return a.status === 200 ? undefined : `healthz answered ${a.status}`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** Stops every node (SIGCONT first, in case one is paused), then kills what is left. */
  async stopAll(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (n) => {
        n.resume();
        await n.terminate();
      }),
    );
    for (const n of this.nodes) await n.closeLogs();
  }

  /** Last resort on abort: kill -9 everything still running. */
  async killAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    for (const n of this.nodes) await n.closeLogs();
  }
}

/**
 * Each running node's wall clock against ours, from the Date header of GET /healthz (whole
 * seconds: the offset is known within about a second; enough to see a 30 s skew).
 */
export async function sampleClocks(cluster: Cluster, http: HttpClient): Promise<ClockSample[]> {
  const out: ClockSample[] = [];
  await Promise.all(
    cluster.nodes
      .filter((n) => n.running)
      .map(async (n) => {
        const before = performance.timeOrigin + performance.now();
        try {
          const a = await http.request({ host: n.spec.host, port: n.spec.apiPort, method: "GET", path: "/healthz", timeoutMs: 1_000 });
          const after = performance.timeOrigin + performance.now();
          const date = Date.parse(String(a.headers.date ?? ""));
          // the header truncates to the second: add half a second to centre the estimate
          if (Number.isFinite(date)) out.push({ node: n.id, t_ms: after, offset_ms: Math.round(date + 500 - (before + after) / 2) });
        } catch {
          // a node that does not answer now has no sample
        }
      }),
  );
  return out;
}

/**
 * Each running node's ring (the ids on it), stamped when that node answered (a paused node's 3 s
 * timeout must not move the others' samples); nodes that do not answer are left out.
 */
export async function sampleRings(cluster: Cluster): Promise<RingSample[]> {
  const samples = await Promise.all(
    cluster.nodes
      .filter((n) => n.running)
      .map(async (n): Promise<RingSample | undefined> => {
        const members = await cluster.ringOf(n);
        return members && { node: n.id, t_ms: performance.timeOrigin + performance.now(), members };
      }),
  );
  return samples.filter((r): r is RingSample => r !== undefined);
}
