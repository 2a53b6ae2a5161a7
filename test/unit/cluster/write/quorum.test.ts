// Quorum arithmetic (SPEC-NOTES "Replication semantics"): R = min(replication, known nodes),
// QUORUM needs floor(R/2)+1, ALL needs R, and QUORUM/ALL writes need a strict majority of the
// known nodes not dead.
import { expect } from "chai";
import type { ConsistencyLevel } from "../../../../src/config/index.js";
import { hasMajority, replicaCount, requiredAcks } from "../../../../src/cluster/write/quorum.js";

describe("dist/quorum", () => {
  describe("replicaCount: R = min(replication, known nodes), at least 1", () => {
    const table: Array<[replication: number, known: number, r: number]> = [
      [3, 5, 3],
      [3, 3, 3],
      [3, 2, 2],
      [3, 1, 1],
      [1, 5, 1],
      [5, 5, 5],
      [5, 4, 4],
      [3, 0, 1],
    ];
    for (const [replication, known, r] of table) {
      it(`replication ${replication} with ${known} known nodes gives R = ${r}`, () => {
        expect(replicaCount(replication, known)).to.equal(r);
      });
    }
  });

  describe("requiredAcks", () => {
    const table: Array<[ConsistencyLevel, r: number, acks: number]> = [
      ["one", 1, 1],
      ["one", 3, 1],
      ["one", 5, 1],
      ["quorum", 1, 1],
      ["quorum", 2, 2],
      ["quorum", 3, 2],
      ["quorum", 4, 3],
      ["quorum", 5, 3],
      ["all", 1, 1],
      ["all", 2, 2],
      ["all", 3, 3],
      ["all", 5, 5],
    ];
    for (const [level, r, acks] of table) {
      it(`${level} with R = ${r} needs ${acks}`, () => {
        expect(requiredAcks(level, r)).to.equal(acks);
      });
    }
  });

  describe("hasMajority: strict majority of the known nodes not dead, self included", () => {
    const table: Array<[notDead: number, known: number, majority: boolean, why: string]> = [
      [5, 5, true, "everyone alive"],
      [3, 5, true, "the 3-node side of a 5-node cluster"],
      [2, 5, false, "the 2-node side of a 5-node cluster, also after pruning"],
      [1, 5, false, "a lone node of five"],
      [2, 4, false, "an even split is not a majority"],
      [3, 4, true, "three of four"],
      [1, 2, false, "one of two"],
      [2, 2, true, "two of two"],
      [1, 1, true, "a one-node cluster"],
      [2, 3, true, "two of three"],
    ];
    for (const [notDead, known, majority, why] of table) {
      it(`${notDead} not dead of ${known} known is ${majority ? "" : "not "}a majority (${why})`, () => {
        expect(hasMajority(notDead, known)).to.equal(majority);
      });
    }
  });
});
