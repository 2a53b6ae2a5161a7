// SERVICE_MAX_DATA_BYTES on a real process: a node holding large values stays within its byte
// budget (and its RSS with it) by evicting, instead of growing until the kernel kills it. Before
// it only the item count was bounded: 200 values of 1 MiB all stayed, 200 MiB of them.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { call } from "../helpers/http-call.js";
import { defaultDataBudget, startNode, type NodeProcess } from "../helpers/node-process.js";

const MiB = 1024 * 1024;

function rssBytes(node: NodeProcess): number {
  const status = readFileSync(`/proc/${node.child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) * 1024;
}

async function stats(node: NodeProcess): Promise<Record<string, number>> {
  return (await call(`${node.mgmt}/stats`)).json<Record<string, number>>();
}

describe("SERVICE_MAX_DATA_BYTES on a real node", function () {
  this.timeout(60_000);
  let node: NodeProcess | undefined;

  afterEach(async () => {
    await node?.stop("SIGKILL");
    node = undefined;
  });

  it("200 values of 1 MiB into a 16 MiB budget: at most 16 MiB held, the newest kept, the rest evicted and counted, RSS bounded", async () => {
    node = await startNode({ id: "budget-1", env: { SERVICE_MAX_DATA_BYTES: "16MiB", SERVICE_MAX_VALUE_BYTES: "1MiB", SERVICE_MAX_BODY_BYTES: "2MiB" } });
    const before = rssBytes(node);
    const value = Buffer.alloc(MiB - 64, 0x61);
    let peakData = 0;
    for (let i = 0; i < 200; i++) {
      const put = await call(`${node.api}/v1/cache/big-${i}`, { method: "PUT", body: value });
      expect(put.status, put.body.toString()).to.equal(200);
      if (i % 20 === 19) peakData = Math.max(peakData, (await stats(node)).data_bytes as number);
    }
    const s = await stats(node);
    expect(s.max_data_bytes).to.equal(16 * MiB);
    expect(Math.max(peakData, s.data_bytes as number), "bytes held").to.be.at.most(16 * MiB);
    expect(s.items).to.be.within(14, 16);
    expect(s.evictions).to.equal(200 - (s.items as number));
    expect((await call(`${node.api}/v1/cache/big-199`)).body.length, "the newest is kept").to.equal(value.length);
    expect((await call(`${node.api}/v1/cache/big-0`)).status, "the oldest went").to.equal(404);
    // 200 MiB of values went through; the node holds 16 of them (and garbage awaiting collection).
    expect((rssBytes(node) - before) / MiB, "RSS growth (MiB)").to.be.below(120);
    const metrics = (await call(`${node.mgmt}/metrics`)).body.toString();
    expect(metrics).to.match(/^cache_data_limit_bytes(\{[^}]*\})? 16777216$/m);
  });

  it("by default the budget is 40% of the memory the process may use, shown by /stats and /config; a budget below the largest value does not start", async () => {
    node = await startNode({ id: "budget-2" });
    const limit = defaultDataBudget();
    const s = await stats(node);
    expect(s.max_data_bytes).to.equal(limit);
    const config = (await call(`${node.mgmt}/config`)).json<{ settings: Record<string, { value: string; source: string }> }>();
    expect(config.settings.SERVICE_MAX_DATA_BYTES).to.deep.equal({ value: String(limit), source: "default" });
    await node.stop("SIGKILL");
    node = undefined;
    const refused = await startNode({ id: "budget-3", env: { SERVICE_MAX_DATA_BYTES: "1MiB" }, readyMessage: false });
    expect(await refused.exited).to.equal(2);
    expect(refused.stderr.join("")).to.match(/invalid configuration: SERVICE_MAX_DATA_BYTES: must be 0 \(no limit\) or at least SERVICE_MAX_VALUE_BYTES \+ SERVICE_MAX_KEY_BYTES/);
  });
});
