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

/**
 * A server answering every GET at once, except that it holds request number `hold.nth` for
 * `hold.ms` and then answers it, or with `reset` closes its connection instead.
 */
async function server(hold?: { nth: number; ms: number; reset?: boolean }): Promise<{ port: number; close: () => Promise<void>; paths: string[] }> {
  const paths: string[] = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    const answer = () => res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "11" }).end('{"ok":true}');
    if (hold && paths.length === hold.nth) {
      setTimeout(() => (hold.reset ? req.socket.destroy() : answer()), hold.ms);
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

describe("bench: the open-loop generator (openloop.c)", function () {
  this.timeout(60_000);
  // Built and asked once for the suite (a compile, and a getconf process).
  let bin = "";
  let hz = 0;
  before(() => {
    bin = buildOpenLoop();
    hz = clockTicksPerSecond();
  });
  const run = (port: number): Promise<OpenLoopRun> =>
    runOpenLoop(bin, { port, rate: RATE, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, keys: 100, placement: "unpinned", seed: 7 }, hz);

  it("sends every request of the window at the planned rate, to random keys of the given range", async () => {
    const s = await server();
    try {
      const r = await run(s.port);
      expect(r.due).to.equal(RATE * SECONDS);
      expect(r.sent).to.equal(r.due);
      expect(r.answered).to.equal(r.sent);
      expect(r).to.include({ errors: 0, timeouts: 0, unsent: 0, non2xx: 0, reconnects: 0, connections: CONNECTIONS });
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
      expect(r.due).to.equal(RATE * SECONDS);
      expect(r.answered).to.equal(r.due);
      expect(r.maxMs).to.be.at.least(195);
      expect(r.p99Ms).to.be.greaterThan(50);
      // Only the tail: the other connections kept their schedule (loose bound: a shared machine).
      expect(r.p90Ms).to.be.lessThan(100);
    } finally {
      await s.close();
    }
  });

  it("a connection the server resets while requests wait behind it reconnects and sends them: each counted, none lost from the tally", async () => {
    // Request 2,000 is held 50 ms (10 more of its connection fall due) and its connection closed.
    const s = await server({ nth: RATE * (WARMUP_SECONDS + SECONDS / 2), ms: 50, reset: true });
    try {
      const r = await run(s.port);
      expect(r).to.include({ errors: 1, reconnects: 1, timeouts: 0, unsent: 0 });
      expect(r.due).to.equal(RATE * SECONDS);
      expect(r.sent, "the reset connection went on with its schedule").to.equal(r.due);
      expect(r.answered).to.equal(r.due - 1);
      // The requests due behind the held one waited for the reconnect: the wait counts.
      expect(r.maxMs).to.be.at.least(40);
    } finally {
      await s.close();
    }
  });

  it("requests a connection could not send because it waited until the end are counted as unsent", async () => {
    // The very first request is held past the end of the schedule and the 2 s the generator then
    // waits for answers: its connection sends nothing more, and its share of the window (a tenth)
    // is neither sent nor lost from the tally. (Held less, its backlog goes out late when the
    // answer comes, and the wait shows in the latencies.)
    const s = await server({ nth: 1, ms: 1000 * (WARMUP_SECONDS + SECONDS) + 2500 });
    try {
      const r = await run(s.port);
      expect(r.due).to.equal(RATE * SECONDS);
      expect(r.unsent).to.equal(RATE * SECONDS / CONNECTIONS);
      expect(r.sent + r.unsent).to.equal(r.due);
      expect(r.answered).to.equal(r.sent);
    } finally {
      await s.close();
    }
  });

  it("refuses output that is not its result line", () => {
    expect(() => parseOpenLoopOutput("openloop: connect: refused\n")).to.throw(/no result line/);
    expect(() => parseOpenLoopOutput('{"rate":1}')).to.throw(/no number connections/);
  });
});
