import { expect } from "chai";
import { parseDurationMs, TTL_MAX_MS, ttlToMs } from "../../src/duration.js";

describe("client TTL values", () => {
  it("parses the server's duration syntax into milliseconds", () => {
    const table: [string, number | undefined][] = [["200ms", 200], ["30s", 30_000], ["5m", 300_000], ["1h", 3_600_000], ["1m30s", 90_000], ["1.5s", 1500], ["", undefined], ["10", undefined], ["5 m", undefined], ["-1s", undefined], ["1d", undefined]];
    for (const [text, ms] of table) expect(parseDurationMs(text), text).to.equal(ms);
  });

  it("accepts positive whole milliseconds up to about 292 years and refuses the rest", () => {
    expect(ttlToMs(1)).to.equal(1);
    expect(ttlToMs("2s")).to.equal(2000);
    expect(ttlToMs(TTL_MAX_MS)).to.equal(TTL_MAX_MS);
    for (const bad of [0, -5, 1.5, TTL_MAX_MS + 1, "0s", "soon", Number.NaN]) expect(() => ttlToMs(bad), String(bad)).to.throw(TypeError, /invalid ttl/);
  });
});
