// Discovery of @hypercache/client against real clusters: from one seed the client finds every
// node's client URL (https under TLS) and never a peer (dist) port, a joining fourth node appears,
// and members()/watch() run on the discovered management URLs.
import { expect } from "chai";
import { makeTestCerts, type TestCerts } from "../../../../test/helpers/certs.js";
import { clusterPorts, startMember, type NodeProcess } from "../../../../test/helpers/node-process.js";
import { eventually, FAST_TIMERS, waitAllAlive } from "../../../../test/integration/cluster-helpers.js";
import { HypercacheClient } from "../../src/node.js";

describe("client discovery on real clusters", function () {
  this.timeout(90_000);
  let nodes: NodeProcess[] = [];
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
    nodes = [];
  });

  it("finds all three client URLs from one seed, never a dist port, and a fourth node when it joins", async () => {
    const layout = await clusterPorts(4);
    const three = layout.slice(0, 3);
    nodes = await Promise.all(three.map((p) => startMember(three, p.id, { ...FAST_TIMERS })));
    await waitAllAlive(nodes, ["n1", "n2", "n3"]);
    const client = new HypercacheClient({ endpoints: [(nodes[1] as NodeProcess).api], discovery: { intervalMs: 300 } });
    try {
      // A member's advertised URLs travel by gossip: "alive" can come a moment before them.
      const urls = await eventually(
        async () => {
          await client.refreshEndpoints();
          return client.endpoints().map((e) => e.url);
        },
        (u) => u.length === 3,
        10_000,
      );
      expect(urls).to.deep.equal(nodes.map((n) => n.api));
      expect(client.endpoints().map((e) => e.node)).to.deep.equal(["n1", "n2", "n3"]);
      expect(client.managementEndpoints().map((e) => e.url)).to.deep.equal(nodes.map((n) => n.mgmt));
      for (const p of layout) expect(JSON.stringify([...client.endpoints(), ...client.managementEndpoints()])).to.not.contain(`:${p.dist}`);

      nodes.push(await startMember(layout, "n4", { ...FAST_TIMERS }));
      const seen = await eventually(async () => client.endpoints().map((e) => e.node), (ids) => ids.includes("n4"), 15_000);
      expect(seen).to.deep.equal(["n1", "n2", "n3", "n4"]);
      expect((await client.members()).members.map((m) => m.id)).to.deep.equal(["n1", "n2", "n3", "n4"]);
    } finally {
      await client.close();
    }
  });

  describe("under TLS", () => {
    let certs: TestCerts;
    before(() => {
      certs = makeTestCerts([]);
    });
    after(() => certs.cleanup());

    it("finds https client and management URLs and works over them with the cluster's CA", async () => {
      const layout = await clusterPorts(3);
      const tls = { ...FAST_TIMERS, SERVICE_API_TLS_CERT: certs.server.cert, SERVICE_API_TLS_KEY: certs.server.key, SERVICE_MGMT_TLS_CERT: certs.server.cert, SERVICE_MGMT_TLS_KEY: certs.server.key };
      nodes = await Promise.all(layout.map((p) => startMember(layout, p.id, tls)));
      const seed = `https://127.0.0.1:${layout[0]?.api}`;
      const client = new HypercacheClient({ endpoints: [seed], tls: { ca: certs.pem(certs.ca.cert) } });
      try {
        const urls = await eventually(async () => (await client.refreshEndpoints(), client.endpoints().map((e) => e.url)), (u) => u.length === 3, 15_000);
        expect(urls).to.deep.equal(layout.map((p) => `https://127.0.0.1:${p.api}`));
        expect(client.managementEndpoints().map((e) => e.url)).to.deep.equal(layout.map((p) => `https://127.0.0.1:${p.mgmt}`));
        await client.set("tls-key", "over https");
        expect(await client.getText("tls-key")).to.equal("over https");
        const w = await client.watch();
        for await (const e of w) {
          expect(e.endpoint.startsWith("https://")).to.equal(true);
          break;
        }
      } finally {
        await client.close();
      }
    });
  });
});
