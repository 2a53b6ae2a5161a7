import { expect } from "chai";
import { cursorInt, decodeCursor, encodeCursor } from "../../../src/core/cursor.js";

const b64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url");

describe("core/cursor", () => {
  describe("encodeCursor / decodeCursor", () => {
    it("round-trips numeric and string fields", () => {
      const fields = { s: 3, i: 1234, f: "abc", q: "user:*" };
      expect(decodeCursor(encodeCursor(fields))).to.deep.equal(fields);
    });

    it("round-trips non-ASCII and astral text in fields", () => {
      const fields = { q: "日本/😀\u0000\"\\", o: 0 };
      expect(decodeCursor(encodeCursor(fields))).to.deep.equal(fields);
    });

    it("round-trips an empty object", () => {
      expect(decodeCursor(encodeCursor({}))).to.deep.equal({});
    });

    it("encodes to base64url only (no +, / or = padding), safe in a query string", () => {
      for (let n = 0; n < 200; n++) {
        const c = encodeCursor({ o: n * 7919, f: "?>~".repeat(n % 5) });
        expect(c).to.match(/^[A-Za-z0-9_-]+$/);
      }
    });

    it("is deterministic: the same fields give the same cursor", () => {
      expect(encodeCursor({ a: 1, b: "x" })).to.equal(encodeCursor({ a: 1, b: "x" }));
    });

    it("rejects the empty string", () => {
      expect(decodeCursor("")).to.equal(undefined);
    });

    for (const [text, why] of [
      ["not a cursor!", "spaces and punctuation"],
      ["abc+def", "standard base64 +"],
      ["abc/def", "standard base64 /"],
      [`${b64url('{"o":1}')}==`, "padding ="],
      ["abc.def", "a dot"],
      ["%7B%7D", "percent-encoding"],
      ["ab\ncd", "a newline"],
    ] as const) {
      it(`rejects non-base64url text (${why})`, () => {
        expect(decodeCursor(text)).to.equal(undefined);
      });
    }

    it("rejects base64url that does not decode to JSON (garbage)", () => {
      expect(decodeCursor("AAAA")).to.equal(undefined);
      expect(decodeCursor("zzzz")).to.equal(undefined);
      expect(decodeCursor(b64url("{o:1}"))).to.equal(undefined);
      expect(decodeCursor(b64url('{"o":1'))).to.equal(undefined);
    });

    it("rejects JSON that is not an object: arrays, null, numbers, strings, booleans", () => {
      for (const json of ["[1,2]", "[]", "null", "42", '"o"', "true"]) {
        expect(decodeCursor(b64url(json)), json).to.equal(undefined);
      }
    });

    it("rejects a cursor longer than 512 characters, even if well formed", () => {
      const big = encodeCursor({ f: "x".repeat(400) });
      expect(big.length).to.be.greaterThan(512);
      expect(decodeCursor(big)).to.equal(undefined);
      const justFits = "A".repeat(512);
      expect(justFits.length).to.equal(512);
      // 512 characters pass the length gate; this one then fails as non-JSON.
      expect(decodeCursor(justFits)).to.equal(undefined);
      const ok = encodeCursor({ f: "x".repeat(360) });
      expect(ok.length).to.be.at.most(512);
      expect(decodeCursor(ok)).to.deep.equal({ f: "x".repeat(360) });
    });
  });

  describe("cursorInt", () => {
    it("returns a non-negative safe integer field", () => {
      expect(cursorInt({ o: 0 }, "o")).to.equal(0);
      expect(cursorInt({ o: 42 }, "o")).to.equal(42);
      expect(cursorInt({ o: Number.MAX_SAFE_INTEGER }, "o")).to.equal(Number.MAX_SAFE_INTEGER);
    });

    it("rejects negative, fractional, unsafe, non-number and missing fields", () => {
      for (const v of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Infinity, "5", null, true, [1], { v: 1 }]) {
        expect(cursorInt({ o: v }, "o"), String(v)).to.equal(undefined);
      }
      expect(cursorInt({}, "o")).to.equal(undefined);
    });

    it("reads a field back from a decoded cursor", () => {
      const fields = decodeCursor(encodeCursor({ o: 77 }));
      expect(fields && cursorInt(fields, "o")).to.equal(77);
    });
  });
});
