// @hypercache/client/node against loopback servers that misbehave at the HTTP level: a body that
// trickles for ever, an answer that never comes while close() is called. The attempt's time limit
// runs on a ManualClock (undici's own timers are set far beyond the test), so the test decides
// when it passes and nothing sleeps.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { ClientClosedError, createNodeFetch, HypercacheClient, ownedNodeFetch, type NodeClientOptions } from "../../src/node.js";
import { EndpointPool } from "../../src/endpoint-pool.js";
import { FailoverTransport } from "../../src/failover-transport.js";
import { seededRandom } from "../../src/runtime.js";
import { outcome, settle } from "../unit/fake-fetch.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A loopback server; close() also ends the connections it holds open. */
async function server(handler: Handler): Promise<{ url: string; close: () => Promise<void> }> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    close: () => {
      s.closeAllConnections();
      return new Promise<void>((r) => s.close(() => r()));
    },
  };
}

/** Headers at once, then one body byte, then nothing: a trickle as slow as the test wants. */
const trickle: Handler = (req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "application/octet-stream" });
  res.write("x");
};

const ok: Handler = (req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "application/octet-stream" });
  res.end("good");
};

/** Waits up to `ms` real milliseconds, checking every few, for `p` to settle. */
async function within<T>(p: Promise<T>, ms: number) {
  for (let waited = 0; ; waited += 5) {
    const r = await outcome(p);
    if (r.state !== "pending" || waited >= ms) return r;
  }
}

