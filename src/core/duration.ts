// Duration strings: an integer or decimal followed by ms, s, m or h, Go-style compounds allowed
// ("1m30s", "1.5h", "200ms"). Results are whole milliseconds.

/** Largest accepted duration: about 292 years, far below 2^53 ms. */
export const MAX_DURATION_MS = 9_223_372_036_854;

/**
 * The longest delay Node's timers take, 2^31-1 ms (596h31m23s647ms, about 24.8 days): a longer
 * one runs after 1 ms, with only a TimeoutOverflowWarning. Every duration setting is at most this.
 */
export const TIMER_MAX_MS = 2_147_483_647;

const DIGIT_0 = 48;
const DIGIT_9 = 57;
const DOT = 46;

/** The index after the run of ASCII digits starting at `i` (`i` itself when there is none). */
function digitsEnd(text: string, i: number): number {
  let j = i;
  for (let c = text.charCodeAt(j); c >= DIGIT_0 && c <= DIGIT_9; c = text.charCodeAt(++j));
  return j;
}

/**
 * Parses a duration string into milliseconds, rounding to the nearest millisecond: one or more
 * parts `<digits>[.<digits>]<unit>`, unit `ms`, `s`, `m` or `h` (`ms` wins over `m` then `s`).
 * Returns undefined for anything malformed (empty, no unit, unknown unit, sign, spaces). A
 * scanner rather than a regular expression: lease reads parse two durations on the hot path.
 */
export function parseDurationMs(text: string): number | undefined {
  if (text.length === 0 || text.length > 64) return undefined;
  let total = 0;
  for (let i = 0; i < text.length; ) {
    let end = digitsEnd(text, i);
    if (end === i) return undefined;
    if (text.charCodeAt(end) === DOT) {
      const fraction = digitsEnd(text, end + 1);
      if (fraction === end + 1) return undefined;
      end = fraction;
    }
    const amount = Number(text.slice(i, end));
    const unit = text[end];
    if (unit === "m" && text[end + 1] === "s") {
      total += amount;
      i = end + 2;
    } else if (unit === "s" || unit === "m" || unit === "h") {
      total += amount * (unit === "s" ? 1000 : unit === "m" ? 60_000 : 3_600_000);
      i = end + 1;
    } else {
      return undefined;
    }
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
