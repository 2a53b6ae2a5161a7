import { expect } from "chai";
import { checkKeyAtCheckpoint, findLostWrites } from "../../chaos/checker/lost-writes.js";
import type { KeyPlan } from "../../chaos/checker/history.js";
import { checkpoint, del, write } from "./history-builder.js";

const single: KeyPlan = { key: "k", kind: "single", writer: 0 };
const contended: KeyPlan = { key: "k", kind: "contended" };

describe("chaos checker: no lost write", () => {
  describe("a single-writer key", () => {
    const history = [write("a", { at: [0, 10] }), write("b", { at: [20, 30] })];

    it("passes when the checkpoint finds the last acknowledged write", () => {
      expect(checkKeyAtCheckpoint(single, history, checkpoint("b", { at: [100, 110] }))).to.equal(undefined);
    });

    it("reports a lost write when the checkpoint finds an earlier acknowledged value", () => {
      const lost = checkKeyAtCheckpoint(single, history, checkpoint("a", { at: [100, 110] }));
      expect(lost).to.include({ reason: "superseded", found: "a", expected: "b" });
      expect(lost?.superseded_by).to.include({ value: "b", f: "write" });
    });

    it("accepts a later indeterminate write, which may have taken effect", () => {
      const h = [...history, write("c", { at: [40, 5040], outcome: "info" })];
      expect(checkKeyAtCheckpoint(single, h, checkpoint("c", { at: [6000, 6010] }))).to.equal(undefined);
      expect(checkKeyAtCheckpoint(single, h, checkpoint("b", { at: [6000, 6010] }))).to.equal(undefined);
    });

    it("reports an indeterminate write that surfaces after a later acknowledged one", () => {
      const h = [write("a", { at: [0, 5000], outcome: "info" }), write("b", { at: [5010, 5020] })];
      expect(checkKeyAtCheckpoint(single, h, checkpoint("a", { at: [6000, 6010] }))).to.include({ reason: "superseded", expected: "b" });
    });

    it("reports a failed write's value as a lost write (a failed write must not take effect)", () => {
      const h = [...history, write("c", { at: [40, 50], outcome: "fail" })];
      expect(checkKeyAtCheckpoint(single, h, checkpoint("c", { at: [100, 110] }))).to.include({ reason: "failed-write", expected: "b" });
    });

    it("passes when an acknowledged delete leaves the key absent, and reports the deleted value coming back", () => {
      const h = [...history, del({ at: [40, 50] })];
      expect(checkKeyAtCheckpoint(single, h, checkpoint(null, { at: [100, 110] }))).to.equal(undefined);
      expect(checkKeyAtCheckpoint(single, h, checkpoint("b", { at: [100, 110] }))).to.include({ reason: "superseded", expected: null });
    });

    it("reports an absent key whose acknowledged write was never deleted", () => {
      expect(checkKeyAtCheckpoint(single, history, checkpoint(null, { at: [100, 110] }))).to.include({ reason: "superseded", found: null, expected: "b" });
    });

    it("accepts an absent key when nothing was acknowledged", () => {
      const h = [write("a", { at: [0, 10], outcome: "fail" })];
      expect(checkKeyAtCheckpoint(single, h, checkpoint(null, { at: [100, 110] }))).to.equal(undefined);
    });

    it("reports a value no operation wrote", () => {
      expect(checkKeyAtCheckpoint(single, history, checkpoint("zzz", { at: [100, 110] }))).to.include({ reason: "unknown-value" });
    });

    it("reports a key whose checkpoint read failed as unverified", () => {
      expect(checkKeyAtCheckpoint(single, history, checkpoint(null, { at: [100, 110], outcome: "info" }))).to.include({ reason: "unverified" });
    });
  });

  describe("a contended key", () => {
    it("accepts either of two concurrent acknowledged writes", () => {
      const h = [write("a", { worker: 1, at: [0, 20] }), write("b", { worker: 2, at: [5, 25] })];
      expect(checkKeyAtCheckpoint(contended, h, checkpoint("a", { at: [100, 110] }))).to.equal(undefined);
      expect(checkKeyAtCheckpoint(contended, h, checkpoint("b", { at: [100, 110] }))).to.equal(undefined);
    });

    it("reports a write that an acknowledged write from another worker followed in real time", () => {
      const h = [write("a", { worker: 1, at: [0, 10] }), write("b", { worker: 2, at: [15, 25] })];
      expect(checkKeyAtCheckpoint(contended, h, checkpoint("a", { at: [100, 110] }))).to.include({ reason: "superseded", expected: "b" });
    });

    it("reports a value an acknowledged delete followed, and accepts absence after it", () => {
      const h = [write("a", { worker: 1, at: [0, 10] }), del({ worker: 2, at: [15, 25] })];
      expect(checkKeyAtCheckpoint(contended, h, checkpoint("a", { at: [100, 110] }))).to.include({ reason: "superseded" });
      expect(checkKeyAtCheckpoint(contended, h, checkpoint(null, { at: [100, 110] }))).to.equal(undefined);
    });

    it("accepts an indeterminate write still in flight when another was acknowledged", () => {
      const h = [write("a", { worker: 1, at: [0, 9000], outcome: "info" }), write("b", { worker: 2, at: [15, 25] })];
      expect(checkKeyAtCheckpoint(contended, h, checkpoint("a", { at: [9100, 9110] }))).to.equal(undefined);
    });
  });

  describe("findLostWrites over a whole history", () => {
    it("judges each checkpoint by the mutations invoked before it, and uses a retried read that succeeded", () => {
      const keys: KeyPlan[] = [single];
      const ops = [
        write("a", { at: [0, 10], phase: "p1" }),
        checkpoint(null, { at: [50, 60], phase: "p1", outcome: "info" }),
        checkpoint("a", { at: [61, 70], phase: "p1" }),
        write("b", { at: [100, 110], phase: "p2" }),
        checkpoint("a", { at: [200, 210], phase: "p2" }),
      ];
      const lost = findLostWrites(keys, ops);
      expect(lost).to.have.length(1);
      expect(lost[0]).to.include({ phase: "p2", found: "a", expected: "b", lost_phase: "p2" });
    });
  });
});
