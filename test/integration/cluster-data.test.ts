// Three real nodes on loopback: replication of binary values, forwarding, promotion when the
// primary is killed, convergence of the restarted primary, cluster-wide key browsing.
import { expect } from "chai";
import { startCluster, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";

async function put(node: NodeProcess, key: string, body: Buffer | string, query = ""): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}${query}`, { method: "PUT", body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function getRaw(node: NodeProcess, key: string, query = ""): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}${query}`);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

async function metric(node: NodeProcess, name: string): Promise<number> {
  const res = await fetch(`${node.mgmt}/dist/metrics`);
  return ((await res.json()) as Record<string, number>)[name] as number;
}

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 8000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last = await probe();
  while (!ok(last) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    last = await probe();
  }
  return last;
}

describe("cluster data path across real processes", function () {
  this.timeout(60_000);
  let layout: ClusterPorts[];
  let nodes: NodeProcess[];
  const byId = (id: string) => nodes.find((n) => n.id === id) as NodeProcess;

  before(async () => {
    ({ layout, nodes } = await startCluster(3, { SERVICE_HINT_REPLAY: "100ms" }));
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("a binary value written through any node reads back byte for byte from every node", async () => {
    const value = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    for (const writer of nodes) {
      const key = `bin-${writer.id}`;
      const w = await put(writer, key, value);
      expect(w.status, JSON.stringify(w.json)).to.equal(200);
      expect(w.json.owners).to.have.members(["n1", "n2", "n3"]);
      for (const reader of nodes) {
        const r = await getRaw(reader, key);
        expect(r.status).to.equal(200);
        expect(r.body.equals(value), `${reader.id} reading ${key}`).to.equal(true);
      }
    }
  });

  it("every node reports the same owners for a key, primary first", async () => {
    const answers = await Promise.all(nodes.map(async (n) => ((await (await fetch(`${n.api}/v1/owners/some-key`)).json()) as { owners: string[] }).owners));
    expect(answers[1]).to.deep.equal(answers[0]);
    expect(answers[2]).to.deep.equal(answers[0]);
  });

  it("QUORUM and ALL reads agree with ONE after a write", async () => {
    await put(nodes[0] as NodeProcess, "levels", "v1");
    for (const level of ["one", "quorum", "all"]) {
      const r = await getRaw(nodes[2] as NodeProcess, "levels", `?consistency=${level}`);
      expect(r.body.toString(), level).to.equal("v1");
    }
  });

  it("the key browser lists every node's keys once, sorted", async () => {
    for (let i = 0; i < 12; i++) await put(nodes[i % 3] as NodeProcess, `browse-${String(i).padStart(2, "0")}`, `v${i}`);
    const res = await fetch(`${nodes[1]?.api}/v1/cache/keys?q=browse-`);
    const page = (await res.json()) as { keys: string[]; partial_nodes: string[] };
    expect(page.keys).to.deep.equal(Array.from({ length: 12 }, (_, i) => `browse-${String(i).padStart(2, "0")}`));
    expect(page.partial_nodes).to.deep.equal([]);
  });

  it("with the primary killed, a write through a replica is promoted, and the restarted primary converges to it", async () => {
    const key = "promoted-key";
    await put(nodes[0] as NodeProcess, key, "before");
    const owners = ((await (await fetch(`${nodes[0]?.api}/v1/owners/${key}`)).json()) as { owners: string[] }).owners;
    const primary = owners[0] as string;
    const replica = byId(owners[1] as string);
    await byId(primary).stop("SIGKILL");

    const w = await put(replica, key, "after");
    expect(w.status, JSON.stringify(w.json)).to.equal(200);
    expect(await metric(replica, "dist.write.forward_promotion")).to.be.greaterThan(0);
    expect(await metric(replica, "dist.hinted.queued")).to.be.greaterThan(0);
    for (const n of nodes.filter((x) => x.id !== primary)) expect((await getRaw(n, key)).body.toString()).to.equal("after");

    const restarted = await startMember(layout, primary, { SERVICE_HINT_REPLAY: "100ms" });
    nodes[nodes.indexOf(byId(primary))] = restarted;
    const converged = await eventually(() => getRaw(restarted, key), (r) => r.status === 200 && r.body.toString() === "after");
    expect(converged.body.toString()).to.equal("after");
    // The promoter counts the replay once the restarted node's answer is back.
    expect(await eventually(() => metric(replica, "dist.hinted.replayed"), (v) => v > 0)).to.be.greaterThan(0);
  });
});
