import { expect } from "chai";
import fc from "fast-check";
import { formatDurationMs, MAX_DURATION_MS, parseDurationMs } from "../../../src/core/duration.js";

/** The regular-expression parser the scanner replaced: the reference for its answers. */
function byRegex(text: string): number | undefined {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (text.length === 0 || text.length > 64 || !/^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * (units[m[2] as string] as number);
  const ms = Math.round(total);
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? ms : undefined;
}

describe("core/duration", () => {
  describe("parseDurationMs", () => {
    const accepted: Array<[string, number]> = [
      ["200ms", 200],
      ["0ms", 0],
      ["0s", 0],
      ["1s", 1_000],
      ["30s", 30_000],
      ["1m", 60_000],
      ["10m", 600_000],
      ["1h", 3_600_000],
      ["1m30s", 90_000],
      ["1h2m3s4ms", 3_723_004],
      ["2h30m", 9_000_000],
      ["1.5h", 5_400_000],
      ["0.5s", 500],
      ["1.25s", 1_250],
      ["0.1s", 100],
      ["1.5m", 90_000],
      ["007s", 7_000],
      ["1s500ms", 1_500],
    ];
    for (const [text, ms] of accepted) {
      it(`parses ${JSON.stringify(text)} as ${ms} ms`, () => {
        expect(parseDurationMs(text)).to.equal(ms);
      });
    }

    it("answers as the regular expression it replaced, for any string of digits, dots, unit letters and a few others", () => {
      const chars = fc.constantFrom(..."0123456789.mshx -+".split(""));
      fc.assert(
        fc.property(fc.string({ unit: chars, maxLength: 70 }), (text) => {
          expect(parseDurationMs(text), JSON.stringify(text)).to.equal(byRegex(text));
        }),
        { numRuns: 20_000 },
      );
      for (const text of ["1ms1m", "1m1ms", "1.s", ".5s", "1..5s", "1.5.5s", "99999999999999999999h", "1mss", "s", "ms", "1", "1.5"]) {
        expect(parseDurationMs(text), text).to.equal(byRegex(text));
      }
    });

    it("rounds fractional milliseconds to the nearest whole millisecond", () => {
      expect(parseDurationMs("1.5ms")).to.equal(2);
      expect(parseDurationMs("1.4ms")).to.equal(1);
      expect(parseDurationMs("0.0004s")).to.equal(0);
      expect(parseDurationMs("0.0006s")).to.equal(1);
    });

    it("always returns whole milliseconds", () => {
      for (const text of ["0.3333s", "1.7m", "0.001h", "2.5ms"]) {
        const ms = parseDurationMs(text);
        expect(ms, text).to.be.a("number");
        expect(Number.isInteger(ms), text).to.equal(true);
      }
    });

    const rejected: Array<[string, string]> = [
      ["", "empty"],
      ["5", "no unit"],
      ["0", "bare zero without unit"],
      ["-1s", "negative sign"],
      ["+1s", "plus sign"],
      ["1d", "unknown unit d"],
      ["1w", "unknown unit w"],
      ["1us", "unknown unit us"],
      ["1ns", "unknown unit ns"],
      [" 1s", "leading space"],
      ["1s ", "trailing space"],
      ["1 s", "space between number and unit"],
      ["1S", "upper-case unit"],
      ["1MS", "upper-case ms"],
      ["1H", "upper-case h"],
      ["s", "unit without number"],
      ["ms", "unit without number"],
      [".5s", "decimal without leading digit"],
      ["1.s", "decimal point without fraction digits"],
      ["1..5s", "two decimal points"],
      ["1e3ms", "exponent notation"],
      ["1s1", "trailing number without unit"],
      ["1m 30s", "space inside a compound"],
      ["1,5s", "comma decimal separator"],
      ["Infinityms", "Infinity"],
      ["NaNs", "NaN"],
      ["0x10s", "hex digits"],
      ["1s\n", "trailing newline"],
      ["１s", "full-width digit"],
    ];
    for (const [text, why] of rejected) {
      it(`rejects ${JSON.stringify(text)} (${why})`, () => {
        expect(parseDurationMs(text)).to.equal(undefined);
      });
    }

    it("rejects durations above MAX_DURATION_MS (overflow)", () => {
      expect(parseDurationMs("9999999999999999h")).to.equal(undefined);
      expect(parseDurationMs(`${MAX_DURATION_MS + 1}ms`)).to.equal(undefined);
      expect(parseDurationMs(`${"9".repeat(40)}s`)).to.equal(undefined);
    });

    it("accepts exactly MAX_DURATION_MS, which stays a safe integer", () => {
      expect(parseDurationMs(`${MAX_DURATION_MS}ms`)).to.equal(MAX_DURATION_MS);
      expect(Number.isSafeInteger(MAX_DURATION_MS)).to.equal(true);
    });

    it("rejects a text longer than 64 characters even if well formed", () => {
      const long = "1ms".repeat(22); // 66 characters
      expect(long.length).to.be.greaterThan(64);
      expect(parseDurationMs(long)).to.equal(undefined);
      const ok = "1ms".repeat(21); // 63 characters
      expect(parseDurationMs(ok)).to.equal(21);
    });

    it("is stateless across calls (a global regex does not carry lastIndex over)", () => {
      for (let i = 0; i < 5; i++) {
        expect(parseDurationMs("1m30s")).to.equal(90_000);
        expect(parseDurationMs("2s")).to.equal(2_000);
      }
    });
  });

  describe("formatDurationMs", () => {
    const cases: Array<[number, string]> = [
      [0, "0s"],
      [1, "1ms"],
      [200, "200ms"],
      [1_000, "1s"],
      [1_500, "1s500ms"],
      [60_000, "1m"],
      [90_000, "1m30s"],
      [3_600_000, "1h"],
      [5_400_000, "1h30m"],
      [3_723_004, "1h2m3s4ms"],
      [86_400_000, "24h"],
      [600_000, "10m"],
    ];
    for (const [ms, text] of cases) {
      it(`formats ${ms} ms as ${JSON.stringify(text)}`, () => {
        expect(formatDurationMs(ms)).to.equal(text);
      });
    }

    it("round-trips through parseDurationMs for many whole-millisecond values", () => {
      const values = [0, 1, 999, 1_000, 1_001, 59_999, 60_000, 61_000, 3_599_999, 3_600_000, 3_600_001, 123_456_789, MAX_DURATION_MS];
      for (let x = 7; x < 10_000_000; x = x * 3 + 11) values.push(x);
      for (const ms of values) {
        expect(parseDurationMs(formatDurationMs(ms)), `${ms}`).to.equal(ms);
      }
    });

    it("rounds a fractional input to whole milliseconds", () => {
      expect(formatDurationMs(1_499.6)).to.equal("1s500ms");
    });

    it("gives a parseable duration (\"0s\") for an input that rounds down to zero", () => {
      // formatDurationMs(0.4) rounds to 0 ms and must still produce a valid duration.
      expect(formatDurationMs(0.4)).to.equal("0s");
    });
  });
});
