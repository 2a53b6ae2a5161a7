// Section 4 of the hardening issue, the batch get case, from outside: a batch get naming one key
// with an 8 MiB value 1,000 times, sent to a node that does not own it (two nodes, replication 1),
// fetches the value from its owner once and answers within the answer budget, while /healthz on
// that node stays within 100 ms and its RSS grows by at most 64 MB (measure.ts).
import { expect } from "chai";
import { call, type Reply } from "../helpers/http-call.js";
import { startCluster, type NodeProcess } from "../helpers/node-process.js";
import { eventually, waitAllAlive } from "../integration/cluster-helpers.js";
import { loadKeys } from "./load-keys.js";
import { expectNoStall } from "./measure.js";

const MIB = 1024 * 1024;
/** Keys loaded through the cluster: with replication 1 each of the two nodes holds about half. */
const KEYS = 200_000;

describe("hostile input: a batch get naming one 8 MiB value 1,000 times through a non-owner", function () {
  this.timeout(300_000);
  let nodes: NodeProcess[] = [];
  let asked: NodeProcess;
  let key: string;

  before(async () => {
    const started = performance.now();
    ({ nodes } = await startCluster(2, { SERVICE_REPLICATION: "1", SERVICE_WRITE_CONSISTENCY: "one", SERVICE_CAPACITY: String(2 * KEYS) }));
    await waitAllAlive(nodes, nodes.map((n) => n.id));
    const [a, b] = nodes as [NodeProcess, NodeProcess];
    asked = a;
    await loadKeys(a.api, KEYS);
    // A key owned by the other node, written through its owner.
    for (let i = 0; ; i++) {
      const r = await call(`${a.api}/v1/owners/big-${i}`);
      if (r.json<{ owners: string[] }>().owners[0] === b.id) {
        key = `big-${i}`;
        break;
      }
    }
    const put = await call(`${b.api}/v1/cache/${key}`, { method: "PUT", body: Buffer.alloc(8 * MIB, 0x61) });
    expect(put.status, put.body.toString()).to.equal(200);
    const items = await eventually(
      () => Promise.all(nodes.map(async (n) => (await call(`${n.mgmt}/stats`)).json<{ items: number }>().items)),
      (counts) => counts[0]! + counts[1]! === KEYS + 1,
    );
    console.log(`[hostile] two nodes loaded with ${KEYS} keys (${items.join(" + ")}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("fetches the value once, answers two copies within the 16 MiB budget and the rest 413 in place, and /healthz stays within 100 ms", async () => {
    const body = JSON.stringify({ keys: Array.from({ length: 1000 }, () => key) });
    const ask = () => call(`${asked.api}/v1/cache/batch/get`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const callsBefore = (await call(`${asked.mgmt}/dist/metrics`)).json<Record<string, number>>()["dist.peer.calls"] ?? 0;
    const f = await expectNoStall(asked, "batch get of one 8 MiB key x 1000 via a non-owner", ask, { timeoutMs: 120_000 });
    const r = f.result as Reply;
    expect(r.status, r.body.toString().slice(0, 200)).to.equal(200);
    const results = r.json<{ results: Array<{ key: string; status: number; code?: string; value?: string }> }>().results;
    expect(results).to.have.length(1000);
    const served = results.filter((x) => x.status === 200);
    expect(served, "8 MiB + 8 MiB fill the 16 MiB answer budget").to.have.length(2);
    for (const x of served) expect(Buffer.from(x.value ?? "", "base64").length).to.equal(8 * MIB);
    expect(results.slice(2).every((x) => x.status === 413 && x.code === "PAYLOAD_TOO_LARGE"), "the rest are 413 in place").to.equal(true);
    const callsAfter = (await call(`${asked.mgmt}/dist/metrics`)).json<Record<string, number>>()["dist.peer.calls"] ?? 0;
    // Probes and gossip add a few calls per second; 1,000 fetches would add hundreds.
    expect(callsAfter - callsBefore, "peer calls while the batch ran (one fetch, plus background probes and gossip)").to.be.below(40);
  });
});
