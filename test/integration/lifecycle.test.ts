// The node lifecycle of real processes: draining through POST /dist/drain (one-way, idempotent,
// counted once, logged once; management /health 503; writes single and batch refused with 503
// DRAINING; reads keep serving), and the shutdown sequence on real SIGTERM and SIGINT with a slow
// in-flight PUT (it completes and is stored, records in order, exit 0, the client listener
// refuses new connections), and a second signal during shutdown (immediate exit 130).
import http from "node:http";
import net from "node:net";
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { startNode, type LogRecord, type NodeProcess } from "../helpers/node-process.js";
import { sleep } from "./observability-helpers.js";
import { expectEnvelope } from "../helpers/envelope.js";

type Json = Record<string, unknown>;

const json = (body: unknown) => ({ method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });

interface SlowRequest {
  /** Resolves with the answer (status and body), or rejects when the connection fails first. */
  readonly answer: Promise<{ status: number; body: string; at: number }>;
  /** Sends the rest of the body now and ends the request. */
  finish(): void;
  destroy(): void;
}

/**
 * A PUT of `chunks` x `chunkBytes` bytes with a declared Content-Length whose body is streamed
 * slowly: the first chunk at once, then one every `intervalMs` when `auto`, otherwise the rest
 * only on finish(). Resolves `started` once the first chunk has been handed to the socket.
 */
function slowPut(port: number, key: string, opts: { chunks: number; chunkBytes: number; intervalMs: number; auto: boolean }): { req: SlowRequest; started: Promise<void> } {
  const total = opts.chunks * opts.chunkBytes;
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const req = http.request({ host: "127.0.0.1", port, method: "PUT", path: `/v1/cache/${encodeURIComponent(key)}`, headers: { "Content-Length": total, "Content-Type": "application/octet-stream" }, agent: false });
  const answer = new Promise<{ status: number; body: string; at: number }>((resolve, reject) => {
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, at: Date.now() }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  answer.catch(() => undefined);
  const chunk = (i: number) => Buffer.alloc(opts.chunkBytes, 0x61 + (i % 26));
  const sendNext = () => {
    if (sent >= opts.chunks) return;
    req.write(chunk(sent));
    sent++;
    if (sent === opts.chunks) req.end();
    else if (opts.auto) timer = setTimeout(sendNext, opts.intervalMs);
  };
  const started = new Promise<void>((resolve) => {
    req.flushHeaders();
    req.write(chunk(sent), () => resolve());
    sent++;
    if (opts.auto) timer = setTimeout(sendNext, opts.intervalMs);
  });
  return {
    started,
    req: {
      answer,
      finish() {
        clearTimeout(timer);
        while (sent < opts.chunks) {
          req.write(chunk(sent));
          sent++;
        }
        req.end();
      },
      destroy() {
        clearTimeout(timer);
        req.destroy();
      },
    },
  };
}

/** Tries a new TCP connection: "refused" on ECONNREFUSED, "connected" when it opens. */
function tryConnect(port: number): Promise<"refused" | "connected" | string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve("connected");
    });
    s.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED" ? "refused" : String(err.code ?? err.message)));
  });
}

/** Resolves with the exit code, or "still running" after `ms`. */
function exitWithin(node: NodeProcess, ms: number): Promise<number | string> {
  return Promise.race([node.exited, sleep(ms).then(() => "still running")]);
}

