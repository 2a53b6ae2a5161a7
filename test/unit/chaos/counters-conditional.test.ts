// The chaos checker's gates 5 and 6 on hand-made histories: counters between their acknowledged
// and attempted increments, and at most one acknowledged conditional write per ETag where the
// ring stays as it is.
import { expect } from "chai";
import { check } from "../../chaos/checker/check.js";
import { findConditionalConflicts, isGatedConflict, ringStable } from "../../chaos/checker/conditional.js";
import { counterBounds, findCounterRepeats, findCounterViolations } from "../../chaos/checker/counters.js";
import type { KeyPlan, RunRecord } from "../../chaos/checker/history.js";
import { cas, checkpoint, emptyRecord, incr, phase, read } from "./history-builder.js";

const COUNTER: KeyPlan[] = [{ key: "n000", kind: "counter" }];
const CAS: KeyPlan[] = [{ key: "x000", kind: "cas" }];
const agreed = (key: string) => ({ phase: "p1", t_ms: 205, samples: [{ key, owners: ["n1"], copies: [{ node: "n1", status: 200, version: 1, origin: "n1" }] }] });

function counterRun(found: string | null, over: Partial<RunRecord> = {}): RunRecord {
  return emptyRecord({
    keys: COUNTER,
    phases: [phase("p1", 0, 100, 200, 300)],
    ops: [
      incr(2, "2", { key: "n000", at: [10, 20] }),
      incr(3, "5", { key: "n000", at: [30, 40], worker: 1 }),
      incr(4, null, { key: "n000", at: [50, 60], outcome: "info", status: 503 }),
      incr(5, null, { key: "n000", at: [70, 80], outcome: "fail", status: 409 }),
      checkpoint(found, { key: "n000", at: [210, 220] }),
    ],
    convergence: [agreed("n000")],
    ...over,
  });
}

describe("chaos checker: counters", () => {
  it("bounds a counter by its acknowledged increments below and the indeterminate ones above; failed ones and later ones do not count", () => {
    const ops = counterRun("5").ops;
    expect(counterBounds(ops, 215)).to.deep.equal({ low: 5, high: 9 });
    expect(counterBounds(ops, 25)).to.deep.equal({ low: 2, high: 2 });
    expect(counterBounds(ops, 55)).to.deep.equal({ low: 5, high: 9 });
  });

  it("passes a checkpoint inside the bounds, the indeterminate increment applied or not", () => {
    for (const found of ["5", "9"]) {
      const v = check(counterRun(found));
      expect(v.passed, `${found}: ${JSON.stringify(v.gates)}`).to.equal(true);
      expect(v.phases[0]).to.deep.include({ counters: 0, lost: 0, resurrected: 0 });
    }
  });

  it("fails on a lost increment, a doubled one, absence after an acknowledged one, and a value that is no counter", () => {
    const reasons = (found: string | null) => findCounterViolations(COUNTER, counterRun(found).ops).map((c) => c.reason);
    expect(reasons("4")).to.deep.equal(["lost-increments"]);
    expect(reasons("10")).to.deep.equal(["extra-increments"]);
    expect(reasons(null)).to.deep.equal(["lost-increments"]);
    expect(reasons("w1-3")).to.deep.equal(["not-a-counter"]);
    const v = check(counterRun("4"));
    expect(v.gates.find((g) => g.name === "counters")?.passed).to.equal(false);
    expect(v.phases[0]?.counters).to.equal(1);
    expect(v.passed).to.equal(false);
  });

  it("does not hand counter keys to the value checks (their decimal text was never written)", () => {
    const v = check(counterRun("9"));
    expect(v.lost).to.deep.equal([]);
    expect(v.anomalies).to.deep.equal([]);
  });

  it("fails when counter keys were planned but no increment was acknowledged (the gate would check nothing)", () => {
    const run = counterRun("0");
    const ops = run.ops.filter((o) => o.f !== "incr" || o.outcome !== "ok");
    const v = check({ ...run, ops: ops.map((o) => (o.worker === "checkpoint" ? { ...o, value: null } : o)) });
    const gate = v.gates.find((g) => g.name === "counters");
    expect(gate?.passed).to.equal(false);
    expect(gate?.detail).to.match(/no increment was acknowledged/);
  });

  it("fails a counter checkpoint without an answer as unverified", () => {
    const run = counterRun("5");
    const ops = run.ops.map((o) => (o.worker === "checkpoint" ? { ...o, outcome: "info" as const, value: null } : o));
    expect(findCounterViolations(COUNTER, ops).map((c) => c.reason)).to.deep.equal(["unverified"]);
  });

  it("reports acknowledged increments of a key that answered the same value, per phase", () => {
    const ops = [incr(1, "7", { key: "n000", at: [1, 2] }), incr(1, "7", { key: "n000", at: [1, 3], worker: 1 }), incr(1, "7", { key: "n000", at: [1, 3], phase: "p2" })];
    expect(findCounterRepeats(ops)).to.deep.equal([{ key: "n000", phase: "p1", value: "7", count: 2 }]);
    const v = check(counterRun("5", { ops: [...counterRun("5").ops, incr(0, "5", { key: "n000", at: [41, 42], worker: 2 })] }));
    expect(v.phases[0]?.counter_repeats).to.equal(1);
    expect(v.passed, "reported, not gated").to.equal(true);
  });
});

