// The key browser's value preview answers the first 4 KiB of a value. It read the whole value and
// copied it once more to cut the 4 KiB, synchronously, and previews arriving together ran in one
// turn: 200 previews of an 8 MiB value held /healthz 1.4 s (found by a review). Previews now copy
// only what they answer and run one per turn. From outside, on a real node (measure.ts).
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectNoStall } from "./measure.js";

const PREVIEWS = 200;

describe("hostile: value previews of a large value", function () {
  this.timeout(300_000);
  let node: NodeProcess;

  before(async () => {
    node = await startNode({ id: "value-preview" });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it(`${PREVIEWS} concurrent previews of an 8 MiB value: each answers its first 4 KiB, /healthz within 100 ms`, async () => {
    const value = Buffer.alloc(8 * 1024 * 1024, "p");
    expect((await call(`${node.api}/v1/cache/big-preview`, { method: "PUT", body: value })).status).to.equal(200);
    const f = await expectNoStall(node, `${PREVIEWS} previews of an 8 MiB value`, () => Promise.all(Array.from({ length: PREVIEWS }, () => call(`${node.mgmt}/cluster/keys/big-preview/value`))), { timeoutMs: 60_000 });
    const answers = f.result as Array<Awaited<ReturnType<typeof call>>>;
    const statuses = new Map<number, number>();
    for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length, JSON.stringify([...statuses])).to.be.greaterThan(0);
    for (const a of ok) expect(a.json()).to.include({ bytes: value.length, truncated: true, preview_base64: value.subarray(0, 4096).toString("base64") });
    // Past the queue a preview is refused 503 with Retry-After, never held.
    for (const a of answers.filter((x) => x.status !== 200)) expect([a.status, a.headers["retry-after"]]).to.deep.equal([503, "1"]);
  });
});
