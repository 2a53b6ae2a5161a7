// The chaos checker's gate 7 on hand-made histories: one lease of a key at a time, fills and
// releases answered only while their lease is held (both where the ring stays as it is), and no
// value of a refused fill ever read.
import { expect } from "chai";
import { check } from "../../chaos/checker/check.js";
import type { KeyPlan, Op } from "../../chaos/checker/history.js";
import { findLeaseViolations, leaseCoverage } from "../../chaos/checker/leases.js";
import { checkpoint, emptyRecord, fill, grant, leaseHit, phase, release } from "./history-builder.js";

const KEY = "l000";
const LEASES: KeyPlan[] = [{ key: KEY, kind: "lease" }];
const KEYS = new Set([KEY]);
const STABLE = new Set(["p1"]);
const at = (a: number, b: number, extra: Partial<Parameters<typeof grant>[2]> = {}) => ({ key: KEY, at: [a, b] as [number, number], ...extra });
const kinds = (ops: Op[], stable: ReadonlySet<string> = STABLE) => findLeaseViolations(KEYS, ops, stable).filter((v) => v.gated).map((v) => v.kind);
const reported = (ops: Op[]) => findLeaseViolations(KEYS, ops, STABLE).filter((v) => !v.gated).map((v) => v.kind);

/** Grant, fill, a hit; a second lease after the fill; its release; a third lease after that; a late fill refused. */
function healthy(): Op[] {
  return [
    grant("a", 2_000, at(0, 10)),
    fill("w0-1", "a", at(300, 320, { worker: 0 })),
    leaseHit("w0-1", at(400, 410, { worker: 1 })),
    grant("b", 2_000, at(1_900, 1_910, { worker: 1 })),
    release("b", at(2_000, 2_010, { worker: 1 })),
    grant("c", 2_000, at(2_100, 2_110, { worker: 2 })),
    fill("w2-1", "c", at(4_500, 4_510, { worker: 2, outcome: "fail", status: 409 })),
  ];
}

