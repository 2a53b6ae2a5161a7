import { expect } from "chai";
import { longestGap } from "../../chaos/checker/availability.js";
import { check } from "../../chaos/checker/check.js";
import { largestOffset, nodeClockOffsets, versionOffsets } from "../../chaos/checker/clock-skew.js";
import { findCrashes } from "../../chaos/checker/crashes.js";
import type { ConvergenceRound, RunRecord } from "../../chaos/checker/history.js";
import { checkpoint, del, emptyRecord, phase, read, write } from "./history-builder.js";

const agreed = (t_ms: number): ConvergenceRound => ({
  phase: "p1",
  t_ms,
  samples: [{ key: "k", owners: ["n1"], copies: [{ node: "n1", status: 200, version: 1, origin: "n1" }] }],
});

function healthyRun(over: Partial<RunRecord> = {}): RunRecord {
  return emptyRecord({
    phases: [phase("p1", 0, 100, 200, 300)],
    ops: [write("a", { at: [10, 20] }), read("a", { worker: 1, at: [30, 40] }), checkpoint("a", { at: [210, 220] })],
    convergence: [agreed(205)],
    ...over,
  });
}

describe("chaos checker: the verdict", () => {
  it("passes every gate on a healthy run and fills the phase row", () => {
    const v = check(healthyRun());
    expect(v.passed, JSON.stringify(v.gates)).to.equal(true);
    expect(v.phases[0]).to.deep.include({ phase: "p1", lost: 0, resurrected: 0, stale: 0, crashes: 0 });
    expect(v.phases[0]?.availability).to.include({ ok: 2, fail: 0, info: 0, acked: 1 });
    expect(v.phases[0]?.convergence.after_heal_ms).to.equal(105);
  });

  it("fails the lost-write gate when a checkpoint finds an overwritten value", () => {
    const run = healthyRun({ ops: [write("a", { at: [10, 20] }), write("b", { at: [30, 40] }), checkpoint("a", { at: [210, 220] })] });
    const v = check(run);
    expect(v.gates.find((g) => g.name === "no lost write")?.passed).to.equal(false);
    expect(v.phases[0]?.lost).to.equal(1);
    expect(v.passed).to.equal(false);
  });

  it("fails the lost-write gate when a phase has no checkpoint read for a key", () => {
    const v = check(healthyRun({ ops: [write("a", { at: [10, 20] })] }));
    expect(v.lost).to.deep.include({ key: "k", kind: "single", phase: "p1", found: null, expected: null, lost_phase: null, reason: "unverified" });
  });

  it("fails the resurrection gate on a QUORUM read of a deleted value", () => {
    const ops = [write("a", { at: [10, 20] }), del({ at: [30, 40] }), read("a", { worker: 1, at: [50, 60] }), checkpoint(null, { at: [210, 220] })];
    const v = check(healthyRun({ ops }));
    expect(v.gates.find((g) => g.name === "no resurrection")?.passed).to.equal(false);
    expect(v.phases[0]?.resurrected).to.equal(1);
  });

  it("reports a stale QUORUM read without failing a gate", () => {
    const ops = [write("a", { at: [10, 20] }), write("b", { at: [30, 40] }), read("a", { worker: 1, at: [50, 60] }), checkpoint("b", { at: [210, 220] })];
    const v = check(healthyRun({ ops }));
    expect(v.phases[0]?.stale).to.equal(1);
    expect(v.passed).to.equal(true);
  });

  it("fails the convergence gate when no round agreed", () => {
    const v = check(healthyRun({ convergence: [] }));
    expect(v.gates.find((g) => g.name === "convergence")?.passed).to.equal(false);
  });

  it("fails the crash gate on an exit the harness did not cause, a 500, or an error log record", () => {
    const crash = (over: Partial<RunRecord>) => check(healthyRun(over)).gates.find((g) => g.name === "no crash")?.passed;
    expect(crash({ processes: [{ node: "n2", t_ms: 150, action: "exit", expected: false, code: 1 }] })).to.equal(false);
    expect(crash({ processes: [{ node: "n2", t_ms: 150, action: "exit", expected: true, signal: "SIGKILL" }] })).to.equal(true);
    expect(crash({ logs: [{ node: "n1", t_ms: 150, source: "log", text: "request failed" }] })).to.equal(false);
    expect(crash({ liveness: [{ node: "n1", t_ms: 150, phase: "p1", error: "timeout" }] })).to.equal(false);
    const ops = [...healthyRun().ops, read(null, { worker: 2, at: [50, 60], outcome: "info", status: 500 })];
    expect(crash({ ops })).to.equal(false);
  });

  it("fails a run with a skipped nemesis unless skips are allowed", () => {
    const run = healthyRun({ phases: [phase("p1", 0, 100, 200, 300), phase("split", 300, 300, 300, 300, { skipped: "no CAP_NET_ADMIN" })] });
    expect(check(run).passed).to.equal(false);
    expect(check(run, { allowSkip: true }).passed).to.equal(true);
  });

  it("findCrashes ignores exits the harness caused", () => {
    expect(findCrashes([{ node: "n1", t_ms: 1, action: "exit", expected: true, signal: "SIGKILL" }], [], [], [])).to.deep.equal([]);
  });

  it("longestGap measures the longest stretch without an acknowledged write, edges included", () => {
    expect(longestGap([], 0, 100)).to.equal(100);
    expect(longestGap([10, 20, 70], 0, 100)).to.equal(50);
    expect(longestGap([500], 0, 100)).to.equal(100);
  });

  it("estimates an origin's version offset per phase from the versions it stamped", () => {
    const ops = [
      write("a", { at: [1_000_000, 1_000_010] }),
      read("a", { worker: 1, at: [1_000_100, 1_000_110], version: 1_030_005 * 1000 + 3, origin: "n3" }),
    ];
    expect(versionOffsets(ops)).to.deep.equal([{ phase: "p1", node: "n3", samples: 1, median_ms: 30_000 }]);
  });

  it("reports each node's clock offset per phase from the Date samples, and the largest in the row", () => {
    const phases = [phase("p1", 0, 100, 200, 300)];
    const samples = [
      { node: "n1", t_ms: 10, offset_ms: 200 },
      { node: "n2", t_ms: 10, offset_ms: 30_100 },
      { node: "n2", t_ms: 20, offset_ms: 29_900 },
      { node: "n2", t_ms: 30, offset_ms: 30_000 },
      { node: "n2", t_ms: 400, offset_ms: 0 },
    ];
    const offsets = nodeClockOffsets(samples, phases);
    expect(largestOffset(offsets, "p1")).to.deep.equal({ phase: "p1", node: "n2", samples: 3, median_ms: 30_000 });
    const v = check(healthyRun({ clock: samples }));
    expect(v.phases[0]?.clock_offset?.node).to.equal("n2");
  });
});
