// Time-to-live values: a number of milliseconds or a duration string as the server accepts it (an
// integer or decimal followed by ms, s, m or h; compounds such as "1m30s"). The CLI's --ttl uses
// the same parser.

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 });
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Longest TTL the server accepts: 2^63 ns, about 292 years (ms). */
export const TTL_MAX_MS = 9_223_372_036_854;

/** A TTL: milliseconds, or a duration string such as "30s", "5m" or "1m30s". */
export type Ttl = number | string;

/** Milliseconds of a duration string, rounded; undefined when malformed. */
export function parseDurationMs(text: string): number | undefined {
  if (text.length === 0 || text.length > 64 || !WHOLE.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(PART)) total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  const ms = Math.round(total);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The TTL in whole milliseconds; a TypeError when it is malformed, zero, negative or too long. */
export function ttlToMs(ttl: Ttl): number {
  const ms = typeof ttl === "number" ? ttl : parseDurationMs(ttl);
  if (ms === undefined || !Number.isInteger(ms) || ms <= 0 || ms > TTL_MAX_MS) {
    throw new TypeError(`invalid ttl ${JSON.stringify(ttl)}: expected a positive whole number of milliseconds or a duration such as 30s, 5m or 1m30s`);
  }
  return ms;
}
