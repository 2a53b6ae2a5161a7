import { expect } from "chai";
import { classifyRead, findReadAnomalies, isGatedResurrection } from "../../chaos/checker/reads.js";
import { checkpoint, del, read, write } from "./history-builder.js";

describe("chaos checker: reads (resurrection gated, staleness reported)", () => {
  const deleted = [write("a", { at: [0, 10] }), del({ at: [20, 30] })];

  it("flags a QUORUM read invoked after an acknowledged delete that returns the deleted value as a gated resurrection", () => {
    const [anomaly] = findReadAnomalies([...deleted, read("a", { worker: 1, at: [40, 50] })]);
    expect(anomaly).to.include({ kind: "resurrected", found: "a", consistency: "quorum" });
    expect(isGatedResurrection(anomaly!)).to.equal(true);
  });

  it("reports the same from a ONE read without gating it (a replica may lag)", () => {
    const [anomaly] = findReadAnomalies([...deleted, read("a", { worker: 1, at: [40, 50], consistency: "one" })]);
    expect(anomaly).to.include({ kind: "resurrected", consistency: "one" });
    expect(isGatedResurrection(anomaly!)).to.equal(false);
  });

  it("gates a checkpoint read that returns a deleted value", () => {
    const [anomaly] = findReadAnomalies([...deleted, checkpoint("a", { at: [40, 50], consistency: "quorum" })]);
    expect(isGatedResurrection(anomaly!)).to.equal(true);
  });

  it("accepts the old value from a read concurrent with the delete", () => {
    expect(classifyRead(read("a", { at: [25, 35] }), deleted).kind).to.equal("fresh");
  });

  it("accepts absence after the delete", () => {
    expect(classifyRead(read(null, { at: [40, 50] }), deleted).kind).to.equal("fresh");
  });

  it("reports a QUORUM read of a value an acknowledged write had replaced as stale", () => {
    const h = [write("a", { at: [0, 10] }), write("b", { at: [20, 30] })];
    expect(classifyRead(read("a", { at: [40, 50] }), h).kind).to.equal("stale");
  });

  it("reports absence after an acknowledged write as stale, not as a resurrection", () => {
    expect(classifyRead(read(null, { at: [40, 50] }), [write("a", { at: [0, 10] })]).kind).to.equal("stale");
  });

  it("reports a value no write could have produced by then as unknown", () => {
    expect(classifyRead(read("zzz", { at: [40, 50] }), deleted).kind).to.equal("unknown");
    // a write invoked after the read completed cannot explain it either
    expect(classifyRead(read("c", { at: [40, 50] }), [write("c", { at: [60, 70] })]).kind).to.equal("unknown");
  });

  it("accepts the value of an indeterminate write invoked before the read ended", () => {
    expect(classifyRead(read("c", { at: [40, 50] }), [write("c", { at: [30, 5030], outcome: "info" })]).kind).to.equal("fresh");
  });
});
