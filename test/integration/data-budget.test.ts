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

  it("1 MiB PUTs, 8 at a time, into a budget full of small items: the bytes held stay within budget + overshoot + one write; a refusal is 503 store_over_budget with Retry-After", async () => {
    // Review 17f: a node of an 8 MiB budget held 210 MB within 0.8 s of 1 MiB PUTs (each evicted
    // at most 1024 items of 40 bytes, each pass 16,384, once a second).
    const budget = 8 * MiB + 4096;
    node = await startNode({ id: "budget-4", env: { SERVICE_CAPACITY: "1000000", SERVICE_MAX_DATA_BYTES: String(budget), SERVICE_MAX_VALUE_BYTES: "1MiB", SERVICE_MAX_BODY_BYTES: "4MiB" } });
    const api = node.api;
    for (let n = 0; ((await stats(node)).data_bytes as number) < budget - 100_000; ) {
      const items = Array.from({ length: 1000 }, () => ({ key: `small:${n++}`, value: "x".repeat(28) }));
      const r = await call(`${api}/v1/cache/batch/put`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items }) });
      expect(r.status, r.body.toString()).to.equal(200);
    }
    const value = Buffer.alloc(MiB - 64, 0x62);
    const statuses = new Map<number, number>();
    const refusals: Array<{ retryAfter: unknown; body: Record<string, unknown> }> = [];
    let peak = 0;
    let next = 0;
    let writing = true;
    const writer = async () => {
      while (next < 160) {
        const r = await call(`${api}/v1/cache/big:${next++}`, { method: "PUT", body: value });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status !== 200) refusals.push({ retryAfter: r.headers["retry-after"], body: r.json() });
      }
    };
    const sampler = async () => {
      while (writing) peak = Math.max(peak, (await stats(node as NodeProcess)).data_bytes as number);
    };
    const sampling = sampler();
    await Promise.all(Array.from({ length: 8 }, writer));
    writing = false;
    await sampling;
    const overshoot = Math.max(MiB, Math.floor(budget / 8));
    expect(peak, "the most bytes held while writing").to.be.at.most(budget + overshoot + MiB);
    expect(statuses.get(200), "most writes land").to.be.above(80);
    expect([...statuses.keys()].filter((st) => st !== 200 && st !== 503), "no answer but 200 and 503").to.deep.equal([]);
    for (const r of refusals) {
      expect(r.retryAfter).to.equal("1");
      expect(r.body).to.include({ code: "UNAVAILABLE" });
      expect(r.body.details).to.include({ reason: "store_over_budget", max_data_bytes: budget });
    }
    const metrics = (await call(`${node.mgmt}/dist/metrics`)).json<Record<string, number>>();
    expect(metrics["dist.write.over_budget"] ?? 0, "refusals counted").to.equal(refusals.length);
    // The trim runs every turn while the store is over: no eviction pass (once a second) needed.
    const deadline = Date.now() + 500;
    let held = (await stats(node)).data_bytes as number;
    while (held > budget && Date.now() < deadline) held = (await stats(node)).data_bytes as number;
    expect(held, "back within the budget").to.be.at.most(budget);
  });
});
