// What the client listener holds for its clients. Clients that ask for a large value and never
// read the answer: the node keeps each answer's body until the kernel has taken it, and the
// listener takes 16,384 connections; before SERVICE_MAX_INFLIGHT_BYTES, 150 such connections on
// one 8 MiB value grew a node's RSS by 1.2 GB (the 30 to 60 s stalled-answer timeout is what ended
// them). Clients that send half of a large body and stall hold what they sent. Now bodies and
// answers over 16 KiB are held against the budget, and a request that would pass it is 503.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import net from "node:net";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { RSS_GROWTH_MAX_BYTES } from "./measure.js";

const MIB = 1024 * 1024;
const BUDGET = 48 * MIB;
const UNREAD = 120;
const STALLED = 200;
const LISTINGS = 40;
/**
 * RSS allowed on top of the budget for the key listings: the usual 64 MB, and the pages refused
 * listings built before their size was known, garbage for the next collection. Without the
 * budget, 40 unread pages grew RSS by 1.47 GB (an attacker review).
 */
const LISTING_RSS_ALLOWANCE = BUDGET + 4 * RSS_GROWTH_MAX_BYTES;
/**
 * RSS allowed on top of the budget for the stalled bodies: the usual 64 MB, and what the refused
 * bodies sent after their refusal, read and dropped until their connections end (lingering
 * close), garbage for the next collection: 110–165 MB at the peak. Without the budget, 200
 * stalled bodies grew RSS by 800 MB.
 */
const BODY_RSS_ALLOWANCE = BUDGET + 4 * RSS_GROWTH_MAX_BYTES;
/**
 * RSS allowed on top of the budget: the usual 64 MB. A read refused past the budget is refused
 * before it copies the value out of the store (while large answers are held, a read checks the
 * size of the node's own copy first): when the copy came first, 120 refused reads left 123–355 MB
 * of copies for the next collection. Without the budget, 120 unread answers grew RSS by 680 MB.
 */
