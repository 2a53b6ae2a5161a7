// globalFetch: the platform fetch with the client's time limits. A stream request (watch) links
// the caller's signal to its own only while the request is under way: a watch that reconnects for
// days on one signal must not gather one abort listener per attempt.
import { getEventListeners } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { HypercacheClient } from "../../src/client.js";
import { BadAnswerError, ClientClosedError, HypercacheError, type AllEndpointsFailedError } from "../../src/errors.js";
import { globalFetch } from "../../src/fetch-types.js";

/** A loopback server answering with `handler`, counting the requests it got. */
async function loopback(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  let hits = 0;
  const s = http.createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, hits: () => hits, close: () => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r()))) };
}

describe("globalFetch", () => {
  const real = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = real;
  });

  it("leaves no abort listener on the caller's signal after stream requests, failed or answered", async () => {
    let calls = 0;
    globalThis.fetch = (async () => {
      calls++;
      if (calls % 2 === 0) throw new TypeError("fetch failed");
      return new Response("", { status: 503 });
    }) as typeof fetch;
    const f = globalFetch();
    const caller = new AbortController();
    for (let i = 0; i < 12; i++) {
      await f("http://m1:8081/cluster/events", { method: "GET", headers: {}, stream: true, timeoutMs: 1000, signal: caller.signal }).catch(() => undefined);
    }
    expect(calls).to.equal(12);
    expect(getEventListeners(caller.signal, "abort")).to.have.length(0);
  });

  it("still ends an answered stream when the caller aborts", async () => {
    let seen: AbortSignal | undefined;
    globalThis.fetch = (async (_url: string, init: RequestInit) => {
      seen = init.signal ?? undefined;
      return new Response("", { status: 200 });
    }) as typeof fetch;
    const caller = new AbortController();
    await globalFetch()("http://m1:8081/cluster/events", { method: "GET", headers: {}, stream: true, timeoutMs: 1000, signal: caller.signal });
    expect(seen?.aborted).to.equal(false);
    caller.abort(new Error("stop"));
    expect(seen?.aborted).to.equal(true);
  });

  it("close() ends the connection of a request waiting for its headers (it stayed open until timeoutMs)", async () => {
    let connectionClosed = false;
    const silent = await loopback((req, res) => {
      req.resume();
      res.on("close", () => (connectionClosed = true));
    });
    const c = new HypercacheClient({ endpoints: [silent.url], discovery: false, timeoutMs: 30_000 });
    try {
      const got = c.get("k").catch((e: unknown) => e);
      while (silent.hits() === 0) await new Promise((r) => setTimeout(r, 5));
      c.close();
      expect(await got).to.be.instanceOf(ClientClosedError);
      for (let waited = 0; !connectionClosed && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      expect(connectionClosed, "the node's side of the connection closed").to.equal(true);
    } finally {
      await silent.close();
    }
  });

  it("a gzip answer is bounded as decoded: 8 MiB of zeros in a 8 KiB body with its Content-Length is a BadAnswerError under maxAnswerBytes 1 MiB, not the value", async () => {
    const packed = gzipSync(Buffer.alloc(8 * 1024 * 1024), { level: 9 });
    const node = await loopback((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream", "content-encoding": "gzip", "content-length": String(packed.byteLength), "x-cache-node": "n1" });
      res.end(packed);
    });
    const c = new HypercacheClient({ endpoints: [node.url], discovery: false, maxAnswerBytes: 1024 * 1024 });
    try {
      const err = await c.get("k").then((v) => `a value of ${v?.byteLength} bytes`, (e: unknown) => e);
      expect((err as AllEndpointsFailedError).attempts?.[0]?.error, String(err)).to.be.instanceOf(BadAnswerError);
    } finally {
      c.close();
      await node.close();
    }
  });

  it("does not follow a redirect: a 307 to another origin is the typed 3xx error, and neither the read nor the PUT body goes there", async () => {
    const elsewhere = await loopback((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"key":"k","stored":true,"bytes":1,"node":"evil","owners":[]}');
    });
    const redirecting = await loopback((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${elsewhere.url}${req.url}` });
      res.end();
    });
    const c = new HypercacheClient({ endpoints: [redirecting.url], discovery: false });
    try {
      for (const call of [() => c.get("k"), () => c.set("k", "secret value")]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).to.be.instanceOf(HypercacheError).and.include({ status: 307 });
      }
      expect(elsewhere.hits()).to.equal(0);
    } finally {
      c.close();
      await Promise.all([elsewhere.close(), redirecting.close()]);
    }
  });
});