describe("chaos checker: leases", () => {
  it("passes a history where every lease ended before the next was granted, and counts what it saw", () => {
    expect(kinds(healthy())).to.deep.equal([]);
    expect(leaseCoverage(KEYS, healthy())).to.deep.equal({ granted: 3, unchecked: 0, held: 0, none: 0, hits: 1, filled: 1, fillRefused: 1, released: 1, releaseRefused: 0 });
  });

  it("fails a second lease granted while the first still had time and no fill or release had come", () => {
    const first = grant("a", 2_000, at(0, 10));
    const second = grant("b", 2_000, at(500, 510, { worker: 1 }));
    const v = findLeaseViolations(KEYS, [first, second], STABLE);
    expect(v.map((x) => [x.kind, x.token, x.op.lease])).to.deep.equal([["double-grant", "a", "b"]]);
    // an indeterminate release or fill of the first lease may have ended it
    expect(kinds([first, second, release("a", at(400, 450, { outcome: "info", status: 503 }))])).to.deep.equal([]);
    expect(kinds([first, second, fill("w0-1", "a", at(400, 20_000, { outcome: "info", status: null }))])).to.deep.equal([]);
    // a refused release ended nothing (and was itself refused while its lease held)
    expect(kinds([first, second, release("a", at(400, 450, { outcome: "fail", status: 409 }))])).to.deep.equal(["double-grant", "refused-while-held"]);
  });

  it("lets a lease follow one whose time ran out, and only reports a phase whose ring moved", () => {
    const first = grant("a", 2_000, at(0, 10));
    expect(kinds([first, grant("b", 2_000, at(1_960, 1_970))]), "within the slack").to.deep.equal([]);
    expect(kinds([first, grant("b", 2_000, at(1_900, 1_940))])).to.deep.equal(["double-grant"]);
    expect(kinds([first, grant("b", 2_000, at(500, 510, { phase: "p2" }))]), "p2's ring moved").to.deep.equal([]);
    expect(reported([first, grant("b", 2_000, at(500, 510, { phase: "p2" }))])).to.deep.equal(["double-grant"]);
  });

  it("fails two lease reads that overlapped in real time and were both granted (a stampede), unless one may have ended first", () => {
    // whichever was granted first, nothing ended it before the other was answered (review finding)
    const a = grant("a", 2_000, at(0, 10));
    const b = grant("b", 2_000, at(5, 12, { worker: 1 }));
    expect(kinds([b, a, fill("w0-1", "a", at(300, 320)), fill("w1-1", "b", at(400, 420, { worker: 1 }))])).to.deep.equal(["double-grant"]);
    expect(kinds([a, grant("b", 2_000, at(5, 600))]), "answered long after the first, still inside it").to.deep.equal(["double-grant"]);
    // b may have come first and been released (indeterminately) before a was granted: allowed
    expect(kinds([a, b, release("b", at(6, 9, { outcome: "info", status: 503 }))])).to.deep.equal([]);
    // a slow read overlapping the end of the first lease: it may have been granted after it ran out
    expect(kinds([a, grant("b", 2_000, at(5, 2_500))])).to.deep.equal([]);
  });

  it("fails a fill or release refused (409) while its lease surely held, and not one answered after its time could have run out", () => {
    const first = grant("a", 2_000, at(0, 10));
    expect(kinds([first, fill("w0-1", "a", at(300, 320, { outcome: "fail", status: 409 }))])).to.deep.equal(["refused-while-held"]);
    expect(kinds([first, release("a", at(300, 320, { outcome: "fail", status: 409 }))])).to.deep.equal(["refused-while-held"]);
    // invoked in time, answered late (a paused primary, a slow link): the lease may have run out
    expect(kinds([first, fill("w0-1", "a", at(1_500, 1_990, { outcome: "fail", status: 409 }))])).to.deep.equal([]);
    // another fill or release of the lease came first
    expect(kinds([first, release("a", at(100, 150, { outcome: "info", status: 503 })), fill("w0-1", "a", at(300, 320, { outcome: "fail", status: 409 }))])).to.deep.equal([]);
    // a refusal other than 409 (a 400 for a malformed token) says nothing about the lease
    expect(kinds([first, fill("w0-1", "a", at(300, 320, { outcome: "fail", status: 400 }))])).to.deep.equal([]);
  });

  it("checks nothing against a grant recorded without its length, and counts it", () => {
    const { lease_ms: _length, ...noLength } = grant("a", 2_000, at(0, 10));
    expect(kinds([noLength as Op, release("a", at(300, 310)), grant("b", 2_000, at(400, 410))])).to.deep.equal([]);
    expect(leaseCoverage(KEYS, [noLength as Op]).unchecked).to.equal(1);
  });

  it("fails a fill acknowledged after its lease ran out, after its release, or after a newer lease", () => {
    const first = grant("a", 2_000, at(0, 10));
    expect(kinds([first, fill("w0-1", "a", at(2_100, 2_120))])).to.deep.equal(["late-fill"]);
    expect(kinds([first, fill("w0-1", "a", at(2_050, 2_070))]), "within the slack").to.deep.equal([]);
    expect(kinds([first, release("a", at(100, 110)), fill("w0-1", "a", at(200, 220))])).to.deep.equal(["late-fill"]);
    // an indeterminate release may have ended the first lease, so the second is allowed; then the
    // first lease's fill must be refused
    const unsure = release("a", at(100, 150, { outcome: "info", status: 503 }));
    const newer = grant("b", 2_000, at(500, 510, { worker: 1 }));
    expect(kinds([first, unsure, newer])).to.deep.equal([]);
    expect(kinds([first, unsure, newer, fill("w0-1", "a", at(600, 620))])).to.deep.equal(["late-fill"]);
    expect(kinds([first, fill("w0-1", "a", at(2_100, 2_120, { phase: "p2" }))]), "p2's ring moved").to.deep.equal([]);
    expect(reported([first, fill("w0-1", "a", at(2_100, 2_120, { phase: "p2" }))])).to.deep.equal(["late-fill"]);
  });

  it("fails a release acknowledged after the fill or after the lease ran out", () => {
    const first = grant("a", 2_000, at(0, 10));
    expect(kinds([first, fill("w0-1", "a", at(100, 120)), release("a", at(200, 210))])).to.deep.equal(["late-release"]);
    expect(kinds([first, release("a", at(3_000, 3_010))])).to.deep.equal(["late-release"]);
    expect(kinds([first, release("a", at(3_000, 3_010, { outcome: "fail", status: 409 }))])).to.deep.equal([]);
  });

  it("fails any read of a refused fill's value or of a value no fill wrote, in any phase", () => {
    const refused = fill("w0-1", "a", at(2_500, 2_510, { outcome: "fail", status: 409, phase: "p2" }));
    const first = grant("a", 2_000, at(0, 10));
    expect(kinds([first, refused, leaseHit("w0-1", at(2_600, 2_610, { phase: "p2" }))])).to.deep.equal(["refused-fill-read"]);
    expect(kinds([first, refused, checkpoint("w0-1", at(9_000, 9_010, { phase: "p2" }))])).to.deep.equal(["refused-fill-read"]);
    expect(kinds([first, leaseHit("w9-9", at(600, 610))])).to.deep.equal(["refused-fill-read"]);
    const late = fill("w0-1", "a", at(2_500, 20_000, { outcome: "info", status: null }));
    expect(kinds([first, late, checkpoint("w0-1", at(21_000, 21_010))]), "an indeterminate fill may have stored").to.deep.equal([]);
  });

  it("gates leases in the verdict, leaves lease keys out of the lost-write gate, and fails a run that granted or filled nothing", () => {
    const record = (ops: Op[]) =>
      emptyRecord({
        keys: LEASES,
        phases: [phase("p1", 0, 5_000, 6_000, 7_000, { nemesis: "none" })],
        // the last fill's value expired before the checkpoint: absent, which gate 1 would call lost
        ops: [...ops, checkpoint(null, at(6_500, 6_510))],
        convergence: [{ phase: "p1", t_ms: 6_200, samples: [{ key: KEY, owners: ["n1"], copies: [{ node: "n1", status: 404, version: null, origin: null }] }] }],
      });
    const ok = check(record(healthy()));
    expect(ok.passed, JSON.stringify(ok.gates)).to.equal(true);
    // lease reads count as reads; fills and releases (refused by design when late) as neither
    expect(ok.phases[0]?.availability).to.deep.include({ acked: 0, write_ratio: null, read_ratio: 1 });
    expect(ok.gates.find((g) => g.name === "leases")?.detail).to.match(/3 granted, 1 filled, 1 fills refused .*; 0 broken across ring changes/);
    // the same break in a phase whose ring moved is reported in its row, and the gate holds
    const moved = record([...healthy(), grant("d", 2_000, at(2_200, 2_210, { worker: 3, phase: "p2" }))]);
    moved.phases.push(phase("p2", 2_150, 5_000, 6_000, 7_000, { nemesis: "kill" }));
    const movedVerdict = check(moved);
    expect(movedVerdict.gates.find((g) => g.name === "leases")?.passed).to.equal(true);
    expect(movedVerdict.phases[1]?.lease_violations).to.equal(1);
    const broken = check(record([...healthy(), grant("d", 2_000, at(2_200, 2_210, { worker: 3 }))]));
    expect(broken.gates.find((g) => g.name === "leases")).to.deep.include({ passed: false });
    expect(broken.phases[0]?.lease_violations).to.equal(1);
    const idle = check(record([grant("a", 2_000, at(0, 10))]));
    expect(idle.gates.find((g) => g.name === "leases")?.detail).to.match(/checked nothing/);
  });
});