describe("lifecycle: drain through POST /dist/drain on a real node", function () {
  this.timeout(20_000);
  let node: NodeProcess;

  before(async () => {
    node = await startNode({ id: "drain-1" });
    for (const [k, v] of [["d:a", "alpha"], ["d:b", "bravo"], ["d:c", "charlie"]]) {
      expect((await call(`${node.api}/v1/cache/${encodeURIComponent(k as string)}`, { method: "PUT", body: v })).status).to.equal(200);
    }
  });

  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("answers 200 {draining: true}, and 200 again on a second call; dist.drains counts the transition once; exactly one 'dist node draining' record", async () => {
    const metricsBefore = (await call(`${node.mgmt}/dist/metrics`)).json<Record<string, number>>();
    expect(metricsBefore["dist.drains"]).to.equal(0);
    const first = await call(`${node.mgmt}/dist/drain`, { method: "POST" });
    expect(first.status).to.equal(200);
    expect(first.json()).to.deep.equal({ draining: true });
    const second = await call(`${node.mgmt}/dist/drain`, { method: "POST" });
    expect(second.status, "a second drain is accepted (idempotent)").to.equal(200);
    expect(second.json()).to.deep.equal({ draining: true });
    expect((await call(`${node.mgmt}/dist/metrics`)).json<Record<string, number>>()["dist.drains"]).to.equal(1);
    const record = await node.waitForLog("dist node draining", 3000);
    expect(record.level).to.equal("info");
    await sleep(200); // a second record, if any, would have arrived by now
    expect(node.logs.filter((r) => r.message === "dist node draining")).to.have.length(1);
  });

  it("management /health answers 503 {status: draining, node, draining: true}; client /health and /healthz stay 200", async () => {
    const h = await call(`${node.mgmt}/health`);
    expect(h.status).to.equal(503);
    expect(h.json()).to.deep.equal({ status: "draining", node: "drain-1", draining: true, catching_up: false });
    expect((await call(`${node.api}/health`)).status).to.equal(200);
    expect((await call(`${node.api}/healthz`)).status).to.equal(200);
  });

  it("the dist listener's /health answers 503 while draining", async () => {
    expect((await call(`${node.dist}/health`)).status).to.equal(503);
  });

  it("PUT and DELETE answer 503 DRAINING envelopes and change nothing", async () => {
    expect(expectEnvelope(await call(`${node.api}/v1/cache/d%3Aa`, { method: "PUT", body: "changed" }), 503, "DRAINING").details, "details name the draining node").to.deep.equal({ node: "drain-1" });
    expectEnvelope(await call(`${node.api}/v1/cache/d%3Anew`, { method: "PUT", body: "new" }), 503, "DRAINING");
    expectEnvelope(await call(`${node.api}/v1/cache/d%3Ab`, { method: "DELETE" }), 503, "DRAINING");
    expect((await call(`${node.api}/v1/cache/d%3Aa`)).body.toString()).to.equal("alpha");
    expect((await call(`${node.api}/v1/cache/d%3Ab`)).status).to.equal(200);
    expect((await call(`${node.api}/v1/cache/d%3Anew`)).status).to.equal(404);
  });

  it("batch put and batch delete answer 200 with every item status 503, code DRAINING, and change nothing", async () => {
    const put = await call(`${node.api}/v1/cache/batch/put`, json({ items: [{ key: "d:a", value: "x" }, { key: "d:batch-new", value: "y" }] }));
    expect(put.status).to.equal(200);
    const putResults = put.json<{ results: Json[] }>().results;
    expect(putResults.map((r) => [r.key, r.status, r.code])).to.deep.equal([
      ["d:a", 503, "DRAINING"],
      ["d:batch-new", 503, "DRAINING"],
    ]);
    for (const r of putResults) expect(r.error).to.be.a("string").and.not.equal("");
    const del = await call(`${node.api}/v1/cache/batch/delete`, json({ keys: ["d:b", "d:c"] }));
    expect(del.status).to.equal(200);
    expect(del.json<{ results: Json[] }>().results.map((r) => [r.key, r.status, r.code])).to.deep.equal([
      ["d:b", 503, "DRAINING"],
      ["d:c", 503, "DRAINING"],
    ]);
    expect((await call(`${node.api}/v1/cache/d%3Aa`)).body.toString()).to.equal("alpha");
    expect((await call(`${node.api}/v1/cache/d%3Ac`)).status).to.equal(200);
    expect((await call(`${node.api}/v1/cache/d%3Abatch-new`)).status).to.equal(404);
  });

  it("GET, HEAD and batch get keep serving", async () => {
    const get = await call(`${node.api}/v1/cache/d%3Ab`);
    expect(get.status).to.equal(200);
    expect(get.body.toString()).to.equal("bravo");
    const head = await call(`${node.api}/v1/cache/d%3Ac`, { method: "HEAD" });
    expect(head.status).to.equal(200);
    expect(head.headers["x-cache-node"]).to.equal("drain-1");
    const batch = await call(`${node.api}/v1/cache/batch/get`, json({ keys: ["d:a", "d:c", "d:absent"] }));
    expect(batch.status).to.equal(200);
    const decoded = (r: Json) => (r.value === undefined ? undefined : r.value_encoding === "base64" ? Buffer.from(r.value as string, "base64").toString("utf8") : r.value);
    expect(batch.json<{ results: Json[] }>().results.map((r) => [r.key, r.status, r.found, decoded(r)])).to.deep.equal([
      ["d:a", 200, true, "alpha"],
      ["d:c", 200, true, "charlie"],
      ["d:absent", 404, false, undefined],
    ]);
  });
});

