// writeLevel (cluster/cluster-cache.ts): the consistency a client write runs at. Conditional
// writes and touches need QUORUM or ALL: an explicit ONE is 400, a default of ONE becomes QUORUM.
import { expect } from "chai";
import type { ConsistencyLevel } from "../../../src/config/index.js";
import { CacheError } from "../../../src/core/errors.js";
import { writeLevel } from "../../../src/cluster/cluster-cache.js";

describe("cluster/cluster-cache writeLevel", () => {
  const table: Array<[boolean, ConsistencyLevel | undefined, ConsistencyLevel, ConsistencyLevel]> = [
    // conditional, requested, configured default, level
    [false, undefined, "one", "one"],
    [false, undefined, "quorum", "quorum"],
    [false, "one", "all", "one"],
    [false, "all", "one", "all"],
    [true, undefined, "one", "quorum"],
    [true, undefined, "quorum", "quorum"],
    [true, undefined, "all", "all"],
    [true, "quorum", "one", "quorum"],
    [true, "all", "one", "all"],
  ];
  for (const [conditional, requested, fallback, level] of table) {
    it(`${conditional ? "conditional" : "plain"} write, consistency ${requested ?? "not given"}, default ${fallback}: ${level}`, () => {
      expect(writeLevel(conditional, requested, fallback)).to.equal(level);
    });
  }

  it("a conditional write asking for ONE is 400, whatever the default", () => {
    for (const fallback of ["one", "quorum", "all"] as const) {
      try {
        writeLevel(true, "one", fallback);
        expect.fail("expected a 400");
      } catch (e) {
        expect(e).to.be.instanceOf(CacheError);
        expect((e as CacheError).code).to.equal("BAD_REQUEST");
        expect((e as CacheError).details).to.deep.equal({ consistency: "one" });
      }
    }
  });
});
