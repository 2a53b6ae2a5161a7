// The real 3-node cluster the dashboard tests run against: static tokens of a policy file (a
// reader, an administrator that may also write), a peer token, and fast gossip. Probes run every
// second and a suspect is declared dead after 10 s: a stopped node stays an owner (suspect) long
// enough for a 5 s peer call to it to time out and show as unreachable, and a loaded machine
// does not make live peers look dead.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { FAST_TIMERS, allAlive, eventually, type MembersBody } from "../integration/cluster-helpers.js";

export const READ_TOKEN = "dash-reader-token";
export const ADMIN_TOKEN = "dash-admin-token";
const PEER_TOKEN = "dash-peer-token";
export const IDS = ["n1", "n2", "n3"] as const;

export class DashboardCluster {
  readonly nodes = new Map<string, NodeProcess>();
  private constructor(
    private readonly layout: ClusterPorts[],
    private readonly env: Record<string, string>,
    private readonly dir: string,
  ) {}

  static async start(): Promise<DashboardCluster> {
    const dir = mkdtempSync(join(tmpdir(), "hypercache-dash-"));
    const policy = [
      "tokens:",
      `  - {id: reader, token: ${READ_TOKEN}, scopes: [read]}`,
      `  - {id: operator, token: ${ADMIN_TOKEN}, scopes: [read, write, admin]}`,
    ].join("\n");
    writeFileSync(join(dir, "policy.yaml"), policy);
    const env = { ...FAST_TIMERS, SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "10s", SERVICE_AUTH_CONFIG: join(dir, "policy.yaml"), SERVICE_PEER_TOKEN: PEER_TOKEN, SERVICE_AUTH_FAIL_LIMIT: "0" };
    const c = new DashboardCluster(await clusterPorts(3), env, dir);
    for (const n of await Promise.all(IDS.map((id) => startMember(c.layout, id, env)))) c.nodes.set(n.id, n);
    await c.waitAllAlive();
    return c;
  }

  node(id: string): NodeProcess {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** GET on a node's management listener with the read token. */
  async mgmtJson<T>(id: string, path: string): Promise<T> {
    const res = await fetch(`${this.node(id).mgmt}${path}`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path} on ${id}: ${res.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  /** Waits until every node lists all three alive. */
  async waitAllAlive(timeoutMs = 20_000): Promise<void> {
    const views = await eventually(() => Promise.all(IDS.map((id) => this.mgmtJson<MembersBody>(id, "/cluster/members"))), (vs) => vs.every((v) => allAlive(v, IDS)), timeoutMs, 100);
    if (!views.every((v) => allAlive(v, IDS))) throw new Error("the cluster did not come up with every node alive");
  }

  async restart(id: string): Promise<NodeProcess> {
    const n = await startMember(this.layout, id, this.env);
    this.nodes.set(id, n);
    return n;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.stop("SIGKILL")));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
