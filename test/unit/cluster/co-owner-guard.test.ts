import { expect } from "chai";
import { reachesOwnerMajority } from "../../../src/cluster/co-owner-guard.js";

describe("co-owner guard: which copies a cut-off node keeps", () => {
  const none = new Set<string>();
  it("a node that reaches every owner, or a majority of them, keeps its copy", () => {
    expect(reachesOwnerMajority(["a", "b", "c"], "a", none)).to.equal(true);
    expect(reachesOwnerMajority(["a", "b", "c"], "a", new Set(["b"]))).to.equal(true);
    expect(reachesOwnerMajority(["b", "a", "c", "d", "e"], "a", new Set(["b", "c"]))).to.equal(true);
  });
  it("a node cut off from a majority of the owners (itself counted) does not", () => {
    expect(reachesOwnerMajority(["a", "b", "c"], "a", new Set(["b", "c"]))).to.equal(false);
    expect(reachesOwnerMajority(["b", "a"], "a", new Set(["b"])), "one of two is no majority").to.equal(false);
    expect(reachesOwnerMajority(["b", "a", "c", "d", "e"], "a", new Set(["b", "c", "d"]))).to.equal(false);
  });
  it("a key this node does not own is left to the rebalancer, and peers cut off elsewhere do not count", () => {
    expect(reachesOwnerMajority(["b", "c", "d"], "a", new Set(["b", "c", "d"]))).to.equal(true);
    expect(reachesOwnerMajority(["a", "b", "c"], "a", new Set(["x", "y"]))).to.equal(true);
    expect(reachesOwnerMajority(["a"], "a", new Set(["x"])), "replication 1").to.equal(true);
  });
});
