import { expect } from "chai";
import { keyAgrees, phaseConvergence } from "../../chaos/checker/convergence.js";
import type { ConvergenceRound, CopySample, KeySample } from "../../chaos/checker/history.js";
import { phase } from "./history-builder.js";

const copy = (node: string, version: number | null, origin: string | null = "n1", status = version === null ? 404 : 200): CopySample => ({ node, status, version, origin });
const sample = (copies: CopySample[], owners = copies.map((c) => c.node)): KeySample => ({ key: "k", owners, copies });
const round = (t_ms: number, samples: KeySample[]): ConvergenceRound => ({ phase: "p1", t_ms, samples });

describe("chaos checker: convergence", () => {
  it("a key agrees when every owner holds the same (version, origin), or every owner answers 404", () => {
    expect(keyAgrees(sample([copy("n1", 5), copy("n2", 5), copy("n3", 5)]))).to.equal(true);
    expect(keyAgrees(sample([copy("n1", null), copy("n2", null)]))).to.equal(true);
  });

  it("a key diverges on a different version, a different origin, a 404 beside a copy, or an owner that did not answer", () => {
    expect(keyAgrees(sample([copy("n1", 5), copy("n2", 6)]))).to.equal(false);
    expect(keyAgrees(sample([copy("n1", 5, "n1"), copy("n2", 5, "n2")]))).to.equal(false);
    expect(keyAgrees(sample([copy("n1", 5), copy("n2", null)]))).to.equal(false);
    expect(keyAgrees(sample([copy("n1", 5), copy("n2", 5, "n1", 0)]))).to.equal(false);
    expect(keyAgrees(sample([copy("n1", 5)], ["n1", "n2"]))).to.equal(false);
  });

  it("reports the time from the heal to the first round where every key agrees", () => {
    const p = phase("p1", 0, 1000, 11_000, 20_000);
    const rounds = [round(11_500, [sample([copy("n1", 5), copy("n2", 4)])]), round(12_500, [sample([copy("n1", 5), copy("n2", 5)])])];
    expect(phaseConvergence(p, rounds)).to.include({ converged: true, after_heal_ms: 11_500, after_quiesce_ms: 1_500, rounds: 2, within_deadline: true });
  });

  it("fails a phase that never converged, listing the diverging keys", () => {
    const p = phase("p1", 0, 1000, 11_000, 80_000);
    const result = phaseConvergence(p, [round(70_000, [sample([copy("n1", 5), copy("n2", 4)])])]);
    expect(result).to.include({ converged: false, within_deadline: false });
    expect(result.diverging).to.have.length(1);
  });

  it("fails a phase that converged later than 60 s after its heal", () => {
    const p = phase("p1", 0, 1000, 11_000, 80_000);
    expect(phaseConvergence(p, [round(61_001, [sample([copy("n1", 5), copy("n2", 5)])])])).to.include({ converged: true, within_deadline: false });
  });
});