describe("node client against misbehaving servers", () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  const clients: HypercacheClient[] = [];
  async function start(h: Handler) {
    const s = await server(h);
    servers.push(s);
    return s.url;
  }
  function client(o: Partial<NodeClientOptions> & { endpoints?: string[] }) {
    const clock = new ManualClock();
    const c = new HypercacheClient({ discovery: false, randomStart: false, timeoutMs: 60_000, runtime: { clock, timers: clock, random: seededRandom(1) }, ...o });
    clients.push(c);
    return { c, clock };
  }
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it("a body that trickles past timeoutMs fails the attempt, its connection is closed, and the request moves to the next endpoint", async () => {
    let closed = false;
    const watched: Handler = (req, res) => {
      res.on("close", () => (closed = true));
      trickle(req, res);
    };
    const { c, clock } = client({ endpoints: [await start(watched), await start(ok)] });
    const got = c.getText("k");
    await within(new Promise((r) => setTimeout(r, 100)), 200);
    expect((await outcome(got)).state, "the trickling body holds the attempt").to.equal("pending");
    clock.advance(60_000);
    expect(await within(got, 2000)).to.deep.equal({ state: "resolved", value: "good" });
    for (let i = 0; i < 100 && !closed; i++) await settle();
    expect(closed, "the trickling answer's connection is closed").to.equal(true);
  });

  it("a body with a Content-Length that trickles past timeoutMs fails the attempt too (the transport's own limit), and the request moves on", async () => {
    const declared: Handler = (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": "100" });
      res.write("x");
    };
    const { c, clock } = client({ endpoints: [await start(declared), await start(ok)] });
    const got = c.getText("k");
    await within(new Promise((r) => setTimeout(r, 100)), 200);
    expect((await outcome(got)).state, "the trickling body holds the attempt").to.equal("pending");
    clock.advance(60_000 + 200);
    expect(await within(got, 2000)).to.deep.equal({ state: "resolved", value: "good" });
  });

  it("a stream request answered 503 with a Content-Length body that stalls fails at timeoutMs (only a stream's 200 is unbounded)", async () => {
    const stalled: Handler = (req, res) => {
      req.resume();
      res.writeHead(503, { "content-type": "application/json", "content-length": "100" });
      res.write('{"err');
    };
    const url = await start(stalled);
    const clock = new ManualClock();
    const { fetch, agent } = ownedNodeFetch({}, { clock, timers: clock });
    try {
      const runtime = { clock, timers: clock, random: seededRandom(1) };
      const t = new FailoverTransport({ fetch, pool: new EndpointPool([url], { clock, random: runtime.random }), auth: { authorization: () => undefined }, runtime, timeoutMs: 500 });
      const sent = t.send({ method: "GET", path: "/cluster/events", headers: {}, stream: true });
      sent.catch(() => undefined);
      await within(new Promise((r) => setTimeout(r, 100)), 200);
      expect((await outcome(sent)).state).to.equal("pending");
      clock.advance(700);
      expect((await within(sent, 2000)).state, "failed at the time limit").to.equal("rejected");
    } finally {
      await agent.destroy();
    }
  });

  it("close() ends a request in flight with ClientClosedError also when the client was given a fetch from createNodeFetch (whose Agent it does not own)", async () => {
    const { fetch, agent } = createNodeFetch();
    try {
      const { c } = client({ endpoints: [await start((req) => req.resume())], fetch });
      const got = c.get("k");
      got.catch(() => undefined);
      await settle();
      await settle();
      await c.close();
      const r = await within(got, 1000);
      expect(r.state, "the request ended with close()").to.equal("rejected");
      expect((r as { error: unknown }).error).to.be.instanceOf(ClientClosedError);
    } finally {
      await agent.destroy();
    }
  });

  it("a chunked answer over maxAnswerBytes is cut off and the request moves to the next endpoint", async () => {
    let written = 0;
    const endless: Handler = (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const more = () => {
        while (written < 64 * 1024 * 1024 && res.write(Buffer.alloc(64 * 1024))) written += 64 * 1024;
      };
      res.on("drain", more);
      more();
    };
    const { c } = client({ endpoints: [await start(endless), await start(ok)], maxAnswerBytes: 1024 * 1024 });
    expect(await within(c.getText("k"), 5000)).to.deep.equal({ state: "resolved", value: "good" });
    expect(written, "the server was not read to its end").to.be.below(64 * 1024 * 1024);
  });

  it("close() while a request waits for its answer resolves at once and the request rejects with ClientClosedError", async () => {
    const { c } = client({ endpoints: [await start((req) => req.resume())] });
    const got = c.get("k");
    got.catch(() => undefined);
    await settle();
    await settle();
    const closed = c.close();
    expect((await within(closed, 2000)).state, "close() resolved").to.equal("resolved");
    const r = await within(got, 1000);
    expect(r.state).to.equal("rejected");
    expect((r as { error: unknown }).error).to.be.instanceOf(ClientClosedError);
  });

  it("close() while a watch is open ends its iteration and resolves", async () => {
    const sse: Handler = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: heartbeat\ndata: {"n":1}\n\n');
    };
    const { c } = client({ managementEndpoints: [await start(sse)] });
    const w = await c.watch();
    let events = 0;
    const loop = (async () => {
      for await (const _ of w) events++;
      return "ended";
    })();
    for (let i = 0; i < 100 && events === 0; i++) await settle();
    expect(events).to.equal(1);
    expect((await within(c.close(), 2000)).state, "close() resolved").to.equal("resolved");
    expect(await within(loop, 1000)).to.deep.equal({ state: "resolved", value: "ended" });
  });
  it("an answer's body is one stream however often it is read (a watch read it twice: a second, unread stream queued every event for as long as the watch lasted)", async () => {
    const url = await start((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("event: heartbeat\ndata: {}\n\n");
    });
    const { fetch, agent } = createNodeFetch();
    try {
      const r = await fetch(`${url}/cluster/events`, { method: "GET", headers: {}, stream: true });
      const body = r.body;
      expect(r.body, "the same stream on each read").to.equal(body);
      const chunks: Uint8Array[] = [];
      const reader = (body as ReadableStream<Uint8Array>).getReader();
      for (let c = await reader.read(); !c.done; c = await reader.read()) chunks.push(c.value);
      expect(Buffer.concat(chunks).toString()).to.equal("event: heartbeat\ndata: {}\n\n");
    } finally {
      await agent.destroy();
    }
  });
});