const RSS_ALLOWANCE = BUDGET + RSS_GROWTH_MAX_BYTES;

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection that sends one GET and never reads; collects nothing. */
function unreadGet(port: number, path: string, accept?: string): net.Socket {
  const s = net.connect(port, "127.0.0.1");
  s.on("error", () => undefined);
  s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${accept ? `Accept: ${accept}\r\n` : ""}\r\n`);
  s.pause();
  return s;
}

async function metric(node: NodeProcess, name: string): Promise<number> {
  const text = (await call(`${node.mgmt}/metrics`)).body.toString();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || (!name.includes("{") && l.startsWith(`${name}{`)));
  return Number(line?.split(" ").pop() ?? NaN);
}

describe("hostile: answers nobody reads, bodies that stall half way", function () {
  this.timeout(120_000);
  let node: NodeProcess;
  const value = Buffer.alloc(8 * MIB);
  for (let i = 0; i < value.length; i++) value[i] = (i * 13 + (i >> 11)) & 0xff;

  before(async () => {
    node = await startNode({ id: "held-bytes", env: { SERVICE_MAX_INFLIGHT_BYTES: String(BUDGET) } });
    expect((await call(`${node.api}/v1/cache/big`, { method: "PUT", body: value })).status).to.equal(200);
    expect((await call(`${node.api}/v1/cache/small`, { method: "PUT", body: "tiny" })).status).to.equal(200);
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it(`${UNREAD} unread GETs of an 8 MiB value hold at most SERVICE_MAX_INFLIGHT_BYTES; past it 503, small reads served; the budget comes back when they go`, async () => {
    const pid = node.child.pid as number;
    const rssBefore = rssOf(pid);
    const sockets = Array.from({ length: UNREAD }, (_, i) => unreadGet(node.apiPort, "/v1/cache/big", i % 2 === 0 ? "application/json" : undefined));
    let rssPeak = rssBefore;
    for (let t = 0; t < 30; t++) {
      await sleep(100);
      rssPeak = Math.max(rssPeak, rssOf(pid));
    }
    const growth = rssPeak - rssBefore;
    console.log(`      RSS ${(rssBefore / MIB).toFixed(0)} MiB -> peak ${(rssPeak / MIB).toFixed(0)} MiB with ${UNREAD} unread 8 MiB answers (budget ${BUDGET / MIB} MiB)`);
    expect(growth, "RSS growth").to.be.below(RSS_ALLOWANCE);

    const refused = await call(`${node.api}/v1/cache/big`);
    expect(refused.status, refused.body.toString()).to.equal(503);
    expect(refused.headers["retry-after"]).to.equal("1");
    const env = refused.json<{ error: string; code: string; details: { held_bytes: number; max_bytes: number } }>();
    expect(env.code).to.equal("UNAVAILABLE");
    expect(env.error).to.match(/SERVICE_MAX_INFLIGHT_BYTES/);
    expect(env.details.max_bytes).to.equal(BUDGET);
    expect(env.details.held_bytes).to.be.above(0).and.at.most(BUDGET);
    const tooLarge = await call(`${node.api}/v1/cache/too-large`, { method: "PUT", body: Buffer.alloc(9 * MIB) });
    expect(tooLarge.status, "a body over the value limit is 413 whatever the budget").to.equal(413);
    const small = await call(`${node.api}/v1/cache/small`);
    expect(small.status).to.equal(200);
    expect(small.body.toString()).to.equal("tiny");
    expect(await metric(node, "http_server_inflight_held_bytes")).to.be.above(0).and.at.most(BUDGET);
    expect(await metric(node, 'http_server_inflight_refused_total{of="answer"}')).to.be.at.least(UNREAD - Math.floor(BUDGET / value.length));

    for (const s of sockets) s.destroy();
    let read = await call(`${node.api}/v1/cache/big`);
    for (let i = 0; i < 50 && read.status === 503; i++) {
      await sleep(100);
      read = await call(`${node.api}/v1/cache/big`);
    }
    expect(read.status).to.equal(200);
    expect(read.body.equals(value), "the value's bytes").to.equal(true);
    expect(await metric(node, "http_server_inflight_held_bytes")).to.equal(0);
  });

  it(`${STALLED} PUTs that send 4 MiB of an 8 MiB body and stall hold at most the budget; past it 503 and the connection ends; a declared body that does not fit is refused before it is read`, async () => {
    const pid = node.child.pid as number;
    const rssBefore = rssOf(pid);
    const half = Buffer.alloc(4 * MIB, 0x62);
    const answers: string[] = [];
    const sockets = Array.from({ length: STALLED }, (_, i) => {
      const s = net.connect(node.apiPort, "127.0.0.1");
      s.on("error", () => undefined);
      s.on("data", (d: Buffer) => answers.push(d.toString("latin1")));
      s.write(`PUT /v1/cache/stalled-${i} HTTP/1.1\r\nHost: x\r\nContent-Length: ${8 * MIB}\r\n\r\n`);
      s.write(half);
      return s;
    });
    let rssPeak = rssBefore;
    for (let t = 0; t < 50; t++) {
      await sleep(100);
      rssPeak = Math.max(rssPeak, rssOf(pid));
    }
    console.log(`      RSS ${(rssBefore / MIB).toFixed(0)} MiB -> peak ${(rssPeak / MIB).toFixed(0)} MiB with ${STALLED} stalled 4 MiB halves (budget ${BUDGET / MIB} MiB)`);
    expect(rssPeak - rssBefore, "RSS growth").to.be.below(BODY_RSS_ALLOWANCE);
    const refusedMidway = answers.filter((a) => a.startsWith("HTTP/1.1 503")).length;
    expect(refusedMidway, "stalled bodies refused once the budget was full").to.be.at.least(STALLED - Math.ceil(BUDGET / half.length) - 1);
    expect(answers.filter((a) => a.startsWith("HTTP/1.1 503")).every((a) => /connection: close/i.test(a) && a.includes('"code":"UNAVAILABLE"'))).to.equal(true);

    const declared = await call(`${node.api}/v1/cache/fresh`, { method: "PUT", body: Buffer.alloc(8 * MIB, 0x63) });
    expect(declared.status, declared.body.toString()).to.equal(503);
    expect(declared.json<{ details: { body_bytes: number } }>().details.body_bytes).to.equal(8 * MIB);
    expect(await metric(node, 'http_server_inflight_refused_total{of="body"}')).to.be.at.least(refusedMidway + 1);

    for (const s of sockets) s.destroy();
    let put = await call(`${node.api}/v1/cache/fresh`, { method: "PUT", body: Buffer.alloc(8 * MIB, 0x63) });
    for (let i = 0; i < 50 && put.status === 503; i++) {
      await sleep(100);
      put = await call(`${node.api}/v1/cache/fresh`, { method: "PUT", body: Buffer.alloc(8 * MIB, 0x63) });
    }
    expect(put.status, put.body.toString()).to.equal(200);
    expect(await metric(node, "http_server_inflight_held_bytes")).to.equal(0);
  });

  it(`${LISTINGS} unread key listings of long escaped keys are held too: at most the budget, past it 503`, async () => {
    // 500 keys of 4,000 control characters: each is 24,000 characters escaped, a page 12 MB.
    const items = Array.from({ length: 500 }, (_, i) => ({ key: `${String(i).padStart(3, "0")}${"\u0001".repeat(3997)}`, value: "eA==" }));
    const put = await call(`${node.api}/v1/cache/batch/put`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items }) });
    expect(put.status, put.body.toString().slice(0, 200)).to.equal(200);
    const pid = node.child.pid as number;
    const rssBefore = rssOf(pid);
    const sockets = Array.from({ length: LISTINGS }, () => unreadGet(node.apiPort, "/v1/cache/keys?limit=500"));
    let rssPeak = rssBefore;
    for (let t = 0; t < 50; t++) {
      await sleep(100);
      rssPeak = Math.max(rssPeak, rssOf(pid));
    }
    console.log(`      RSS ${(rssBefore / MIB).toFixed(0)} MiB -> peak ${(rssPeak / MIB).toFixed(0)} MiB with ${LISTINGS} unread 12 MB key pages (budget ${BUDGET / MIB} MiB)`);
    expect(rssPeak - rssBefore, "RSS growth").to.be.below(LISTING_RSS_ALLOWANCE);
    expect(await metric(node, "http_server_inflight_held_bytes")).to.be.above(0).and.at.most(BUDGET);
    const refused = await call(`${node.api}/v1/cache/keys?limit=500`);
    expect(refused.status).to.equal(503);
    for (const s of sockets) s.destroy();
  });
});
