// Failover of @hypercache/client against real 3-node clusters: a node killed with SIGKILL in the
// middle of 5,000 writes, a draining node, and loopback stubs that answer 4xx (hit once, returned)
// or 503 (passed to the next endpoint).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { startCluster, type NodeProcess } from "../../../../test/helpers/node-process.js";
import { FAST_TIMERS } from "../../../../test/integration/cluster-helpers.js";
import { AllEndpointsFailedError, ForbiddenError, HypercacheClient, QuorumFailedError, type ClientEvent } from "../../src/node.js";

/** A loopback server that answers every request with `status` and the envelope of `code`, counting hits. */
async function stub(status: number, code: string): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: `stub says ${code}`, code }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe("client failover on a real 3-node cluster", function () {
  this.timeout(120_000);
  let nodes: NodeProcess[] = [];

  beforeEach(async () => {
    ({ nodes } = await startCluster(3, { ...FAST_TIMERS }));
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("completes all of 5,000 sets while the endpoint in use is killed with SIGKILL", async () => {
    const events: ClientEvent[] = [];
    const client = new HypercacheClient({ endpoints: nodes.map((n) => n.api), randomStart: false, discovery: false, timeoutMs: 3000, onEvent: (e) => events.push(e) });
    const total = 5000;
    let next = 0;
    let ok = 0;
    let killed = false;
    const worker = async () => {
      while (next < total) {
        const i = next++;
        if (i === 1500 && !killed) {
          killed = true;
          (nodes[0] as NodeProcess).child.kill("SIGKILL");
        }
        const r = await client.set(`kill:${i}`, `value-${i}`);
        if (r.stored) ok++;
      }
    };
    try {
      await Promise.all(Array.from({ length: 16 }, worker));
      expect(ok).to.equal(total);
      expect(events.some((e) => e.type === "failover" && e.endpoint === (nodes[0] as NodeProcess).api), "the killed node was failed over").to.equal(true);
      const check = await client.getMany(Array.from({ length: total }, (_, i) => `kill:${i}`));
      const missing = check.filter((r) => !r.found).map((r) => r.key);
      expect(missing, "every acknowledged write is readable").to.deep.equal([]);
      expect(new TextDecoder().decode(check[4321]?.item?.value)).to.equal("value-4321");
    } finally {
      await client.close();
    }
  });

  it("skips a draining node: one failover, then the writes stay on another node", async () => {
    const n1 = nodes[0] as NodeProcess;
    const drained = await fetch(`${n1.mgmt}/dist/drain`, { method: "POST" });
    expect(drained.status).to.equal(200);
    const events: ClientEvent[] = [];
    const client = new HypercacheClient({ endpoints: nodes.map((n) => n.api), randomStart: false, discovery: false, onEvent: (e) => events.push(e) });
    try {
      for (let i = 0; i < 100; i++) await client.set(`drain:${i}`, "v");
      const failovers = events.filter((e) => e.type === "failover");
      expect(failovers).to.have.length(1);
      expect(failovers[0]).to.include({ endpoint: n1.api, next: (nodes[1] as NodeProcess).api });
      expect((failovers[0] as { error: Error }).error.name).to.equal("DrainingError");
      expect(client.currentEndpoint()).to.equal((nodes[1] as NodeProcess).api);
    } finally {
      await client.close();
    }
  });

  it("returns a stub's 4xx at once (hit once, no other endpoint tried) and passes a stub's 503 to a real node", async () => {
    const forbidden = await stub(403, "FORBIDDEN");
    const unavailable = await stub(503, "UNAVAILABLE");
    const events: ClientEvent[] = [];
    const n1 = nodes[0] as NodeProcess;
    const c4 = new HypercacheClient({ endpoints: [forbidden.url, n1.api], randomStart: false, discovery: false, onEvent: (e) => events.push(e) });
    const c5 = new HypercacheClient({ endpoints: [unavailable.url, n1.api], randomStart: false, discovery: false, onEvent: (e) => events.push(e) });
    try {
      const err = await c4.set("k", "v").catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ForbiddenError).and.include({ status: 403, endpoint: forbidden.url });
      expect(forbidden.hits()).to.equal(1);
      expect(events, "a 4xx is not a failover").to.deep.equal([]);

      expect(await c5.set("k", "v")).to.include({ stored: true });
      expect(await c5.getText("k")).to.equal("v");
      expect(unavailable.hits(), "the 503 stub was tried once, then the client stayed on the node").to.equal(1);
      expect(events.map((e) => e.type === "failover" && e.endpoint)).to.deep.equal([unavailable.url]);
    } finally {
      await Promise.all([c4.close(), c5.close(), forbidden.close(), unavailable.close()]);
    }
  });

  it("ends a write too few owners acknowledge with AllEndpointsFailedError holding the node's QuorumFailedError", async () => {
    const [n1, n2, n3] = nodes as [NodeProcess, NodeProcess, NodeProcess];
    const events: ClientEvent[] = [];
    const client = new HypercacheClient({ endpoints: [n1.api], randomStart: false, discovery: false, onEvent: (e) => events.push(e) });
    try {
      expect(await client.set("q", "before")).to.include({ stored: true });
      n2.child.kill("SIGKILL");
      n3.child.kill("SIGKILL");
      // At once, before n1 counts its peers dead: the write reaches the owners and none acknowledges.
      const err = (await client.set("q", "after", { consistency: "all" }).catch((e: unknown) => e)) as AllEndpointsFailedError;
      expect(err).to.be.instanceOf(AllEndpointsFailedError);
      expect(err.attempts).to.have.length(1);
      expect(err.attempts[0]?.error).to.be.instanceOf(QuorumFailedError).and.include({ status: 503, code: "QUORUM_FAILED", endpoint: n1.api });
      expect(events.map((e) => e.type)).to.deep.equal(["failover"]);
    } finally {
      await client.close();
    }
  });
});
