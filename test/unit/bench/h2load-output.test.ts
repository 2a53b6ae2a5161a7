// h2load parsers and the open-loop arithmetic: the summary and --log-file of h2load 1.52 (captured
// from real runs), the measured window, and the connection plan for a fixed rate.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { openLoopFigures, openLoopPlan, parseH2loadLog, parseH2loadSummary, type RequestRow } from "../../../bench/h2load.js";

const sample = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

describe("bench: h2load output parsers", () => {
  it("reads the request counts, 2xx count and rate of a clean run", () => {
    expect(parseH2loadSummary(sample("h2load-summary.txt"))).to.deep.equal({
      total: 16000,
      succeeded: 16000,
      failed: 0,
      errored: 0,
      timeout: 0,
      status2xx: 16000,
      reqPerSec: 3999.22,
    });
  });

  it("reports failed and errored requests of a run whose server refused connections", () => {
    const s = parseH2loadSummary(sample("h2load-refused.txt"));
    expect(s).to.include({ total: 10, succeeded: 0, failed: 10, errored: 10, status2xx: 0 });
  });

  it("refuses output without a summary", () => {
    expect(() => parseH2loadSummary("--rate-period: value error 0.25ms\n")).to.throw(/finished line/);
  });

  it("reads every --log-file row as start µs, status and duration µs", () => {
    const rows = parseH2loadLog(sample("h2load-log-head.tsv"));
    expect(rows).to.have.length(40);
    expect(rows[0]).to.deep.equal({ startUs: 1795495077347689, status: 200, durationUs: 867 });
    expect(() => parseH2loadLog("1795495077347689\tOK\n")).to.throw(/not an h2load log row/);
  });
});

describe("bench: open-loop window and plan", () => {
  // 1000 requests/s for 4 s, every 100th one slow (5 ms), one 404.
  const rows: RequestRow[] = Array.from({ length: 4000 }, (_, i) => ({
    startUs: 1_000_000_000 + i * 1000,
    status: i === 2500 ? 404 : 200,
    durationUs: i % 100 === 0 ? 5000 : 300,
  }));

  it("keeps only requests started after the warm-up and before the tail", () => {
    const f = openLoopFigures(rows, { warmupMs: 1000, tailMs: 500, intervalMs: 50 });
    // Starts in [1.0 s, 3.499 s): 2499 requests over 2.499 s.
    expect(f.requests).to.equal(2499);
    expect(f.ratePerSec).to.be.closeTo(1000, 1e-6);
  });

  it("gives nearest-rank percentiles in ms, the 404 as non-2xx, and answers slower than the send interval", () => {
    const f = openLoopFigures(rows, { warmupMs: 1000, tailMs: 500, intervalMs: 4 });
    expect(f.p50Ms).to.equal(0.3);
    expect(f.p99Ms).to.equal(5); // 25 of 2499 are slow: more than 1%
    expect(f.maxMs).to.equal(5);
    expect(f.non2xx).to.equal(1);
    expect(f.slowerThanInterval).to.equal(25);
    // Each 5 ms answer may have delayed one request (floor(5 / 4)); 25 late ones do not fit under the 1% tail.
    expect(f.mayHaveLeftLate).to.equal(25);
    expect(f.p99BoundMs).to.equal(Number.POSITIVE_INFINITY);
  });

  it("bounds the p99 by counting the requests that may have left late as the slowest", () => {
    // 10,000 requests: 1 answer of 9 ms (at most 4 requests behind it left late), 97 of 1 ms, the rest 0.2 ms.
    const many: RequestRow[] = Array.from({ length: 10_000 }, (_, i) => ({ startUs: 1_000_000_000 + i * 100, status: 200, durationUs: i === 5000 ? 9000 : i % 104 === 1 ? 1000 : 200 }));
    const f = openLoopFigures(many, { warmupMs: 0, tailMs: 0, intervalMs: 2 });
    expect(f.requests).to.equal(9999); // the last start is the end of the window
    expect(f.slowerThanInterval).to.equal(1);
    expect(f.mayHaveLeftLate).to.equal(4);
    expect(f.p99Ms).to.equal(0.2); // rank 9900 of 9999; 9901 answers of 0.2 ms
    expect(f.p99BoundMs).to.equal(1); // rank 9904: among the 1 ms answers
    const none = openLoopFigures(many, { warmupMs: 0, tailMs: 0, intervalMs: 10 });
    expect(none.mayHaveLeftLate).to.equal(0);
    expect(none.p99BoundMs).to.equal(none.p99Ms);
  });

  it("refuses a window with no request in it", () => {
    expect(() => openLoopFigures(rows, { warmupMs: 3000, tailMs: 2000, intervalMs: 50 })).to.throw(/run longer/);
  });

  it("plans 50 requests per second per connection, connections started within one interval", () => {
    expect(openLoopPlan(8000, 10)).to.deep.equal({ clients: 160, rpsPerClient: 50, intervalMs: 20, startsPerMs: 8, rate: 8000, requests: 80_000 });
    expect(openLoopPlan(24_000, 10)).to.include({ clients: 480, rpsPerClient: 50, rate: 24_000 });
  });

  it("caps connections at 2000 and sends faster on each past that", () => {
    const p = openLoopPlan(200_000, 1);
    expect(p).to.include({ clients: 2000, rpsPerClient: 100, rate: 200_000, intervalMs: 10 });
  });
});
