import { expect } from "chai";
import { memoryVerdict, percentile, slope, soakGates, type RssSample } from "../../soak/gates.js";

const MiB = 2 ** 20;
const series = (f: (t: number) => number, durationS = 600): RssSample[] => Array.from({ length: durationS / 10 + 1 }, (_, i) => ({ node: "n1", t_s: i * 10, rss_bytes: f(i * 10) }));

describe("soak gates", () => {
  it("slope is the least-squares slope", () => {
    expect(slope([[0, 1], [1, 3], [2, 5]])).to.equal(2);
    expect(slope([[0, 1]])).to.equal(0);
  });

  it("a flat RSS after minute 2 passes both memory gates", () => {
    const m = memoryVerdict(series((t) => (t < 120 ? 200 * MiB + t * MiB : 320 * MiB)), 600);
    expect(m.reference_s).to.equal(120);
    expect(m.final_ratio).to.equal(1);
    expect(Math.abs(m.slope_pct_per_min)).to.be.below(0.001);
    expect(soakGates([m], new Map(), new Map(), []).every((g) => g.passed)).to.equal(true);
  });

  it("an RSS growing 2%/min after minute 2 fails the slope gate and, by the end, the final-ratio gate", () => {
    const m = memoryVerdict(series((t) => 300 * MiB * (1 + (0.02 * Math.max(0, t - 120)) / 60)), 600);
    expect(m.slope_pct_per_min).to.be.closeTo(2, 0.01);
    const gates = soakGates([m], new Map(), new Map(), []);
    expect(gates.filter((g) => !g.passed).map((g) => g.name)).to.deep.equal(["n1 final RSS ≤ 1.1 × reference", "n1 RSS slope < 1%/min"]);
  });

  it("fails when any 10 s window's event-loop p99 passes 50 ms (or none was reported), on any 500, and on a crash", () => {
    const windows = new Map([
      ["n1", [12, 18, 61, 9]],
      ["n2", [12, 18, 49.9]],
      ["n3", []],
    ]);
    const names = (g: ReturnType<typeof soakGates>) => g.filter((x) => !x.passed).map((x) => x.name);
    expect(names(soakGates([], windows, new Map([[500, 1]]), ["n2 exited (1)"]))).to.deep.equal(["n1 event-loop p99 ≤ 50 ms", "n3 event-loop p99 ≤ 50 ms", "no 500", "no crash"]);
    expect(percentile([1, 2, 3, 4], 50)).to.equal(2);
  });

  it("a run shorter than 5 minutes reports the memory gates without gating on them (its reference falls in the warm-up)", () => {
    const rising: RssSample[] = Array.from({ length: 10 }, (_, i) => ({ node: "n1", t_s: 10 * i, rss_bytes: (300 + 30 * i) * 2 ** 20 }));
    const m = memoryVerdict(rising, 90);
    const short = soakGates([m], new Map(), new Map(), [], 90);
    expect(short.every((g) => g.passed)).to.equal(true);
    expect(short.filter((g) => g.name.includes("reported only"))).to.have.length(2);
    expect(soakGates([m], new Map(), new Map(), [], 600).some((g) => !g.passed), "the same samples fail a full-length run").to.equal(true);
  });
});
