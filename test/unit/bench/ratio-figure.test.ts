// A ratio figure is only as good as its rounds: one whose load generator was above
// GENERATOR_SHARE_MAX of its core measured the generator (not valid, and it says so), one whose
// pinned server was short of its core is noted; the round line flags both.
import { expect } from "chai";
import type { RoundResult } from "../../../bench/measure.js";
import { formatRound, GENERATOR_SHARE_MAX, ratioFigure } from "../../../bench/report.js";

function round(side: string, opsPerSec: number, o: Partial<RoundResult> = {}): RoundResult {
  return {
    side, method: "GET", round: 1, opsPerSec, p50Ms: 1, p99Ms: 2, maxMs: 3, requests: opsPerSec * 8, cpuUsPerRequest: 20, allCpuUsPerRequest: 20,
    serverCpuShare: 1, pinned: true, generatorCpuShare: 0.6, errors: 0, ...o,
  };
}

describe("bench: ratio figures and their rounds", () => {
  it("rounds with a free generator and a server on its core: a valid ratio of medians, no note", () => {
    const f = ratioFigure("get.ops", "GET", [round("node", 45_000), round("node", 47_000)], [round("ceiling", 50_000), round("ceiling", 52_000)], (r) => r.opsPerSec);
    expect(f).to.deep.include({ valid: true, value: 46_000 / 51_000 });
    expect(f.note).to.equal(undefined);
  });

  it("a round whose load generator was busy makes the figure not valid, with how many rounds and why", () => {
    const busy = round("ceiling", 50_000, { generatorCpuShare: GENERATOR_SHARE_MAX + 0.05 });
    const f = ratioFigure("get.ops", "GET", [round("node", 45_000)], [busy], (r) => r.opsPerSec);
    expect(f.valid).to.equal(false);
    expect(f.note).to.match(/1 of 2 rounds had the load generator above 90% of its core/);
    expect(formatRound(busy)).to.include("LOAD GENERATOR BUSY");
    expect(formatRound(round("node", 45_000))).to.not.include("LOAD GENERATOR BUSY");
  });

  it("a pinned server short of its core is noted (its ops/s say little) but the figure stays valid", () => {
    const f = ratioFigure("get.ops", "GET", [round("node", 45_000, { serverCpuShare: 0.7 })], [round("ceiling", 50_000)], (r) => r.opsPerSec);
    expect(f.valid).to.equal(true);
    expect(f.note).to.match(/1 of 2 rounds had the server below 90% of its core/);
  });
});
