import { expect } from "chai";
import { classAccepts, compileClass, compileKeyFilter, GLOB_STEPS_PER_UNIT, GlobError, globMatches, isGlob, KEY_FILTER_MAX_CHARS } from "../../../src/core/key-filter.js";

/** Expects `glob` to match every key of `yes` and none of `no`. */
function check(glob: string, yes: string[], no: string[]): void {
  const f = compileKeyFilter(glob);
  expect(f.kind, glob).to.equal("glob");
  for (const k of yes) expect(f.matches(k), `${glob} should match ${JSON.stringify(k)}`).to.equal(true);
  for (const k of no) expect(f.matches(k), `${glob} should not match ${JSON.stringify(k)}`).to.equal(false);
}

function expectGlobError(glob: string, pattern?: RegExp): void {
  let caught: unknown;
  try {
    compileKeyFilter(glob);
  } catch (err) {
    caught = err;
  }
  expect(caught, `${JSON.stringify(glob)} should throw`).to.be.instanceOf(GlobError);
  expect((caught as GlobError).name).to.equal("GlobError");
  if (pattern) expect((caught as GlobError).message).to.match(pattern);
}

describe("core/key-filter", () => {
  describe("classification", () => {
    it("an empty q is the match-all filter", () => {
      const f = compileKeyFilter("");
      expect(f.kind).to.equal("all");
      expect(f.matches("")).to.equal(true);
      expect(f.matches("anything")).to.equal(true);
    });

    for (const q of ["user:", "a", "a]b", "a\\b", "a.b", "a+b", "a(b)", "a{b}", "a|b", "a/b", "!x", "^x", "a-b"]) {
      it(`${JSON.stringify(q)} (no *, ?, [) is a literal prefix`, () => {
        expect(isGlob(q)).to.equal(false);
        expect(compileKeyFilter(q).kind).to.equal("prefix");
      });
    }

    for (const q of ["*", "a*", "?", "a?b", "[", "[ab]", "x[", "a\\*"]) {
      it(`${JSON.stringify(q)} (contains *, ? or [) is a glob`, () => {
        expect(isGlob(q)).to.equal(true);
      });
    }

    it("keeps the source text on the filter", () => {
      expect(compileKeyFilter("user:").source).to.equal("user:");
      expect(compileKeyFilter("user:*").source).to.equal("user:*");
    });

    it("a prefix matches keys starting with it and only those", () => {
      const f = compileKeyFilter("user:");
      expect(f.matches("user:")).to.equal(true);
      expect(f.matches("user:1")).to.equal(true);
      expect(f.matches("user:1:profile")).to.equal(true);
      expect(f.matches("xuser:1")).to.equal(false);
      expect(f.matches("user")).to.equal(false);
      expect(f.matches("USER:1")).to.equal(false);
    });

    it("a prefix with regex and glob-adjacent characters is literal", () => {
      expect(compileKeyFilter("a.b").matches("a.b1")).to.equal(true);
      expect(compileKeyFilter("a.b").matches("axb1")).to.equal(false);
      expect(compileKeyFilter("a\\b").matches("a\\bc")).to.equal(true);
      expect(compileKeyFilter("a]").matches("a]")).to.equal(true);
      expect(compileKeyFilter("(a|b)").matches("(a|b)x")).to.equal(true);
      expect(compileKeyFilter("(a|b)").matches("a")).to.equal(false);
    });
  });

  describe("glob semantics (fnmatch without FNM_PATHNAME)", () => {
    it("the glob is anchored at both ends", () => {
      check("a*c", ["ac", "abc", "abbbc"], ["xabc", "abcx", "ab"]);
    });

    it("* matches any sequence, also empty", () => {
      check("*", ["", "a", "a/b/c", "x\ny"], []);
      check("user:*", ["user:", "user:1", "user:1/2"], ["user", "xuser:1"]);
      check("*:1", [":1", "user:1"], ["user:12"]);
      check("a**b", ["ab", "axxb"], ["a"]);
    });

    it("? matches exactly one character", () => {
      check("a?c", ["abc", "a/c", "a?c", "a c"], ["ac", "abbc"]);
      check("???", ["abc", "///"], ["ab", "abcd"]);
    });

    it("\"/\" is an ordinary character for * and ?", () => {
      check("a*", ["a/b", "a/b/c/d"], ["b/a"]);
      check("*/x", ["/x", "a/b/x"], ["a/b/y"]);
      check("a?b", ["a/b"], []);
      check("a/*/c", ["a/b/c", "a//c", "a/x/y/c"], ["a/c"]);
    });

    it("* and ? match newlines and other control characters", () => {
      check("a*b", ["a\nb", "a\r\n\tb", "a\u0000b"], []);
      check("a?b", ["a\nb", "a\u2028b"], []);
    });

    it("dots, pluses, parentheses, braces, pipes, carets and dollars are literal", () => {
      check("a.b*", ["a.b", "a.bc"], ["axb"]);
      check("a+*", ["a+", "a+x"], ["aa"]);
      check("(a|b)*", ["(a|b)", "(a|b)z"], ["a", "b"]);
      check("{a,b}*", ["{a,b}"], ["a", "b"]);
      check("^a$*", ["^a$", "^a$z"], ["a"]);
    });

    it("a hyphen outside a class is literal (keys such as user-42)", () => {
      // A valid glob must compile; it must not throw a SyntaxError from the RegExp engine.
      check("user-*", ["user-", "user-42"], ["user42", "user_42"]);
      check("*-*", ["a-b", "-"], ["ab"]);
      check("a?-b", ["ax-b"], ["axb"]);
      check("*\\-*", ["a-b"], ["ab"]);
    });

    it("a class matches one of the listed characters", () => {
      check("[abc]", ["a", "b", "c"], ["d", "", "ab"]);
      check("k[12]x", ["k1x", "k2x"], ["k3x", "kx"]);
    });

    it("a range matches characters between its ends, inclusive", () => {
      check("[a-c]", ["a", "b", "c"], ["d", "A", "`"]);
      check("[0-9][0-9]", ["00", "42", "99"], ["4a", "4"]);
      check("[a-a]", ["a"], ["b"]);
      check("[a-cx-z]", ["b", "y"], ["m"]);
    });

    it("[!...] and [^...] negate a class", () => {
      check("[!a]", ["b", "/", "!"], ["a", "", "bb"]);
      check("[^a]", ["b", "^"], ["a"]);
      check("[!a-c]x", ["dx", "/x"], ["ax", "bx", "cx"]);
      check("[^0-9]*", ["a1", "x"], ["1a"]);
    });

    it("a negated class still consumes exactly one character (including newline)", () => {
      check("[!a]", ["\n"], ["", "bc"]);
    });

    it("\"]\" first in a class (after an optional negation) is literal", () => {
      check("[]]", ["]"], ["a", "[]"]);
      check("[]a]", ["]", "a"], ["b"]);
      check("[!]]", ["a", "["], ["]"]);
      check("[^]a]", ["b"], ["]", "a"]);
      check("[]-a]", ["]", "^", "a"], ["b"]);
    });

    it("\"-\" at the start or end of a class is literal", () => {
      check("[-a]", ["-", "a"], ["b"]);
      check("[a-]", ["a", "-"], ["b"]);
      check("[!-]", ["a"], ["-"]);
    });

    it("\"^\" and \"!\" later in a class are literal members", () => {
      check("[a^]", ["a", "^"], ["b"]);
      check("[a!]", ["a", "!"], ["b"]);
    });

    it("regex metacharacters inside a class are literal", () => {
      check("[.]", ["."], ["a"]);
      check("[\\\\]", ["\\"], ["a"]);
      check("[[]", ["["], ["a"]);
      check("[(|)]", ["(", "|", ")"], ["a"]);
      check("[$*?]", ["$", "*", "?"], ["a"]);
      check("[/]", ["/"], ["a"]);
    });

    it("a backslash escapes the next character outside a class", () => {
      check("a\\*", ["a*"], ["a", "ab", "a\\b"]);
      check("a\\?", ["a?"], ["ab"]);
      check("\\[a]", ["[a]"], ["a"]);
      check("a\\\\*", ["a\\", "a\\b"], ["ab"]);
      check("\\a*", ["a", "ab"], ["\\a"]);
    });

    it("a backslash escapes the next character inside a class", () => {
      check("[\\]]", ["]"], ["\\"]);
      check("[\\]a]", ["]", "a"], ["\\"]);
      check("[a\\-z]", ["a", "-", "z"], ["b"]);
      check("[\\!a]", ["!", "a"], ["b"]);
    });

    it("an escaped range end is the literal character", () => {
      check("[a-\\z]", ["a", "m", "z"], ["\\"]);
    });

    it("matches BMP non-ASCII characters as single characters", () => {
      check("caf?", ["café"], ["cafe\u0301"]);
      check("[éè]t?", ["été", "èta"], ["et"]);
      check("日*", ["日本", "日"], ["本日"]);
    });

    it("? and classes match a whole astral character (one code point, two UTF-16 units)", () => {
      check("?", ["😀", "a"], ["😀😀", ""]);
      check("a?b", ["a😀b", "a𝄞b"], ["a😀😀b"]);
      check("[😀😂]", ["😀", "😂"], ["😁", "\ud83d"]);
      check("[😀-😂]", ["😀", "😁", "😂"], ["😃"]);
      check("[!😀]", ["a", "😁"], ["😀"]);
      check("*😀", ["x😀", "😀"], ["😀x"]);
    });
  });

  describe("malformed globs throw GlobError", () => {
    it("an unterminated class", () => {
      expectGlobError("[", /unterminated/);
      expectGlobError("a[bc", /unterminated/);
      expectGlobError("[!", /unterminated/);
      expectGlobError("[a-", /unterminated/);
      expectGlobError("x*[", /unterminated/);
    });

    it("an empty class ([] and [!] only open a class whose first member is ])", () => {
      expectGlobError("[]");
      expectGlobError("[!]");
      expectGlobError("[^]");
    });

    it("a trailing backslash outside a class", () => {
      expectGlobError("a*\\", /backslash/);
      expectGlobError("*\\", /backslash/);
    });

    it("a trailing backslash inside a class", () => {
      expectGlobError("[a\\", /backslash/);
      expectGlobError("[a-\\", /backslash/);
    });

    it("a reversed range", () => {
      expectGlobError("[z-a]", /reversed range/);
      expectGlobError("[9-0]*", /reversed range/);
      expectGlobError("[😂-😀]", /reversed range/);
    });

    it("globMatches throws the same GlobError", () => {
      expect(() => globMatches("[z-a]", "a")).to.throw(GlobError);
    });

    it("a filter longer than the cap is refused with GlobError", () => {
      expect(() => compileKeyFilter("*".repeat(KEY_FILTER_MAX_CHARS + 1))).to.throw(GlobError, /longer than/);
      expect(() => compileKeyFilter("a".repeat(KEY_FILTER_MAX_CHARS + 1))).to.throw(GlobError);
    });

    it("a literal backslash prefix (no glob characters) is not an error", () => {
      expect(() => compileKeyFilter("a\\")).to.not.throw();
      expect(compileKeyFilter("a\\").matches("a\\x")).to.equal(true);
    });
  });

  describe("globMatches", () => {
    it("is anchored at both ends and matches by code point", () => {
      expect(globMatches("a*", "xa")).to.equal(false);
      expect(globMatches("a*", "ab")).to.equal(true);
      expect(globMatches("?", "😀")).to.equal(true);
      expect(globMatches("??", "😀")).to.equal(false);
    });

    it("runs in linear time: a pathological glob against a 4096-character key takes milliseconds, not exponential time", () => {
      const key = "a".repeat(4096);
      const started = performance.now();
      expect(globMatches("*a*a*a*a*a*a*a*a*a*a*a*a*b", key)).to.equal(false);
      expect(globMatches("*a*a*a*a*a*a*a*a*a*a*a*a*a", key)).to.equal(true);
      expect(performance.now() - started).to.be.lessThan(500);
    });
  });
  it("cost: one unit for a prefix or no filter, and one per GLOB_STEPS_PER_UNIT matcher steps for a glob", () => {
    expect(compileKeyFilter("").cost("x".repeat(4000))).to.equal(1);
    expect(compileKeyFilter("user:").cost("x".repeat(4000))).to.equal(1);
    expect(compileKeyFilter("a*").cost("abc")).to.equal(1);
    const long = compileKeyFilter(`*${"?".repeat(2047)}`); // 2048 tokens of one step each
    expect(long.cost("x".repeat(4096))).to.equal(1 + (2048 * 4096) / GLOB_STEPS_PER_UNIT);
    expect(long.cost("x".repeat(2))).to.equal(1 + Math.floor((2048 * 2) / GLOB_STEPS_PER_UNIT));
  });

  describe("character classes (compiled: Latin-1 bitmap, merged ranges with binary search)", () => {
    it("a class weighs its search steps in the cost: 2 for one merged range, more for many disjoint ones", () => {
      const key = "k".repeat(4096);
      // "*[~~~...]": 4000 written characters merge into one range: star 1 + class (1 + 1).
      expect(compileKeyFilter(`*[${"~".repeat(4000)}]`).cost(key)).to.equal(1 + Math.floor((3 * 4096) / GLOB_STEPS_PER_UNIT));
      // 2000 disjoint code points: 1 + ceil(log2(2001)) = 12 steps per test.
      const wide = Array.from({ length: 2000 }, (_, i) => String.fromCodePoint(0x4e00 + 2 * i)).join("");
      expect(compileKeyFilter(`*[${wide}]`).cost(key)).to.equal(1 + Math.floor((13 * 4096) / GLOB_STEPS_PER_UNIT));
    });

    it("sorts and merges overlapping and adjacent ranges", () => {
      expect(Array.from(compileClass(false, [[100, 120], [10, 20], [21, 30], [115, 200], [300, 300]]).ranges)).to.deep.equal([10, 30, 100, 200, 300, 300]);
    });

    it("answers like a linear scan of the written ranges for every code point around the edges (bitmap and binary search)", () => {
      const written: Array<[number, number]> = [[0x41, 0x5a], [0xff, 0x101], [0x3b1, 0x3c9], [0x1f600, 0x1f64f], [0x30, 0x30]];
      for (const negate of [false, true]) {
        const cls = compileClass(negate, written);
        for (const cp of [0, 0x2f, 0x30, 0x31, 0x40, 0x41, 0x5a, 0x5b, 0xfe, 0xff, 0x100, 0x101, 0x102, 0x3b0, 0x3b1, 0x3c9, 0x3ca, 0x1f5ff, 0x1f600, 0x1f64f, 0x1f650]) {
          const inside = written.some(([lo, hi]) => cp >= lo && cp <= hi);
          expect(classAccepts(cls, cp), `cp ${cp.toString(16)} negate ${negate}`).to.equal(inside !== negate);
        }
      }
    });

    it("a 4,000-character class against 200,000 keys takes well under a second (one lookup per character)", () => {
      const f = compileKeyFilter(`*[${"~".repeat(4000)}]`);
      const started = performance.now();
      let matched = 0;
      for (let i = 0; i < 200_000; i++) if (f.matches(`user:${String(i).padStart(6, "0")}:profile`)) matched++;
      expect(matched).to.equal(0);
      expect(performance.now() - started).to.be.lessThan(1000);
      expect(f.matches("user:~")).to.equal(true);
    });

    it("a class of astral code points matches by code point (surrogate pairs are one character)", () => {
      expect(globMatches("a[😀-😂]b", "a😁b")).to.equal(true);
      expect(globMatches("a[!😀-😂]b", "a😁b")).to.equal(false);
      expect(globMatches("*[😀]", "xx😀")).to.equal(true);
      expect(globMatches("?", "😀")).to.equal(true);
    });
  });
});
