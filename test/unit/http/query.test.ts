// parseQuery (http/query.ts): queries without escapes are split directly, the others by
// URLSearchParams; either way every parameter's values are those URLSearchParams gives, and
// escapes that are malformed or not UTF-8 are 400.
import { expect } from "chai";
import fc from "fast-check";
import { CacheError } from "../../../src/core/errors.js";
import { oneParam, parseQuery } from "../../../src/http/query.js";

/** Whether every percent escape of `query` is well formed and they decode to UTF-8. */
function wellEncoded(query: string): boolean {
  try {
    decodeURIComponent(query);
    return true;
  } catch {
    return false;
  }
}

describe("http/query parseQuery", () => {
  it("refuses a malformed escape or escapes that are not UTF-8 with 400 (URLSearchParams took them literally or as U+FFFD: q=%C0%80 listed another prefix)", () => {
    for (const query of ["q=%C0%80", "q=%ZZ", "q=%", "q=%E2%82", "cursor=%FF"]) {
      expect(() => parseQuery(query), query).to.throw(CacheError, /percent-encoded UTF-8/);
    }
    expect(parseQuery("q=%E2%82%AC+x").getAll("q")).to.deep.equal(["\u20ac x"]);
  });


  it("gives every name the values URLSearchParams gives, for any query over a small alphabet (escapes, +, &, = and ? included)", () => {
    const chars = fc.constantFrom(..."ab=&?%+2F0.".split(""));
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 40 }), (query) => {
        if (!wellEncoded(query)) {
          expect(() => parseQuery(query), JSON.stringify(query)).to.throw(CacheError, /percent-encoded UTF-8/);
          return;
        }
        const ours = parseQuery(query);
        const reference = new URLSearchParams(query);
        for (const name of new Set([...reference.keys(), "a", "b", "ab", "", "?a"])) {
          expect(ours.getAll(name), `${JSON.stringify(query)} ${JSON.stringify(name)}`).to.deep.equal(reference.getAll(name));
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it("the item routes' queries: lease and wait, ttl, consistency; a repeated parameter is 400", () => {
    const q = parseQuery("lease=10s&wait=2s&consistency=quorum");
    expect([oneParam(q, "lease"), oneParam(q, "wait"), oneParam(q, "consistency"), oneParam(q, "ttl")]).to.deep.equal(["10s", "2s", "quorum", undefined]);
    expect(() => oneParam(parseQuery("ttl=1s&ttl=2s"), "ttl")).to.throw(/more than once/);
    expect(oneParam(parseQuery("ttl=1%73"), "ttl")).to.equal("1s");
    expect(oneParam(parseQuery("flag&ttl="), "flag")).to.equal("");
  });
});
