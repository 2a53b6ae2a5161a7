// The benchmark's open-loop generator (bench/openloop.c), built with the system C compiler and run
// against a bare node:http server in this process: it keeps its schedule, and a request due while
// its connection waits behind a slow answer is measured from when it was due, so a stall shows in
// the p99 instead of hiding (what h2load and wrk lose: coordinated omission). The p99 figure of
// npm run bench rests on both.
import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { buildOpenLoop, parseOpenLoopOutput, runOpenLoop, type OpenLoopRun } from "../../bench/openloop.js";
import { clockTicksPerSecond } from "../../bench/proc.js";

const RATE = 2000;
const CONNECTIONS = 10;
const SECONDS = 1;
const WARMUP_SECONDS = 0.5;

/** A server answering every GET at once, except that it holds its answer to request number `hold.nth` for `hold.ms`. */
async function server(hold?: { nth: number; ms: number }): Promise<{ port: number; close: () => Promise<void>; paths: string[] }> {
  const paths: string[] = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    const answer = () => res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "11" }).end('{"ok":true}');
    if (hold && paths.length === hold.nth) {
      setTimeout(answer, hold.ms);
    } else {
      answer();
    }
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return {
    port: (srv.address() as AddressInfo).port,
    paths,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}

async function run(port: number): Promise<OpenLoopRun> {
  return runOpenLoop(buildOpenLoop(), { port, rate: RATE, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, keys: 100, placement: "unpinned", seed: 7 }, clockTicksPerSecond());
}

describe("bench: the open-loop generator (openloop.c)", function () {
  this.timeout(60_000);

  it("sends every request of the window at the planned rate, to random keys of the given range", async () => {
    const s = await server();
    try {
      const r = await run(s.port);
      expect(r.sent).to.equal(RATE * SECONDS);
      expect(r.answered).to.equal(r.sent);
      expect(r).to.include({ errors: 0, timeouts: 0, non2xx: 0, reconnects: 0, connections: CONNECTIONS });
      // Warm-up and window: the server saw them all (the schedule ends with the window).
      expect(s.paths.length).to.equal(RATE * (SECONDS + WARMUP_SECONDS));
      const keys = new Set(s.paths);
      expect([...keys].every((p) => /^\/v1\/cache\/bench-\d{1,2}$/.test(p))).to.equal(true);
      expect(keys.size).to.be.greaterThan(90);
      expect(r.p50Ms).to.be.lessThan(r.maxMs + 0.001);
    } finally {
      await s.close();
    }
  });

  it("counts a wait behind a slow answer in the latency of every request due during it", async () => {
    // One answer held 200 ms inside the window: its connection sends every CONNECTIONS / RATE =
    // 5 ms, so about 40 requests fall due during the hold, late by 200, 195, ... 5 ms. Measured
    // from when they were sent, only the held one would be slow and the p99 would stay near zero;
    // measured from when they were due, about 20 of the 2,000 are slower than 100 ms.
    const s = await server({ nth: RATE * (WARMUP_SECONDS + SECONDS / 2), ms: 200 });
    try {
      const r = await run(s.port);
      expect(r.answered).to.equal(r.sent);
      expect(r.sent).to.equal(RATE * SECONDS);
      expect(r.maxMs).to.be.within(195, 400);
      expect(r.p99Ms).to.be.greaterThan(50);
      expect(r.p90Ms).to.be.lessThan(50);
    } finally {
      await s.close();
    }
  });

  it("refuses output that is not its result line", () => {
    expect(() => parseOpenLoopOutput("openloop: connect: refused\n")).to.throw(/no result line/);
    expect(() => parseOpenLoopOutput('{"rate":1}')).to.throw(/no number connections/);
  });
});
