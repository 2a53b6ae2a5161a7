// A peer allowed to gossip (the peer token) adds 4,092 members that do not answer: every
// heartbeat the node probes them all, and each failed probe draws indirect-probe relays. The
// node stays responsive: a side loop on /healthz never waits long. Before, each failure listed
// and sorted the whole member table to draw its relays, and every probe of the round started at
// once: /healthz waited 2.7 s in the first round and over 200 ms once or more every second after.
import net from "node:net";
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const TOKEN = "peer-token-probe-storm";
const MESSAGES = 4;
const PER_MESSAGE = 1_023;

/** Loopback ports nothing listens on: bound once, then closed (connections are refused). */
async function closedPorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<net.Server>((resolve) => {
      const s = net.createServer();
      s.listen(0, "127.0.0.1", () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

describe("integration/membership: a probe round of 4,092 unreachable members", function () {
  this.timeout(60_000);
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("does not hold the loop: the slowest /healthz of a side loop over 6 heartbeats stays under 250 ms", async () => {
    node = await startNode({ id: "n1", env: { SERVICE_PEER_TOKEN: TOKEN, SERVICE_DEAD_AFTER: "60s", SERVICE_LOG_LEVEL: "info" } });
    const n = node;
    const ports = await closedPorts(256);
    for (let m = 0; m < MESSAGES; m++) {
      const members = Array.from({ length: PER_MESSAGE }, (_, i) => ({ id: `x${m}-${i}`, address: `127.0.0.1:${ports[(m * PER_MESSAGE + i) % ports.length]}`, state: "MEMBER_STATE_ALIVE", incarnation: "1" }));
      const res = await fetch(`${n.dist}/internal/hypercache.peer.v1.PeerService/Gossip`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ from: `x${m}-0`, members }),
      });
      expect(res.status, await res.text().then((t) => t.slice(0, 200))).to.equal(200);
    }
    const started = Date.now();
    let slowest = 0;
    while (Date.now() - started < 6_000) {
      const t = performance.now();
      expect((await fetch(`${n.api}/healthz`)).status).to.equal(200);
      slowest = Math.max(slowest, performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
    const body = (await (await fetch(`${n.mgmt}/cluster/members?limit=5000`)).json()) as { members: Array<{ state: string }> };
    const suspect = body.members.filter((m) => m.state === "suspect").length;
    expect(suspect, "the unreachable members went suspect: they were probed").to.be.greaterThan(4_000);
    expect(slowest, "slowest /healthz of the side loop, ms").to.be.lessThan(250);
  });
});
