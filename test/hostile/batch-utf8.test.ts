// Batch bodies of multi-byte text near the 16 MiB body limit. The body was checked with isUtf8,
// decoded with one Buffer.toString of all 16 MiB, parsed, and every value converted, all in one
// turn: a batch put of 1,000 values of 4,185 emoji held /healthz 132–147 ms, and a batch get of
// 1,000 over-long emoji keys 478 ms (found by a review; a CPU profile put 75 ms in toString). The
// body is now decoded as its chunks arrive. From outside, on a real node (measure.ts).
import { expect } from "chai";
import { call, type Reply } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectNoStall } from "./measure.js";

const ITEMS = 1000;
const EMOJI = "\u{1F600}";

describe("hostile: batch bodies of multi-byte text", function () {
  this.timeout(300_000);
  let node: NodeProcess;

  before(async () => {
    node = await startNode({ id: "batch-utf8" });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it(`a batch put of ${ITEMS} values of 4,185 emoji (a 16 MiB body): every item stored, /healthz within 100 ms`, async () => {
    const items = Array.from({ length: ITEMS }, (_, i) => ({ key: `emoji-${i}`, value: EMOJI.repeat(4185) }));
    const body = JSON.stringify({ items });
    expect(Buffer.byteLength(body)).to.be.below(16 * 1024 * 1024);
    // RSS: the 16.7 MB stored, and while the request runs its text (two bytes per UTF-16 unit in
    // V8), the parsed values and their byte strings: 69-86 MB measured (83-94 MB before the
    // change), past the suite's 64 MB default.
    const f = await expectNoStall(node, "batch put, 1000 emoji values", () => call(`${node.api}/v1/cache/batch/put`, { method: "POST", headers: { "content-type": "application/json" }, body }), {
      timeoutMs: 60_000,
      rssGrowthMaxBytes: 128 * 1024 * 1024,
    });
    const r = f.result as Reply;
    expect(r.status, r.body.toString().slice(0, 200)).to.equal(200);
    expect(r.json<{ results: Array<{ status: number }> }>().results.filter((x) => x.status !== 200)).to.deep.equal([]);
    expect((await call(`${node.api}/v1/cache/emoji-7`)).body.toString()).to.equal(EMOJI.repeat(4185));
  });

  it(`a batch get of ${ITEMS} keys of 4,000 emoji (over the key limit): every result 400, /healthz within 100 ms`, async () => {
    const body = JSON.stringify({ keys: Array.from({ length: ITEMS }, (_, i) => `${EMOJI.repeat(4000)}${i}`) });
    const f = await expectNoStall(node, "batch get, 1000 over-long emoji keys", () => call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "content-type": "application/json" }, body }), { timeoutMs: 60_000 });
    const r = f.result as Reply;
    expect(r.status, r.body.toString().slice(0, 200)).to.equal(200);
    expect(r.json<{ results: Array<{ status: number }> }>().results.map((x) => x.status).filter((s) => s !== 400)).to.deep.equal([]);
  });
});
