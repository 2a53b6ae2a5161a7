import { expect } from "chai";
import { expectBadRequest } from "../../helpers/expect-error.js";
import { checkKey } from "../../../src/core/key-check.js";
import { decodeKeySegment, keyInPath, parseConsistency, parsePositiveInt, parseTtlQuery, splitUrl } from "../../../src/http/validate.js";

const MAX = 4096;


describe("http/validate", () => {
  describe("checkKey", () => {
    it("returns a valid key unchanged", () => {
      expect(checkKey("user:42", MAX)).to.equal("user:42");
      expect(checkKey("a/b?c#d %20", MAX)).to.equal("a/b?c#d %20");
      expect(checkKey("😀", MAX)).to.equal("😀");
    });

    it("rejects the empty key", () => {
      expectBadRequest(() => checkKey("", MAX), /empty/);
    });

    it("accepts a key of exactly 4096 ASCII bytes", () => {
      expect(checkKey("k".repeat(4096), MAX)).to.have.length(4096);
    });

    it("rejects a key of 4097 ASCII bytes, reporting the limit", () => {
      const e = expectBadRequest(() => checkKey("k".repeat(4097), MAX), /4096 bytes/);
      expect(e.details).to.deep.equal({ max_key_bytes: 4096 });
    });

    it("counts 2-byte UTF-8 characters in bytes (2048 x é = 4096 ok, 2049 rejected)", () => {
      expect(checkKey("é".repeat(2048), MAX)).to.have.length(2048);
      expectBadRequest(() => checkKey("é".repeat(2049), MAX), /bytes/);
    });

    it("counts 3-byte UTF-8 characters in bytes (1365 x € = 4095 ok, 1366 = 4098 rejected)", () => {
      expect(checkKey("€".repeat(1365), MAX)).to.have.length(1365);
      expectBadRequest(() => checkKey("€".repeat(1366), MAX), /bytes/);
    });

    it("counts astral characters as 4 bytes (1024 x 😀 = 4096 ok, 1025 rejected)", () => {
      expect(checkKey("😀".repeat(1024), MAX)).to.have.length(2048);
      expectBadRequest(() => checkKey("😀".repeat(1025), MAX), /bytes/);
    });

    it("counts mixed-width keys exactly at the boundary", () => {
      const exact = "a".repeat(4096 - 2 - 3 - 4) + "é€😀";
      expect(Buffer.byteLength(exact)).to.equal(4096);
      expect(checkKey(exact, MAX)).to.equal(exact);
      expectBadRequest(() => checkKey(`a${exact}`, MAX));
    });

    it("honours a smaller configured limit", () => {
      expect(checkKey("abcd", 4)).to.equal("abcd");
      expectBadRequest(() => checkKey("abcde", 4));
      expectBadRequest(() => checkKey("éé!", 4));
    });

    it("rejects lone surrogates (not well-formed Unicode)", () => {
      for (const key of ["\ud800", "a\udc00b", "\ud83d", "x\ude00", "😀\ud83d"]) {
        expectBadRequest(() => checkKey(key, MAX), /Unicode/);
      }
    });

    it("rejects non-string keys", () => {
      for (const key of [42, null, undefined, {}, ["a"], true, Buffer.from("k")]) {
        expectBadRequest(() => checkKey(key, MAX), /string/);
      }
    });

    it("names the offending part in the message", () => {
      expectBadRequest(() => checkKey("", MAX, "keys[3]"), /^keys\[3\]/);
      expectBadRequest(() => checkKey(7, MAX, "items[0].key"), /^items\[0\]\.key/);
    });

    it("accepts control characters and NUL inside a key", () => {
      expect(checkKey("a\u0000b\n", MAX)).to.equal("a\u0000b\n");
    });
  });

  describe("decodeKeySegment", () => {
    it("returns a segment without % unchanged", () => {
      expect(decodeKeySegment("user:42", MAX)).to.equal("user:42");
      expect(decodeKeySegment("a+b", MAX)).to.equal("a+b");
    });

    it("percent-decodes reserved characters, spaces and UTF-8", () => {
      expect(decodeKeySegment("a%2Fb", MAX)).to.equal("a/b");
      expect(decodeKeySegment("a%20b", MAX)).to.equal("a b");
      expect(decodeKeySegment("%3F%23%25", MAX)).to.equal("?#%");
      expect(decodeKeySegment("caf%C3%A9", MAX)).to.equal("café");
      expect(decodeKeySegment("%E2%82%AC", MAX)).to.equal("€");
      expect(decodeKeySegment("%F0%9F%98%80", MAX)).to.equal("😀");
      expect(decodeKeySegment("%e2%82%ac", MAX)).to.equal("€");
    });

    it("keeps + as a plus (path segments are not form-encoded)", () => {
      expect(decodeKeySegment("a+b%20c", MAX)).to.equal("a+b c");
    });

    it("rejects truncated UTF-8 such as %E0%A4", () => {
      expectBadRequest(() => decodeKeySegment("%E0%A4", MAX), /percent-encoded/);
    });

    it("rejects malformed percent escapes and invalid UTF-8", () => {
      for (const seg of ["%", "%2", "%zz", "a%G0", "%C3", "%FF", "%C0%AF", "%ED%A0%80"]) {
        expectBadRequest(() => decodeKeySegment(seg, MAX));
      }
    });

    it("rejects an empty segment and an encoded empty key", () => {
      expectBadRequest(() => decodeKeySegment("", MAX), /empty/);
    });

    it("applies the byte limit to the decoded key, not the encoded segment", () => {
      const seg = "%C3%A9".repeat(2048); // 12288 characters, 4096 bytes decoded
      expect(decodeKeySegment(seg, MAX)).to.equal("é".repeat(2048));
      expectBadRequest(() => decodeKeySegment("%41".repeat(4097), MAX), /bytes/);
    });
  });

  describe("parseConsistency", () => {
    it("returns undefined when absent", () => {
      expect(parseConsistency(undefined)).to.equal(undefined);
      expect(parseConsistency(null)).to.equal(undefined);
    });

    it("accepts one, quorum and all, in any case", () => {
      expect(parseConsistency("one")).to.equal("one");
      expect(parseConsistency("quorum")).to.equal("quorum");
      expect(parseConsistency("all")).to.equal("all");
      expect(parseConsistency("QUORUM")).to.equal("quorum");
      expect(parseConsistency("All")).to.equal("all");
    });

    it("rejects anything else, echoing the value", () => {
      for (const v of ["", "two", "majority", "one ", "ONE,ALL", "0"]) {
        const e = expectBadRequest(() => parseConsistency(v), /consistency/);
        expect(e.message).to.include(JSON.stringify(v));
      }
    });
  });

  describe("parseTtlQuery", () => {
    it("returns 0 (no expiry) when absent", () => {
      expect(parseTtlQuery(undefined)).to.equal(0);
      expect(parseTtlQuery(null)).to.equal(0);
    });

    it("parses positive durations to milliseconds", () => {
      expect(parseTtlQuery("500ms")).to.equal(500);
      expect(parseTtlQuery("30s")).to.equal(30_000);
      expect(parseTtlQuery("5m")).to.equal(300_000);
      expect(parseTtlQuery("1h")).to.equal(3_600_000);
      expect(parseTtlQuery("1m30s")).to.equal(90_000);
      expect(parseTtlQuery("1.5s")).to.equal(1_500);
      expect(parseTtlQuery("1ms")).to.equal(1);
    });

    it("rejects zero durations", () => {
      for (const v of ["0s", "0ms", "0h", "0.0001s"]) expectBadRequest(() => parseTtlQuery(v), /ttl/);
    });

    it("rejects negative, unitless, unknown-unit, empty and padded values", () => {
      for (const v of ["-1s", "0", "30", "1d", "", " 1s", "1s ", "abc", "1S", "9999999999999999h"]) {
        expectBadRequest(() => parseTtlQuery(v), /ttl/);
      }
    });
  });

  describe("parsePositiveInt", () => {
    it("returns the fallback when absent", () => {
      expect(parsePositiveInt("limit", undefined, 100, 500)).to.equal(100);
      expect(parsePositiveInt("limit", null, 100, 500)).to.equal(100);
    });

    it("returns a positive integer at or below the ceiling", () => {
      expect(parsePositiveInt("limit", "1", 100, 500)).to.equal(1);
      expect(parsePositiveInt("limit", "250", 100, 500)).to.equal(250);
      expect(parsePositiveInt("limit", "500", 100, 500)).to.equal(500);
      expect(parsePositiveInt("limit", "007", 100, 500)).to.equal(7);
    });

    it("clamps a value above the ceiling to the ceiling", () => {
      expect(parsePositiveInt("limit", "501", 100, 500)).to.equal(500);
      expect(parsePositiveInt("limit", "100000", 100, 500)).to.equal(500);
      expect(parsePositiveInt("max", "999999999999999", 10_000, 50_000)).to.equal(50_000);
    });

    it("clamps a very long digit string too (a value above the ceiling is never a 400)", () => {
      expect(parsePositiveInt("max", "99999999999999999999", 10_000, 50_000)).to.equal(50_000);
      // however long (a review found 65 digits refused): the request line's cap bounds it
      expect(parsePositiveInt("limit", "9".repeat(65), 100, 500)).to.equal(500);
      expect(parsePositiveInt("limit", "9".repeat(400), 100, 500), "past Number's range too").to.equal(500);
    });

    it("rejects zero, negatives and non-numeric values, naming the parameter", () => {
      for (const v of ["0", "000", "-1", "-500", "abc", "", "1.5", "1e3", " 5", "5 ", "+5", "0x10", "٣"]) {
        const e = expectBadRequest(() => parsePositiveInt("limit", v, 100, 500), /^limit must be a positive integer/);
        expect(e.message).to.include(JSON.stringify(v));
      }
    });
  });

  describe("splitUrl", () => {
    it("splits the path from the raw query", () => {
      expect(splitUrl("/v1/cache/a%2Fb?ttl=1s&x=y")).to.deep.equal({ path: "/v1/cache/a%2Fb", query: "ttl=1s&x=y" });
      expect(splitUrl("/v1/cache/k")).to.deep.equal({ path: "/v1/cache/k", query: "" });
      expect(splitUrl("/p?")).to.deep.equal({ path: "/p", query: "" });
      expect(splitUrl("/p?a=1?b")).to.deep.equal({ path: "/p", query: "a=1?b" });
    });
  });
  describe("keyInPath", () => {
    const value = (path: string) => keyInPath(path, "/cluster/keys/", "/value", MAX);

    it("reads the key segment between the prefix and the suffix, decoded", () => {
      expect(value("/cluster/keys/abc/value")).to.equal("abc");
      expect(value("/cluster/keys/abc%2F/value")).to.equal("abc/");
      expect(value("/cluster/keys/a%20b%3Fc/value")).to.equal("a b?c");
    });

    it("takes the forms the router matches: one trailing slash, any case", () => {
      expect(value("/cluster/keys/abc/value/")).to.equal("abc");
      expect(value("/CLUSTER/Keys/abc/VALUE")).to.equal("abc");
      expect(value("/cluster/keys/AbC/value/")).to.equal("AbC");
      expect(keyInPath("/v1/owners/abc/", "/v1/owners/", "", MAX)).to.equal("abc");
      expect(keyInPath("/v1/owners/abc%2F", "/v1/owners/", "", MAX)).to.equal("abc/");
    });

    it("refuses a path not of the route's shape with a 400 instead of reading another key", () => {
      for (const path of ["/cluster/keys/abc/value//", "/cluster/keys/a/b/value", "/cluster/keys//value", "/cluster/keys/value", "http://h/cluster/keys/abc/value", "/cluster/keyz/abc/value", "/cluster/keys/abc/valuex"]) {
        expectBadRequest(() => value(path), /\/cluster\/keys\/\{key\}\/value/);
      }
      for (const path of ["/v1/owners/", "/v1/owners//", "/v1/owners/a/b"]) {
        expectBadRequest(() => keyInPath(path, "/v1/owners/", "", MAX), /\/v1\/owners\/\{key\}/);
      }
    });

    it("checks the decoded key like any other (bad percent-encoding, length)", () => {
      expectBadRequest(() => value("/cluster/keys/%E0%A4/value"), /percent-encoded/);
      expectBadRequest(() => value(`/cluster/keys/${"k".repeat(4097)}/value`), /4096 bytes/);
    });
  });
});