function casRun(nemesis: string, second: "ok" | "fail"): RunRecord {
  return emptyRecord({
    keys: CAS,
    phases: [phase("p1", 0, 100, 200, 300, { nemesis })],
    ops: [
      cas("a", "*", { key: "x000", at: [1, 5] }),
      read("a", { key: "x000", at: [10, 15], etag: '"e1"' }),
      cas("b", '"e1"', { key: "x000", at: [16, 20] }),
      read("a", { key: "x000", at: [11, 16], worker: 1, etag: '"e1"' }),
      cas("c", '"e1"', { key: "x000", at: [17, 30], worker: 1, outcome: second, status: second === "ok" ? 200 : 412 }),
      checkpoint(second === "ok" ? "c" : "b", { key: "x000", at: [210, 220], etag: '"e2"' }),
    ],
    convergence: [agreed("x000")],
  });
}

describe("chaos checker: conditional writes", () => {
  it("passes when the second write on one ETag got 412", () => {
    const v = check(casRun("none", "fail"));
    expect(v.passed, JSON.stringify(v.gates)).to.equal(true);
    expect(v.conditional_conflicts).to.deep.equal([]);
  });

  it("fails when two writes on one ETag were acknowledged while the ring stayed as it was", () => {
    const v = check(casRun("none", "ok"));
    expect(v.gates.find((g) => g.name === "conditional writes")?.passed).to.equal(false);
    expect(v.phases[0]?.conditional_conflicts).to.equal(1);
    expect(v.conditional_conflicts[0]).to.deep.include({ key: "x000", precondition: '"e1"', phase: "p1" });
    expect(v.conditional_conflicts[0]?.writes.map((w) => w.value)).to.deep.equal(["b", "c"]);
  });

  it("fails when conditional keys were planned but no If-Match write was acknowledged (the gate would check nothing)", () => {
    const run = casRun("none", "fail");
    const ops = run.ops.map((o) => (o.precondition !== undefined ? { ...o, outcome: "fail" as const, status: 412 } : o));
    const gate = check({ ...run, ops }).gates.find((g) => g.name === "conditional writes");
    expect(gate?.passed).to.equal(false);
    expect(gate?.detail).to.match(/no If-Match write was acknowledged/);
  });

  it("reports, without failing, the same conflict in a phase whose nemesis changes the ring", () => {
    const v = check(casRun("split", "ok"));
    expect(v.phases[0]?.conditional_conflicts).to.equal(1);
    expect(v.gates.find((g) => g.name === "conditional writes")?.passed).to.equal(true);
  });

  it("counts creations on absence ('*') like any precondition, and ignores unconditional and indeterminate writes", () => {
    const ops = [
      cas("a", "*", { key: "x000", at: [1, 2] }),
      cas("b", "*", { key: "x000", at: [3, 4] }),
      cas("c", '"e2"', { key: "x000", at: [5, 6], outcome: "info", status: 503 }),
      cas("d", '"e2"', { key: "x000", at: [7, 8] }),
    ];
    const conflicts = findConditionalConflicts(ops);
    expect(conflicts.map((c) => c.precondition)).to.deep.equal(["*"]);
    expect(isGatedConflict(conflicts[0]!, new Set(["p1"]))).to.equal(true);
    expect(isGatedConflict(conflicts[0]!, new Set(["p2"]))).to.equal(false);
  });
});

