// Ten clients reading one 8 MiB value at once: each read alone stays well within the budget, but
// the requests that arrive in one poll of the event loop were answered back to back, each value
// copied and written (or base64-encoded into its JSON envelope) in one piece: /healthz waited
// 166–299 ms for the raw reads and 233–567 ms for the JSON ones (found by a review's stall
// hunt). Values over 1 MiB are now written in pieces, a turn apart, so the reads share the loop.
// A read still copies the value out of the store (a string of its bytes, freed by the next
// collection), so the RSS allowance here is one copy per reader on top of the usual 64 MB.
import { expect } from "chai";
import { call, type Reply } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectNoStall, RSS_GROWTH_MAX_BYTES } from "./measure.js";

const MIB = 1024 * 1024;
const READERS = 10;
/** One copy of the value per reader, on top of the usual allowance. */
const RSS_ALLOWANCE = RSS_GROWTH_MAX_BYTES + READERS * 8 * MIB;

describe("hostile: ten concurrent reads of an 8 MiB value", function () {
  this.timeout(300_000);
  let node: NodeProcess;
  const value = Buffer.alloc(8 * MIB);
  for (let i = 0; i < value.length; i++) value[i] = (i * 7 + (i >> 13)) & 0xff;

  before(async () => {
    node = await startNode({ id: "large-reads" });
    const put = await call(`${node.api}/v1/cache/big`, { method: "PUT", body: value });
    expect(put.status, put.body.toString()).to.equal(200);
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it(`${READERS} raw GETs at once: every answer is the value, /healthz within 100 ms`, async () => {
    const f = await expectNoStall(node, `${READERS} x raw GET of 8 MiB`, () => Promise.all(Array.from({ length: READERS }, () => call(`${node.api}/v1/cache/big`))), { timeoutMs: 60_000, rssGrowthMaxBytes: RSS_ALLOWANCE });
    for (const r of f.result as Reply[]) {
      expect(r.status).to.equal(200);
      expect(r.headers["content-length"]).to.equal(String(value.length));
      expect(r.body.equals(value), "the bytes of the value").to.equal(true);
    }
  });

  it(`${READERS} JSON GETs at once: every envelope carries the value, /healthz within 100 ms`, async () => {
    const f = await expectNoStall(node, `${READERS} x JSON GET of 8 MiB`, () => Promise.all(Array.from({ length: READERS }, () => call(`${node.api}/v1/cache/big`, { headers: { accept: "application/json" } }))), { timeoutMs: 60_000, rssGrowthMaxBytes: RSS_ALLOWANCE });
    for (const r of f.result as Reply[]) {
      expect(r.status).to.equal(200);
      expect(Number(r.headers["content-length"])).to.equal(r.body.length);
      const env = r.json<{ key: string; value: string; value_encoding: string; owners: string[] }>();
      expect(env).to.include({ key: "big", value_encoding: "base64" });
      expect(Buffer.from(env.value, "base64").equals(value), "the bytes of the value").to.equal(true);
    }
  });
});
