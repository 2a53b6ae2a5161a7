// parseWrk: the figures of wrk 4.1's --latency report, on reports captured from real runs.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { parseWrk, parseWrkTimeMs } from "../../../bench/wrk.js";

const sample = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

describe("bench: wrk report parser", () => {
  it("reads requests, duration, ops/s, p50, p99 and max latency of a clean PUT run", () => {
    expect(parseWrk(sample("wrk-put.txt"))).to.deep.equal({
      requests: 119548,
      durationSeconds: 3,
      opsPerSec: 39830.21,
      p50Ms: 0.96,
      p99Ms: 62.57,
      maxMs: 183.61,
      non2xx: 0,
      socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
    });
  });

  it("counts non-2xx answers, which would otherwise pass for throughput", () => {
    const r = parseWrk(sample("wrk-non2xx.txt"));
    expect(r.non2xx).to.equal(47540);
    expect(r.requests).to.equal(47540);
  });

  it("counts socket errors (a stalled server's timeouts)", () => {
    const r = parseWrk(sample("wrk-timeouts.txt"));
    expect(r.socketErrors).to.deep.equal({ connect: 0, read: 0, write: 0, timeout: 50 });
    expect(r.durationSeconds).to.be.closeTo(3.01, 1e-9);
  });

  it("converts every wrk time unit to milliseconds", () => {
    expect(parseWrkTimeMs("774.00us")).to.be.closeTo(0.774, 1e-9);
    expect(parseWrkTimeMs("1.37ms")).to.equal(1.37);
    expect(parseWrkTimeMs("3.00s")).to.equal(3000);
    expect(parseWrkTimeMs("1.00m")).to.equal(60_000);
    expect(() => parseWrkTimeMs("12 parsecs")).to.throw(/not a wrk time/);
  });

  it("refuses a report without the latency distribution (wrk run without --latency)", () => {
    const withoutDistribution = sample("wrk-put.txt").replace(/ {2}Latency Distribution[\s\S]*?99%.*\n/, "");
    expect(() => parseWrk(withoutDistribution)).to.throw(/50% latency/);
  });

  it("refuses the output of a run that could not connect", () => {
    expect(() => parseWrk("unable to connect to 127.0.0.1:18099 Connection refused\n")).to.throw(/request count/);
  });
});
