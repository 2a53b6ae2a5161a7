// Compression bombs to the peer listener of a real node (the route fuzzer's bombs, made small):
// with SERVICE_COMPRESSION_THRESHOLD=0 a gzip body is refused (400) before anything is inflated;
// with a threshold a body whose gzip trailer declares more than the 16 MiB cap is refused (429)
// the same way. Before, each bomb was inflated into 16 KiB chunks up to the cap and then refused:
// eight of them left the node's RSS 50-60 MiB higher (the chunks wait for a garbage collection,
// and glibc keeps the arena they grew). RSS is read from /proc, so a busy machine does not change it.
import { readFileSync } from "node:fs";
import http from "node:http";
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const TOKEN = "bomb-test-peer-token-0123456789ab";
const SET = "/internal/hypercache.peer.v1.PeerService/Set";
const BOMBS = 8;
/** RSS may grow this much over the bombs (the fix keeps it within a few MiB; before, 50-60 MiB). */
const RSS_GROWTH_MAX_BYTES = 24 * 2 ** 20;

function rssBytes(n: NodeProcess): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${n.child.pid}/status`, "utf8"))?.[1]) * 1024;
}

function post(n: NodeProcess, body: Buffer, encoding: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "content-length": body.length };
    if (encoding) headers["content-encoding"] = encoding;
    const req = http.request({ host: "127.0.0.1", port: n.distPort, path: SET, method: "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const setBody = JSON.stringify({ entries: [{ key: "gz-ok", value: Buffer.from("hello").toString("base64"), version: "1000", origin: "t" }] });

describe("peer listener: compression bombs", function () {
  this.timeout(120_000);
  // 64 MiB of JSON whitespace after an opening brace: 64 KB of gzip, four times the 16 MiB cap.
  const bomb = gzipSync(Buffer.concat([Buffer.from("{"), Buffer.alloc(64 * 2 ** 20, 0x20)]), { level: 9 });
  let off: NodeProcess;
  let on: NodeProcess;

  before(async () => {
    [off, on] = await Promise.all([
      startNode({ id: "bomb-off", env: { SERVICE_PEER_TOKEN: TOKEN } }),
      startNode({ id: "bomb-on", env: { SERVICE_PEER_TOKEN: TOKEN, SERVICE_COMPRESSION_THRESHOLD: "1024" } }),
    ]);
  });
  after(async () => {
    await Promise.all([off?.stop(), on?.stop()]);
  });

  async function bombard(n: NodeProcess): Promise<{ statuses: number[]; growth: number; first: string }> {
    // warm the listener up with plain calls, so the baseline includes what any call allocates
    for (let i = 0; i < 5; i++) expect((await post(n, Buffer.from(setBody), undefined)).status).to.equal(200);
    const baseline = rssBytes(n);
    const answers = [];
    for (let i = 0; i < BOMBS; i++) answers.push(await post(n, bomb, "gzip"));
    return { statuses: answers.map((a) => a.status), growth: rssBytes(n) - baseline, first: answers[0]?.text ?? "" };
  }

  it("compression off (the default): gzip bodies are refused with 400 before inflating, and RSS stays put", async () => {
    const { statuses, growth, first } = await bombard(off);
    expect(statuses).to.deep.equal(Array(BOMBS).fill(400));
    expect(first).to.match(/"code":"invalid_argument".*compression is off/);
    expect(growth, `RSS grew ${(growth / 2 ** 20).toFixed(1)} MiB over ${BOMBS} bombs`).to.be.below(RSS_GROWTH_MAX_BYTES);
    // a well-formed gzip body is refused the same way: the caller must not compress
    expect((await post(off, gzipSync(setBody), "gzip")).status).to.equal(400);
  });

  it("compression on: a gzip body whose trailer declares more than the cap is refused with 429 before inflating, and RSS stays put", async () => {
    const { statuses, growth, first } = await bombard(on);
    expect(statuses).to.deep.equal(Array(BOMBS).fill(429));
    expect(first).to.match(/"code":"resource_exhausted"/);
    expect(growth, `RSS grew ${(growth / 2 ** 20).toFixed(1)} MiB over ${BOMBS} bombs`).to.be.below(RSS_GROWTH_MAX_BYTES);
    // a well-formed gzip body within the cap is accepted
    expect((await post(on, gzipSync(setBody), "gzip")).status).to.equal(200);
  });
});