// Holes a review of the first version found (each of these passed it).
describe("chaos checker: counters and conditional writes, the review's holes", () => {
  const gate = (r: RunRecord, name: string) => check(r).gates.find((g) => g.name === name);
  const twoPhases = (first: string, second: string) => [phase("p1", 0, 100, 200, 300, { nemesis: first }), phase("p2", 300, 400, 500, 600, { nemesis: second })];

  it("fails a counter that went down between two checkpoints, although an indeterminate increment widened its bounds", () => {
    // p1: +2 acknowledged, +5 indeterminate that went through: the checkpoint reads 7. p2: +3
    // acknowledged, the checkpoint reads 5; the bounds from the start, [5, 10], would allow it.
    const ops = [
      incr(2, "2", { key: "n000", at: [10, 20], phase: "p1" }),
      incr(5, null, { key: "n000", at: [30, 45], outcome: "info", status: 503, phase: "p1" }),
      checkpoint("7", { key: "n000", at: [210, 220], phase: "p1" }),
      incr(3, "10", { key: "n000", at: [310, 320], phase: "p2" }),
      checkpoint("5", { key: "n000", at: [510, 520], phase: "p2" }),
    ];
    const found = findCounterViolations(COUNTER, ops);
    expect(found.map((c) => [c.phase, c.reason, c.low])).to.deep.equal([["p2", "lost-increments", 10]]);
    const fine = ops.map((o) => (o.worker === "checkpoint" && o.phase === "p2" ? { ...o, value: "10" } : o));
    expect(findCounterViolations(COUNTER, fine)).to.deep.equal([]);
  });

  it("gates two acknowledged writes on one ETag in a ring-stable phase, whatever phase a third one ran in", () => {
    for (const [first, second, at] of [["none", "split", 0], ["split", "none", 300]] as const) {
      const p = at === 0 ? "p1" : "p2";
      const other = at === 0 ? "p2" : "p1";
      const r = emptyRecord({
        keys: CAS,
        phases: twoPhases(first, second),
        ops: [
          cas("b", '"e1"', { key: "x000", at: [at + 16, at + 20], phase: p }),
          cas("c", '"e1"', { key: "x000", at: [at + 17, at + 30], worker: 1, phase: p }),
          cas("d", '"e1"', { key: "x000", at: [310 - at, 330 - at], worker: 2, phase: other }),
        ],
      });
      expect(gate(r, "conditional writes")?.passed, `${first} then ${second}`).to.equal(false);
    }
  });

  it("counts an indeterminate conditional write that a read shows applied as taking its ETag", () => {
    const ops = (readValue: string) => [
      cas("a", '"e1"', { key: "x000", at: [15, 30], outcome: "info", status: 503 }),
      cas("b", '"e1"', { key: "x000", at: [16, 20], worker: 1 }),
      read(readValue, { key: "x000", at: [40, 45], worker: 2, etag: '"e3"' }),
      checkpoint(readValue, { key: "x000", at: [210, 220], etag: '"e3"' }),
    ];
    const run = (readValue: string) => emptyRecord({ keys: CAS, phases: [phase("p1", 0, 100, 200, 300, { nemesis: "slow-link" })], ops: ops(readValue) });
    expect(gate(run("a"), "conditional writes")?.passed, "a was applied: two writes took e1").to.equal(false);
    expect(check(run("a")).conditional_conflicts[0]?.writes.map((w) => w.outcome)).to.deep.equal(["info", "ok"]);
    expect(gate(run("b"), "conditional writes")?.passed, "a never showed: it may not have been applied").to.equal(true);
  });

  it("does not take If-None-Match creations as evidence that If-Match writes were checked", () => {
    const r = emptyRecord({
      keys: CAS,
      phases: [phase("p1", 0, 100, 200, 300, { nemesis: "none" })],
      ops: [
        cas("a", "*", { key: "x000", at: [1, 5] }),
        ...[0, 1, 2, 3].map((i) => cas(`b${i}`, '"e1"', { key: "x000", at: [10 + i, 20 + i], worker: i, outcome: "fail", status: 412 })),
        checkpoint("a", { key: "x000", at: [210, 220], etag: '"e1"' }),
      ],
    });
    const g = gate(r, "conditional writes");
    expect(g?.passed).to.equal(false);
    expect(g?.detail).to.match(/no If-Match write was acknowledged/);
  });

  it("fails when a read of a conditional key answered a value without an ETag (the workload could not condition on it)", () => {
    const run = casRun("none", "fail");
    const ops = run.ops.map((o) => (o.f === "read" && o.worker === 1 ? { ...o, etag: undefined } : o)).map((o) => {
      const { etag, ...rest } = o;
      return etag === undefined ? rest : o;
    });
    const g = gate({ ...run, ops }, "conditional writes");
    expect(g?.passed).to.equal(false);
    expect(g?.detail).to.match(/1 reads of conditional keys answered a value without an ETag/);
  });
});

