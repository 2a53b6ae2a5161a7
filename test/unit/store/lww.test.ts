// compareVersions: the last-write-wins order every node must agree on.
import { expect } from "chai";
import { compareVersions } from "../../../src/store/index.js";

type Row = [versionA: number, originA: string, versionB: number, originB: string, sign: -1 | 0 | 1, why: string];

describe("store/lww compareVersions", () => {
  const table: Row[] = [
    [2, "n1", 1, "n1", 1, "higher version wins, same origin"],
    [1, "n1", 2, "n1", -1, "lower version loses, same origin"],
    [2, "zz", 1, "aa", 1, "higher version wins even with a larger origin"],
    [1, "aa", 2, "zz", -1, "lower version loses even with a smaller origin"],
    [5, "a", 5, "b", 1, "tie: lexicographically smaller origin wins"],
    [5, "b", 5, "a", -1, "tie: lexicographically larger origin loses"],
    [5, "n10", 5, "n9", 1, "tie: origins compare as strings, not numbers (n10 < n9)"],
    [5, "Node", 5, "node", 1, "tie: code-unit order, uppercase before lowercase"],
    [5, "", 5, "a", 1, "tie: empty origin is the smallest"],
    [5, "n1", 5, "n1", 0, "same version and origin are equal"],
    [0, "", 0, "", 0, "zero versions with empty origins are equal"],
    [2 ** 53 - 1, "b", 2 ** 53 - 2, "a", 1, "versions near 2^53 still order by version"],
    [1_767_225_600_000_001, "n2", 1_767_225_600_000_000, "n1", 1, "hybrid-clock versions differing by the counter"],
  ];

  for (const [va, oa, vb, ob, sign, why] of table) {
    it(`(${va}, "${oa}") vs (${vb}, "${ob}") is ${sign}: ${why}`, () => {
      expect(Math.sign(compareVersions(va, oa, vb, ob))).to.equal(sign);
    });
  }

  it("is antisymmetric: swapping the operands flips the sign", () => {
    const versions = [0, 1, 2, 10];
    const origins = ["", "a", "b", "n1", "n10", "n2"];
    for (const va of versions)
      for (const oa of origins)
        for (const vb of versions)
          for (const ob of origins) {
            expect(Math.sign(compareVersions(va, oa, vb, ob))).to.equal(-Math.sign(compareVersions(vb, ob, va, oa)) || 0);
          }
  });

  it("sorts a mixed list into version order, the smaller origin ranked newer on ties", () => {
    const entries: Array<[number, string]> = [
      [3, "b"],
      [1, "a"],
      [3, "a"],
      [2, "c"],
      [3, "c"],
      [2, "a"],
    ];
    const newestFirst = [...entries].sort(([va, oa], [vb, ob]) => compareVersions(vb, ob, va, oa));
    expect(newestFirst).to.deep.equal([
      [3, "a"],
      [3, "b"],
      [3, "c"],
      [2, "a"],
      [2, "c"],
      [1, "a"],
    ]);
  });
});
