import { expect } from "chai";
import { scopesFromClaim } from "../../../src/auth/scope-claim.js";

describe("auth/scope-claim scopesFromClaim", () => {
  const table: Array<[string, unknown, string[]]> = [
    ["a space-separated string", "read write", ["read", "write"]],
    ["a string with tabs and repeated spaces", "  read\t\tadmin  ", ["read", "admin"]],
    ["an array", ["write", "admin"], ["write", "admin"]],
    ["unknown values in a string, dropped", "openid profile read email", ["read"]],
    ["unknown values in an array, dropped", ["openid", "write", "cache:admin", 42, null], ["write"]],
    ["duplicates, once", "read read", ["read"]],
    ["case matters: READ is not read", "READ Write", []],
    ["an empty string", "", []],
    ["an empty array", [], []],
    ["a missing claim", undefined, []],
    ["a number", 7, []],
    ["an object", { read: true }, []],
    ["colon-qualified names are not ours", "cache:read", []],
  ];
  for (const [what, claim, scopes] of table) {
    it(`${what} gives ${JSON.stringify(scopes)}`, () => {
      expect(scopesFromClaim(claim)).to.deep.equal(scopes);
    });
  }
});