describe("chaos checker: which phases kept their ring (gate 6 is gated there)", () => {
  const p1 = phase("p1", 0, 100, 200, 300, { nemesis: "pause" });
  const ring = (node: string, t_ms: number, members: string[]) => ({ node, t_ms, members });
  const same = ["n1", "n2", "n3"];

  it("is stable when every sample from the start to the pause names the same nodes and no process started or exited", () => {
    const record = { ring: [ring("n1", 10, same), ring("n2", 10, same), ring("n1", 150, same), ring("n3", 150, same)], processes: [] };
    expect(ringStable(p1, record)).to.equal(true);
  });

  it("is not when a node's ring lost or gained a node, when two nodes' rings differ, or when a process exited or started", () => {
    expect(ringStable(p1, { ring: [ring("n1", 10, same), ring("n1", 150, ["n1", "n2"])], processes: [] }), "n3 dropped").to.equal(false);
    expect(ringStable(p1, { ring: [ring("n1", 10, same), ring("n2", 10, ["n1", "n2"])], processes: [] }), "views differ").to.equal(false);
    expect(ringStable(p1, { ring: [ring("n1", 10, same)], processes: [{ node: "n2", t_ms: 50, action: "exit", expected: true, signal: "SIGKILL" }] }), "a kill").to.equal(false);
  });

  it("ignores samples after the workload paused, and counts a phase without samples as unknown (not stable)", () => {
    expect(ringStable(p1, { ring: [ring("n1", 10, same), ring("n1", 250, ["n1"])], processes: [] }), "after the pause").to.equal(true);
    expect(ringStable(p1, { ring: [ring("n1", 400, same)], processes: [] }), "no sample inside").to.equal(false);
  });

  it("falls back to the nemesis for runs saved without ring samples", () => {
    expect(ringStable(phase("p", 0, 1, 2, 3, { nemesis: "slow-link" }), { processes: [] })).to.equal(true);
    expect(ringStable(phase("p", 0, 1, 2, 3, { nemesis: "pause" }), { ring: [], processes: [] })).to.equal(false);
  });

  it("gates a conflict in an observed-stable pause phase, and reports one in a phase whose ring changed", () => {
    const ops = [
      cas("b", '"e1"', { key: "x000", at: [16, 20] }),
      cas("c", '"e1"', { key: "x000", at: [17, 30], worker: 1 }),
      checkpoint("c", { key: "x000", at: [210, 220], etag: '"e2"' }),
    ];
    const run = (members: string[]) => emptyRecord({ keys: CAS, phases: [p1], ops, ring: [ring("n1", 10, same), ring("n1", 150, members)] });
    const stable = check(run(same));
    expect(stable.phases[0]?.ring_stable).to.equal(true);
    expect(stable.gates.find((g) => g.name === "conditional writes")?.passed).to.equal(false);
    const changed = check(run(["n1", "n2"]));
    expect(changed.phases[0]?.ring_stable).to.equal(false);
    expect(changed.gates.find((g) => g.name === "conditional writes")?.passed).to.equal(true);
  });
});
