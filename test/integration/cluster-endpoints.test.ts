// Endpoint discovery on real processes: GET /v1/cluster/endpoints lists the advertised client and
// management URLs of every member that is not dead (gossiped, never the peer addresses),
// /cluster/members shows them as api_url and mgmt_url, an explicit SERVICE_API_ADVERTISE_URL
// travels through gossip, and a bad one stops the node with exit 2.
import { expect } from "chai";
import { bearer, call } from "../helpers/http-call.js";
import { clusterPorts, startMember, startNode, type NodeProcess } from "../helpers/node-process.js";
import { eventually, FAST_TIMERS, getJson, waitAllAlive } from "./cluster-helpers.js";

interface Endpoints {
  membership_version: number;
  endpoints: { node: string; api_url: string; mgmt_url: string; state: string }[];
}

describe("cluster endpoint discovery (3 real nodes)", function () {
  this.timeout(60_000);
  let nodes: NodeProcess[] = [];

  before(async () => {
    const layout = await clusterPorts(3);
    const env = { ...FAST_TIMERS };
    nodes = await Promise.all(layout.map((p) => startMember(layout, p.id, p.id === "n2" ? { ...env, SERVICE_MGMT_ADVERTISE_URL: "https://mgmt-2.example:9443/" } : env)));
    await waitAllAlive(nodes, ["n1", "n2", "n3"]);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  const endpoints = (n: NodeProcess) => getJson<Endpoints>(`${n.api}/v1/cluster/endpoints`);

  it("lists every member with its advertised URLs, defaults and explicit ones, and no peer address", async () => {
    const [n1, n2, n3] = nodes as [NodeProcess, NodeProcess, NodeProcess];
    const want = [
      { node: "n1", api_url: n1.api, mgmt_url: n1.mgmt, state: "alive" },
      { node: "n2", api_url: n2.api, mgmt_url: "https://mgmt-2.example:9443", state: "alive" },
      { node: "n3", api_url: n3.api, mgmt_url: n3.mgmt, state: "alive" },
    ];
    for (const n of nodes) {
      const body = await eventually(() => endpoints(n), (b) => b.endpoints.length === 3);
      expect(body.endpoints, `as ${n.id} sees it`).to.deep.equal(want);
      expect(body.membership_version).to.be.a("number");
      for (const d of nodes) expect(JSON.stringify(body), `no dist port of ${d.id}`).to.not.contain(`:${d.distPort}`);
    }
  });

  it("shows the URLs in /cluster/members as api_url and mgmt_url", async () => {
    const n1 = nodes[0] as NodeProcess;
    const body = await getJson<{ members: { id: string; address: string; api_url: string; mgmt_url: string }[] }>(`${n1.mgmt}/cluster/members`);
    const n3 = body.members.find((m) => m.id === "n3");
    expect(n3).to.include({ api_url: (nodes[2] as NodeProcess).api, mgmt_url: (nodes[2] as NodeProcess).mgmt, address: `127.0.0.1:${(nodes[2] as NodeProcess).distPort}` });
  });

  it("leaves out a member once it is dead", async () => {
    await (nodes[2] as NodeProcess).stop("SIGKILL");
    const body = await eventually(() => endpoints(nodes[0] as NodeProcess), (b) => b.endpoints.length === 2, 15_000);
    expect(body.endpoints.map((e) => e.node)).to.deep.equal(["n1", "n2"]);
  });
});

describe("cluster endpoint discovery: settings and access", function () {
  this.timeout(30_000);

  it("needs the read scope like the other client routes", async () => {
    const node = await startNode({ id: "auth-1", env: { SERVICE_AUTH_TOKEN: "tok" } });
    try {
      const none = await call(`${node.api}/v1/cluster/endpoints`);
      expect(none.status).to.equal(401);
      expect(none.json()).to.include({ code: "UNAUTHORIZED" });
      const ok = await call(`${node.api}/v1/cluster/endpoints`, { headers: bearer("tok") });
      expect(ok.json<Endpoints>().endpoints).to.deep.equal([{ node: "auth-1", api_url: node.api, mgmt_url: node.mgmt, state: "alive" }]);
    } finally {
      await node.stop();
    }
  });

  it("a bad SERVICE_API_ADVERTISE_URL stops the node with exit 2 and one line naming it", async () => {
    const node = await startNode({ id: "bad-url", env: { SERVICE_API_ADVERTISE_URL: "cache-1:8080" }, readyMessage: false });
    expect(await node.exited).to.equal(2);
    const lines = node.stderr.join("").trim().split("\n");
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/SERVICE_API_ADVERTISE_URL: expected an absolute http\(s\) base URL/);
  });

  it("a node whose dist host is unspecified advertises nothing, so it lists no endpoint", async () => {
    const node = await startNode({ id: "solo", env: { SERVICE_DIST_ADDR: ":0" } });
    try {
      expect((await call(`${node.api}/v1/cluster/endpoints`)).json()).to.deep.include({ endpoints: [] });
    } finally {
      await node.stop();
    }
  });
});
