// Batch answers that grow past their request: every failed item echoed its key in the `key`
// field and again, escaped once more, in its error message. A batch get of 1,000 missing keys of
// 4,096 `"` characters (an 8 MB body) was answered with 24.7 MB built and written in one piece,
// and /healthz waited 147–154 ms; a batch put of such keys with a failing if_match, 164–206 ms
// (found by a review). Messages now quote at most 64 characters of a key, and a large answer is
// written in pieces a turn apart. From outside, on a real node (measure.ts).
import { expect } from "chai";
import { call, type Reply } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectNoStall } from "./measure.js";

const KEY_CHARS = 4096;
const ITEMS = 1000;
/** The i-th key: 4,096 characters that JSON escapes (`"` becomes `\"`), unique by a suffix. */
const keyOf = (i: number) => `${'"'.repeat(KEY_CHARS - 6)}${String(i).padStart(6, "0")}`;

describe("hostile: batch answers of long keys that all fail", function () {
  this.timeout(300_000);
  let node: NodeProcess;

  before(async () => {
    node = await startNode({ id: "batch-echo" });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  /** Each result names its own key, and its error message stays short. */
  function expectResults(r: Reply, status: number): void {
    expect(r.status, r.body.toString().slice(0, 200)).to.equal(200);
    const results = r.json<{ results: Array<{ key: string; status: number; error: string }> }>().results;
    expect(results).to.have.length(ITEMS);
    results.forEach((x, i) => {
      expect(x.key).to.equal(keyOf(i));
      expect(x.status).to.equal(status);
      expect(x.error.length, x.error.slice(0, 100)).to.be.below(300);
    });
  }

  it(`a batch get of ${ITEMS} missing keys of ${KEY_CHARS} quotes: every result 404, /healthz within 100 ms`, async () => {
    const body = JSON.stringify({ keys: Array.from({ length: ITEMS }, (_, i) => keyOf(i)) });
    const f = await expectNoStall(node, "batch get, 1000 missing long keys", () => call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "content-type": "application/json" }, body }), { timeoutMs: 60_000 });
    expectResults(f.result as Reply, 404);
  });

  it(`a batch put of ${ITEMS} items with long keys and an if_match that fails: every result 412, /healthz within 100 ms`, async () => {
    const items = Array.from({ length: ITEMS }, (_, i) => ({ key: keyOf(i), value: "v", if_match: '"no-such-etag"' }));
    const body = JSON.stringify({ items });
    const f = await expectNoStall(node, "batch put, 1000 long keys, failing if_match", () => call(`${node.api}/v1/cache/batch/put`, { method: "POST", headers: { "content-type": "application/json" }, body }), { timeoutMs: 60_000 });
    expectResults(f.result as Reply, 412);
  });
});
