import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

describe("hypercache-server process start-up", () => {
  let node: NodeProcess;
  before(async () => {
    node = await startNode({ id: "boot-1" });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("logs the start-up records in order, the first carrying the listener addresses", () => {
    const order = ["hypercache-server starting", "cluster join: node starting", "dist HTTP listener started"];
    const positions = order.map((m) => node.logs.findIndex((r) => r.message === m));
    expect(positions.every((p) => p >= 0), JSON.stringify(node.logs)).to.equal(true);
    expect([...positions].sort((a, b) => a - b)).to.deep.equal(positions);
    const first = node.logs.find((r) => r.message === "hypercache-server starting");
    expect(first).to.include({ api_addr: `127.0.0.1:${node.apiPort}`, mgmt_addr: `127.0.0.1:${node.mgmtPort}`, dist_addr: `127.0.0.1:${node.distPort}`, oidc_enabled: false, node_id: "boot-1", virtual_nodes: 128 });
  });

  it("warns that the API is open when no authentication is configured", () => {
    const warn = node.logs.find((r) => r.level === "warn" && /authentication disabled/.test(r.message));
    expect(warn).to.not.equal(undefined);
  });

  it("binds every record to the node id", () => {
    expect(node.logs.every((r) => r.node_id === "boot-1")).to.equal(true);
  });
});
