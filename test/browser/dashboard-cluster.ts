// The real 3-node cluster the dashboard tests run against: static tokens of a policy file (a
// reader, an administrator that may also write), an HTTP Basic user allowed over plain http, a
// peer token, and fast gossip. n3 alone also grants anonymous access (allow_anonymous), so the
// sign-in without a credential can be tried against a node that grants it and one that does not. Probes run every
// second and a suspect is declared dead after 10 s: a stopped node stays an owner (suspect) long
// enough for a 5 s peer call to it to time out and show as unreachable, and a loaded machine
// does not make live peers look dead.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { FAST_TIMERS, allAlive, eventually, type MembersBody } from "../integration/cluster-helpers.js";

export const READ_TOKEN = "dash-reader-token";
export const ADMIN_TOKEN = "dash-admin-token";
const PEER_TOKEN = "dash-peer-token";
export const IDS = ["n1", "n2", "n3"] as const;
/** The Basic user of the policy (scopes read and admin) and its password. */
export const BASIC_USER = "dash-basic-ops";
export const BASIC_PASSWORD = "dash-basic-password";
/** The node whose policy also allows anonymous callers (every scope, id `anonymous`). */
export const ANONYMOUS_NODE = "n3";

export class DashboardCluster {
  readonly nodes = new Map<string, NodeProcess>();
  private constructor(
    private readonly layout: ClusterPorts[],
    private readonly env: Record<string, string>,
    private readonly dir: string,
  ) {}

  /** A node's environment: the common one, with the anonymous policy for ANONYMOUS_NODE. */
  private envOf(id: string): Record<string, string> {
    return id === ANONYMOUS_NODE ? { ...this.env, SERVICE_AUTH_CONFIG: join(this.dir, "policy-anonymous.yaml") } : this.env;
  }

  static async start(): Promise<DashboardCluster> {
    const dir = mkdtempSync(join(tmpdir(), "hypercache-dash-"));
    // Cost 4: the node checks the password in a worker, and the tests need no strength here.
    const hash = bcrypt.hashSync(BASIC_PASSWORD, 4);
    const policy = [
      "allow_basic_without_tls: true",
      "tokens:",
      `  - {id: reader, token: ${READ_TOKEN}, scopes: [read]}`,
      `  - {id: operator, token: ${ADMIN_TOKEN}, scopes: [read, write, admin]}`,
      "users:",
      `  - {username: ${BASIC_USER}, password_hash: "${hash}", scopes: [read, admin]}`,
    ].join("\n");
    writeFileSync(join(dir, "policy.yaml"), policy);
    writeFileSync(join(dir, "policy-anonymous.yaml"), `${policy}\nallow_anonymous: true\n`);
    const env = { ...FAST_TIMERS, SERVICE_HEARTBEAT: "1s", SERVICE_DEAD_AFTER: "10s", SERVICE_AUTH_CONFIG: join(dir, "policy.yaml"), SERVICE_PEER_TOKEN: PEER_TOKEN, SERVICE_AUTH_FAIL_LIMIT: "0" };
    const c = new DashboardCluster(await clusterPorts(3), env, dir);
    for (const n of await Promise.all(IDS.map((id) => startMember(c.layout, id, c.envOf(id))))) c.nodes.set(n.id, n);
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
    const n = await startMember(this.layout, id, this.envOf(id));
    this.nodes.set(id, n);
    return n;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.stop("SIGKILL")));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
