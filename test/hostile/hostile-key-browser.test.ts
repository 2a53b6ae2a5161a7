// The key browser on a real node holding 60,000 keys of about 4 KB that share a 4,001-character
// prefix (every comparison of two keys reads about 4 KB): GET /cluster/keys on the management
// listener and GET /v1/cache/keys on the client listener, with the largest `max` and the default
// one, alone and four at once, answer the sorted first keys while a concurrent GET /healthz
// answers within 100 ms (measure.ts). Before the selection was sliced, one request held the event
// loop for 0.25-1 s and four at once for 2.5 s.
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { KEY_RESULT_CHARS_MAX } from "../../src/cluster/top-keys.js";
import { loadKeys } from "./load-keys.js";
import { expectNoStall } from "./measure.js";

const KEYS = 60_000;
const PREFIX = `k${"x".repeat(4000)}`;
const longKey = (i: number): string => `${PREFIX}${String(i).padStart(8, "0")}`;

interface Page {
  keys: string[];
  total_matched: number;
  truncated: boolean;
  next_cursor: string;
}


/** The first page of one key, of a listing cut by `max` or by KEY_RESULT_CHARS_MAX, whichever cuts first. */
function expectFirstPage(body: unknown, max: number): void {
  const page = body as Page;
  expect(page.keys).to.deep.equal([longKey(0)]);
  expect(page.total_matched).to.equal(Math.min(max, Math.floor(KEY_RESULT_CHARS_MAX / longKey(0).length)));
  expect(page.truncated).to.equal(true);
  expect(page.next_cursor).to.not.equal("");
}

describe("hostile input: the key browser over 60,000 keys of 4 KB does not stall the node", function () {
  this.timeout(600_000);
  let node: NodeProcess;

  before(async () => {
    const started = performance.now();
    node = await startNode({ id: "hostile-keys", env: { SERVICE_CAPACITY: String(2 * KEYS) } });
    // Batches of 500 (2 MB bodies), four at a time.
    await loadKeys(node.api, KEYS, {}, 4, { keyOf: longKey, batchItems: 500, value: "v" });
    expect((await call(`${node.mgmt}/stats`)).json<{ items: number }>().items).to.equal(KEYS);
    console.log(`[hostile] node loaded with ${KEYS} keys of ${longKey(0).length} characters in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("GET /cluster/keys?max=50000&limit=1 (management listener): the first key, and /healthz within 100 ms", async () => {
    const f = await expectNoStall(node, "mgmt keys max=50000", () => call(`${node.mgmt}/cluster/keys?max=50000&limit=1`), { timeoutMs: 120_000 });
    const r = f.result as Awaited<ReturnType<typeof call>>;
    expect(r.status).to.equal(200);
    expectFirstPage(r.json(), 50_000);
  });

  it("GET /v1/cache/keys?max=50000&limit=1 (client listener): the first key, and /healthz within 100 ms", async () => {
    const f = await expectNoStall(node, "client keys max=50000", () => call(`${node.api}/v1/cache/keys?max=50000&limit=1`), { timeoutMs: 120_000 });
    const r = f.result as Awaited<ReturnType<typeof call>>;
    expect(r.status).to.equal(200);
    expectFirstPage(r.json(), 50_000);
  });

  it("GET /cluster/keys?limit=1 with the default max: the first key, and /healthz within 100 ms", async () => {
    const f = await expectNoStall(node, "mgmt keys default max", () => call(`${node.mgmt}/cluster/keys?limit=1`), { timeoutMs: 120_000 });
    const r = f.result as Awaited<ReturnType<typeof call>>;
    expect(r.status).to.equal(200);
    expectFirstPage(r.json(), 10_000);
  });

  it("four concurrent GET /cluster/keys?max=50000&limit=1: all answer the first key, and /healthz within 100 ms", async () => {
    const four = () => Promise.all(Array.from({ length: 4 }, () => call(`${node.mgmt}/cluster/keys?max=50000&limit=1`)));
    const f = await expectNoStall(node, "4 x mgmt keys max=50000", four, { timeoutMs: 240_000 });
    const rs = f.result as Awaited<ReturnType<typeof four>>;
    for (const r of rs) {
      expect(r.status).to.equal(200);
      expectFirstPage(r.json(), 50_000);
    }
  });
});
