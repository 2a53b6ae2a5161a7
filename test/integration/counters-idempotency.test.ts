// An increment's Idempotency-Key result rides the counter's pushes over the real peer wire
// (Entry.idempotent): with the primary that added it killed, a retry through another owner, which
// takes the increment over, answers the first result instead of adding again.
import { expect } from "chai";
import { startCluster, type NodeProcess } from "../helpers/node-process.js";

async function incr(node: NodeProcess, key: string, idem: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${node.api}/v1/cache/${key}/incr`, { method: "POST", headers: { "content-type": "application/json", "Idempotency-Key": idem }, body: JSON.stringify({ delta: 1 }) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("integration/counters: Idempotency-Key results on every owner", function () {
  this.timeout(60_000);
  let nodes: NodeProcess[] = [];
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("the primary added an increment and died; the retry through a replica, which takes it over, answers the first value and the counter holds it once", async () => {
    ({ nodes } = await startCluster(3, { SERVICE_REPLICATION: "3" }));
    const key = "idem-owners";
    const owners = ((await (await fetch(`${nodes[0]?.api}/v1/owners/${key}`)).json()) as { owners: string[] }).owners;
    const primary = nodes.find((n) => n.id === owners[0]) as NodeProcess;
    const replica = nodes.find((n) => n.id !== primary.id) as NodeProcess;
    const first = await incr(primary, key, "order-42");
    expect(first.status, JSON.stringify(first.json)).to.equal(200);
    expect(first.json.value).to.equal(1);
    await primary.stop("SIGKILL");
    let retry = await incr(replica, key, "order-42");
    // Until the replica has a connection refused from the primary, it may answer 503.
    for (let i = 0; i < 20 && retry.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 250));
      retry = await incr(replica, key, "order-42");
    }
    expect(retry.status, JSON.stringify(retry.json)).to.equal(200);
    expect(retry.json.value, "the first call's value, not added again").to.equal(1);
    expect(await (await fetch(`${replica.api}/v1/cache/${key}?consistency=one`)).text()).to.equal("1");
  });
});
