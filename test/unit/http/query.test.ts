// parseQuery (http/query.ts): queries without escapes are split directly, the others by
// URLSearchParams; either way every parameter's values are those URLSearchParams gives.
import { expect } from "chai";
import fc from "fast-check";
import { oneParam, parseQuery } from "../../../src/http/query.js";

describe("http/query parseQuery", () => {
  it("gives every name the values URLSearchParams gives, for any query over a small alphabet (escapes, +, &, = and ? included)", () => {
    const chars = fc.constantFrom(..."ab=&?%+2F0.".split(""));
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 40 }), (query) => {
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