/** What one shutdown run observed. */
interface ShutdownRun {
  node: NodeProcess;
  signalAt: number;
  slow: { status: number; body: string; at: number } | Error;
  /** /stats read after the slow PUT answered, while a second in-flight request held the shutdown. */
  statsAfterPut: Json | Error;
  /** A new TCP connection to the client port, tried after the drain record. */
  connectDuringShutdown: string;
  /** Management /health while the shutdown waited. */
  mgmtHealthDuringShutdown: number | string;
  exit: number | string;
  exitAt: number;
  logs: LogRecord[];
}

const SLOW_CHUNKS = 6;
const SLOW_CHUNK_BYTES = 1000;

/**
 * Starts a node, sends a slow PUT (body streamed over ~1.5 s) and a second slow PUT that only
 * finishes when told (it keeps the client listener closing, so the node stays up after the first
 * answer and /stats can be read), both before the signal; sends `signal`; collects the outcome.
 */
async function shutdownRun(signal: NodeJS.Signals, id: string): Promise<ShutdownRun> {
  const node = await startNode({ id });
  const slow = slowPut(node.apiPort, "slow-key", { chunks: SLOW_CHUNKS, chunkBytes: SLOW_CHUNK_BYTES, intervalMs: 300, auto: true });
  const holder = slowPut(node.apiPort, "holder-key", { chunks: 2, chunkBytes: 10, intervalMs: 0, auto: false });
  await Promise.all([slow.started, holder.started]);
  await sleep(150); // both requests are in the server's hands (headers parsed, body being read)
  const signalAt = Date.now();
  node.child.kill(signal);
  await node.waitForLog("dist node draining", 5000);
  // The listener closes right after the drain record is written; the record can reach us a few
  // microseconds before that, so wait (briefly) for the first refusal, then check it holds.
  const until = Date.now() + 1000;
  let connectDuringShutdown = await tryConnect(node.apiPort);
  while (connectDuringShutdown !== "refused" && Date.now() < until) {
    await sleep(20);
    connectDuringShutdown = await tryConnect(node.apiPort);
  }
  for (let i = 0; i < 3 && connectDuringShutdown === "refused"; i++) connectDuringShutdown = await tryConnect(node.apiPort);
  const mgmtHealthDuringShutdown = await call(`${node.mgmt}/health`).then(
    (r) => r.status,
    (e: Error) => e.message,
  );
  const slowAnswer = await slow.req.answer.catch((e: Error) => e);
  const statsAfterPut = await call(`${node.mgmt}/stats`).then(
    (r) => r.json(),
    (e: Error) => e,
  );
  holder.req.finish();
  await holder.req.answer.catch(() => undefined);
  const exit = await Promise.race([node.exited, sleep(10_000).then(() => "no exit within 10 s after the last in-flight request")]);
  const exitAt = Date.now();
  if (typeof exit === "string" && exit.startsWith("no exit")) await node.stop("SIGKILL");
  return { node, signalAt, slow: slowAnswer, statsAfterPut, connectDuringShutdown, mgmtHealthDuringShutdown, exit, exitAt, logs: [...node.logs] };
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  describe(`lifecycle: shutdown on a real ${signal} with a slow in-flight PUT`, function () {
    this.timeout(30_000);
    let run: ShutdownRun;

    before(async () => {
      run = await shutdownRun(signal, `shutdown-${signal.toLowerCase()}`);
    });

    after(async () => {
      await run?.node.stop("SIGKILL");
    });

    it(`the PUT sent before ${signal} completes with 200 and its value is stored before the process exits`, () => {
      expect(run.slow, "the slow PUT got an answer").to.not.be.instanceOf(Error);
      const slow = run.slow as { status: number; body: string; at: number };
      expect(slow.at, "the PUT was still in flight when the signal arrived").to.be.greaterThan(run.signalAt + 500);
      expect(slow.status, slow.body).to.equal(200);
      expect(JSON.parse(slow.body)).to.include({ key: "slow-key", stored: true, bytes: SLOW_CHUNKS * SLOW_CHUNK_BYTES });
      expect(run.statsAfterPut, "management /stats after the PUT").to.not.be.instanceOf(Error);
      expect(run.statsAfterPut).to.include({ items: 1, bytes: SLOW_CHUNKS * SLOW_CHUNK_BYTES, sets: 1 });
      expect(slow.at).to.be.lessThan(run.exitAt);
    });

    it(`logs 'shutdown signal received', 'dist node draining', ..., 'hypercache-server stopped cleanly' in that order and exits with code 0`, () => {
      expect(run.exit, `exit; stderr: ${run.node.stderr.join("")}`).to.equal(0);
      const messages = run.logs.map((r) => r.message);
      const signalled = messages.indexOf("shutdown signal received");
      const draining = messages.indexOf("dist node draining");
      const stopped = messages.indexOf("hypercache-server stopped cleanly");
      expect(signalled, messages.join(" | ")).to.be.at.least(0);
      expect(draining, "drain after the signal record").to.be.greaterThan(signalled);
      expect(stopped, "stopped cleanly after the drain").to.be.greaterThan(draining);
      expect(stopped, "stopped cleanly is the last record").to.equal(messages.length - 1);
      expect(run.logs[signalled]).to.include({ level: "info", signal });
      expect(messages.filter((m) => m === "dist node draining")).to.have.length(1);
    });

    it("while in-flight requests finish, the client listener refuses new connections and the management listener still answers (503 draining)", () => {
      expect(run.connectDuringShutdown).to.equal("refused");
      expect(run.mgmtHealthDuringShutdown).to.equal(503);
    });

    it("after the exit every listener refuses connections", async () => {
      for (const port of [run.node.apiPort, run.node.mgmtPort, run.node.distPort]) expect(await tryConnect(port), `port ${port}`).to.equal("refused");
    });
  });
}

