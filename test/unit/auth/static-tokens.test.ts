import { timingSafeEqual } from "node:crypto";
import { expect } from "chai";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";

const TOKENS = [
  { id: "reader", token: "tok-reader", scopes: ["read"] as const },
  { id: "writer", token: "tok-writer", scopes: ["write"] as const },
  { id: "admin", token: "tok-admin", scopes: ["admin", "read"] as const },
];

describe("auth/static-tokens", () => {
  it("resolves each configured token to its identity, scopes in canonical order", () => {
    const t = new StaticTokenTable(TOKENS);
    expect(t.match("tok-reader")).to.deep.equal({ kind: "token", id: "reader", scopes: ["read"] });
    expect(t.match("tok-writer")).to.deep.equal({ kind: "token", id: "writer", scopes: ["write"] });
    expect(t.match("tok-admin")).to.deep.equal({ kind: "token", id: "admin", scopes: ["read", "admin"] });
  });

  it("matches nothing for unknown tokens, prefixes, extensions and case changes", () => {
    const t = new StaticTokenTable(TOKENS);
    for (const given of ["", "tok", "tok-reade", "tok-reader ", "tok-readerX", "TOK-READER", "tok-reader\u0000"]) {
      expect(t.match(given), JSON.stringify(given)).to.equal(undefined);
    }
  });

  it("compares the presented token with every configured token, whether it matches the first, the last or none", () => {
    let comparisons = 0;
    const counting = (a: Buffer, b: Buffer) => {
      comparisons++;
      return timingSafeEqual(a, b);
    };
    const t = new StaticTokenTable(TOKENS, counting);
    for (const given of ["tok-reader", "tok-admin", "nope"]) {
      comparisons = 0;
      t.match(given);
      expect(comparisons, given).to.equal(TOKENS.length);
    }
  });

  it("compares fixed-length digests, so tokens of any length are compared the same way", () => {
    const lengths: number[] = [];
    const t = new StaticTokenTable(TOKENS, (a, b) => {
      lengths.push(a.length, b.length);
      return timingSafeEqual(a, b);
    });
    t.match("x");
    t.match("x".repeat(10_000));
    expect(new Set(lengths)).to.deep.equal(new Set([32]));
  });

  it("an empty table matches nothing", () => {
    expect(new StaticTokenTable([]).match("anything")).to.equal(undefined);
  });
});
