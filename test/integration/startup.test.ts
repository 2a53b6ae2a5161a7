// Start-up of the real process: the records of SPEC.md in order, the open-API warning, node_id on
// every record; and the two ways start-up fails: an invalid setting (exit 2, one line naming the
// variable) and a listener that cannot bind (exit 1 with an error record, never half up).
import net from "node:net";
import { expect } from "chai";
import { LOG } from "../../src/log/index.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { freePort } from "../helpers/ports.js";

async function holdPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const port = await freePort();
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(port, "127.0.0.1", r));
  return { port, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

describe("hypercache-server process start-up", function () {
  this.timeout(30_000);

  describe("a node that starts", () => {
    let node: NodeProcess;
    before(async () => {
      node = await startNode({ id: "boot-1" });
    });
    after(async () => {
      await node?.stop("SIGKILL");
    });

    it("logs the start-up records of SPEC.md in order, the first carrying the listener addresses", () => {
      const order = [
        "hypercache-server starting",
        "cluster join: node starting",
        "dist HTTP listener started",
        "heartbeat loop started",
        "rebalance loop started",
        "hint replay loop started",
      ];
      const positions = order.map((m) => node.logs.findIndex((r) => r.message === m));
      expect(positions.every((p) => p >= 0), JSON.stringify(node.logs.map((r) => r.message))).to.equal(true);
      expect([...positions].sort((a, b) => a - b)).to.deep.equal(positions);
      const first = node.logs.find((r) => r.message === "hypercache-server starting");
      expect(first).to.include({
        api_addr: `127.0.0.1:${node.apiPort}`,
        mgmt_addr: `127.0.0.1:${node.mgmtPort}`,
        dist_addr: `127.0.0.1:${node.distPort}`,
        oidc_enabled: false,
        node_id: "boot-1",
        virtual_nodes: 128,
      });
    });

    it("SIGHUP does not end the node (it exited 129 with no drain and no record): it logs that it runs on and keeps serving", async () => {
      node.child.kill("SIGHUP");
      await node.waitForLog(LOG.hangup, 5_000);
      expect(node.child.exitCode).to.equal(null);
      expect((await fetch(`${node.mgmt}/livez`)).status).to.equal(200);
    });

    it("warns that the API is open when no authentication is configured", () => {
      const warn = node.logs.find((r) => r.level === "warn" && /authentication disabled/.test(r.message));
      expect(warn).to.not.equal(undefined);
    });

    it("binds every record to the node id and writes one JSON record per line", () => {
      expect(node.logs.length).to.be.greaterThan(5);
      expect(node.logs.every((r) => r.node_id === "boot-1" && r.level !== "raw")).to.equal(true);
    });
  });

  describe("a node that cannot start", () => {
    it("an invalid setting: exit 2 and one stderr line naming the variable, no stack trace", async () => {
      const node = await startNode({ id: "bad-1", env: { SERVICE_CAPACITY: "lots" }, readyMessage: false });
      expect(await node.exited).to.equal(2);
      const lines = node.stderr.join("").trim().split("\n");
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/SERVICE_CAPACITY/);
      expect(lines[0]).to.not.match(/\bat\s+\S+\s+\(/);
    });

    it("seeds with an unspecified SERVICE_DIST_ADDR host: exit 2 and one stderr line saying the address is advertised to peers", async () => {
      const node = await startNode({ id: "bad-2", env: { SERVICE_DIST_ADDR: "0.0.0.0:0", SERVICE_SEEDS: "n9@127.0.0.1:1" }, readyMessage: false });
      expect(await node.exited).to.equal(2);
      const lines = node.stderr.join("").trim().split("\n");
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/SERVICE_DIST_ADDR.*advertised to peers/);
    });

    it("a dist port already in use: exit 1 with the record `dist HTTP listener bind failed`, no listener left up", async () => {
      const held = await holdPort();
      try {
        const node = await startNode({ id: "bad-2", env: { SERVICE_DIST_ADDR: `127.0.0.1:${held.port}` }, readyMessage: false });
        expect(await node.exited).to.equal(1);
        expect(node.logs.find((r) => r.level === "error" && r.message === "dist HTTP listener bind failed")).to.not.equal(undefined);
        expect(node.logs.find((r) => r.message === "client API listener started")).to.equal(undefined);
      } finally {
        await held.close();
      }
    });

    it("a client API port already in use: exit 1 with an error record, and the other listeners are closed", async () => {
      const held = await holdPort();
      try {
        const node = await startNode({ id: "bad-3", env: { SERVICE_API_ADDR: `127.0.0.1:${held.port}` }, readyMessage: false });
        expect(await node.exited).to.equal(1);
        const err = node.logs.find((r) => r.level === "error" && r.message === "listener bind failed");
        expect(err).to.include({ listener: "client" });
        const probe = await fetch(`${node.mgmt}/health`).then(
          () => "answered",
          () => "refused",
        );
        expect(probe).to.equal("refused");
      } finally {
        await held.close();
      }
    });
  });
});
