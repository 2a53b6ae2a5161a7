import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { base36, etagMatches, etagOf, parseEtagCondition } from "../../../src/core/etag.js";
import { seededRandom } from "../../../src/core/random.js";

function badRequestOf(fn: () => unknown): CacheError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CacheError);
    expect((err as CacheError).code).to.equal("BAD_REQUEST");
    return err as CacheError;
  }
  expect.fail("expected a 400");
}

describe("core/etag", () => {
  it("base36 writes exactly what Number#toString(36) writes", () => {
    const edges = [0, 1, 35, 36, 37, 1295, 1296, 60_466_175, 60_466_176, 60_466_177, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 36 ** 6 - 1, 36 ** 6, 36 ** 10, 2 ** 53 - 2, 2 ** 53 - 1];
    for (const n of edges) expect(base36(n), String(n)).to.equal(n.toString(36));
    // Versions: wall-clock ms x 1000 plus a counter, and any other integer up to 2^53.
    const random = seededRandom(36);
    for (let i = 0; i < 20_000; i++) {
      const version = Math.floor((1_700_000_000_000 + random.next() * 1e12) * 1000) + i;
      expect(base36(version)).to.equal(version.toString(36));
      const any = Math.floor(random.next() * 2 ** 53);
      expect(base36(any)).to.equal(any.toString(36));
    }
    // Not a safe non-negative integer: Number#toString(36) itself.
    for (const n of [-1, 0.5, 2 ** 53, 2 ** 60, Number.NaN, Infinity]) expect(base36(n)).to.equal(n.toString(36));
  });

  describe("etagOf", () => {
    it("is a strong quoted tag of the base-36 version and the origin, distinct per version and per origin", () => {
      expect(etagOf(1_767_225_600_000_000, "n1")).to.equal(`"${(1_767_225_600_000_000).toString(36)}-n1"`);
      expect(etagOf(36, "node-a.b_c")).to.equal('"10-node-a.b_c"');
      expect(etagOf(5, "n1")).to.not.equal(etagOf(6, "n1"));
      expect(etagOf(5, "n1")).to.not.equal(etagOf(5, "n2"));
    });

    it("is a valid entity tag that the parser reads back as itself", () => {
      const tag = etagOf(1_767_225_600_123_456, "n-3");
      expect(parseEtagCondition(tag, "If-Match")).to.deep.equal([tag]);
    });
  });

  describe("parseEtagCondition", () => {
    const table: Array<[string, "*" | string[]]> = [
      ["*", "*"],
      ["  *  ", "*"],
      ['"abc"', ['"abc"']],
      ['W/"abc"', ['W/"abc"']],
      ['"a", W/"b" ,"c"', ['"a"', 'W/"b"', '"c"']],
      ['"a",,"b",', ['"a"', '"b"']],
      ['""', ['""']],
      ['"x!#~"', ['"x!#~"']],
    ];
    for (const [value, expected] of table) {
      it(`parses ${JSON.stringify(value)}`, () => {
        expect(parseEtagCondition(value, "If-Match")).to.deep.equal(expected);
      });
    }

    const malformed = ["", "   ", ",", "abc", '"abc', 'abc"', 'W/abc', 'w/"abc"', '"a" "b"', '"a";"b"', '*, "a"', '"a", *', '"a b"', '"a"b', '"a\\"b"', "W/"];
    for (const value of malformed) {
      it(`refuses ${JSON.stringify(value)} with 400 naming the header`, () => {
        const e = badRequestOf(() => parseEtagCondition(value, "If-None-Match"));
        expect(e.message).to.include("If-None-Match");
        expect(e.details).to.include({ header: "If-None-Match" });
      });
    }

    it("refuses more than 64 tags and values longer than 8192 characters", () => {
      const tags = Array.from({ length: 65 }, (_, i) => `"t${i}"`);
      expect(parseEtagCondition(tags.slice(0, 64).join(","), "If-Match")).to.have.length(64);
      expect(badRequestOf(() => parseEtagCondition(tags.join(","), "If-Match")).details).to.include({ max_tags: 64 });
      badRequestOf(() => parseEtagCondition(`"${"x".repeat(8192)}"`, "If-Match"));
    });
  });

  describe("etagMatches (strong comparison)", () => {
    const current = etagOf(42, "n1");
    it("* matches any live item and nothing when there is none", () => {
      expect(etagMatches("*", current)).to.equal(true);
      expect(etagMatches("*", undefined)).to.equal(false);
    });
    it("a list matches when it holds the current tag exactly", () => {
      expect(etagMatches(['"other"', current], current)).to.equal(true);
      expect(etagMatches(['"other"'], current)).to.equal(false);
      expect(etagMatches([current], undefined)).to.equal(false);
    });
    it("a weak tag never matches, even with the same opaque part", () => {
      expect(etagMatches([`W/${current}`], current)).to.equal(false);
    });
  });
});
