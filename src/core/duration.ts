// Duration strings: an integer or decimal followed by ms, s, m or h, Go-style compounds allowed
// ("1m30s", "1.5h", "200ms"). Results are whole milliseconds.

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 });
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Largest accepted duration: about 292 years, far below 2^53 ms. */
export const MAX_DURATION_MS = 9_223_372_036_854;

/**
 * Parses a duration string into milliseconds, rounding to the nearest millisecond.
 * Returns undefined for anything malformed (empty, no unit, unknown unit, sign, spaces).
 */
export function parseDurationMs(text: string): number | undefined {
  if (text.length === 0 || text.length > 64 || !WHOLE.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(PART)) {
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  const ms = Math.round(total);
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? ms : undefined;
}

/** Formats milliseconds as the shortest exact duration string ("1m30s", "200ms", "0s"). */
export function formatDurationMs(ms: number): string {
  let rest = Math.round(ms);
  if (!(rest > 0)) return "0s";
  let out = "";
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  if (rest > 0) out += `${rest}ms`;
  return out;
}