describe("lifecycle: a second signal during shutdown", function () {
  this.timeout(20_000);
  let node: NodeProcess;
  let holder: SlowRequest | undefined;

  before(async () => {
    node = await startNode({ id: "shutdown-twice" });
  });

  after(async () => {
    holder?.destroy();
    await node?.stop("SIGKILL");
  });

  it("a SIGTERM while a slow in-flight request keeps the shutdown waiting, then another SIGTERM: exits at once with code 130, without 'stopped cleanly'", async () => {
    const slow = slowPut(node.apiPort, "held", { chunks: 2, chunkBytes: 10, intervalMs: 0, auto: false });
    holder = slow.req;
    await slow.started;
    await sleep(150);
    node.child.kill("SIGTERM");
    await node.waitForLog("shutdown signal received", 5000);
    expect(await exitWithin(node, 700), "the first signal waits for the in-flight request").to.equal("still running");
    const second = Date.now();
    node.child.kill("SIGTERM");
    const code = await exitWithin(node, 3000);
    expect(code, `stderr: ${node.stderr.join("")}`).to.equal(130);
    expect(Date.now() - second, "exit at once").to.be.lessThan(1500);
    expect(node.logs.map((r) => r.message)).to.not.include("hypercache-server stopped cleanly");
  });
});
