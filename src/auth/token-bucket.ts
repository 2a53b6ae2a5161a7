// A token bucket (pure arithmetic on monotonic milliseconds): it holds at most `burst` tokens and
// refills at `ratePerS`. A request takes its cost when the bucket holds that much; a charge taken
// after the fact (the rest of a batch's cost, once its body is read) may leave it in debt, which
// later requests wait out.

export interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date, monotonic ms. */
  atMs: number;
}

/** A full bucket at `nowMs`. */
export function fullBucket(burst: number, nowMs: number): Bucket {
  return { tokens: burst, atMs: nowMs };
}

/** Brings the bucket up to `nowMs`: refills at the rate, never above the burst. */
export function refill(b: Bucket, nowMs: number, ratePerS: number, burst: number): void {
  const elapsed = nowMs - b.atMs;
  if (elapsed > 0) {
    b.tokens = Math.min(burst, b.tokens + (elapsed * ratePerS) / 1000);
    b.atMs = nowMs;
  }
}

/**
 * Takes `cost` tokens when the bucket holds them; returns 0 then, otherwise the milliseconds until
 * it will (the bucket is left unchanged).
 */
export function take(b: Bucket, cost: number, nowMs: number, ratePerS: number, burst: number): number {
  refill(b, nowMs, ratePerS, burst);
  if (b.tokens >= cost) {
    b.tokens -= cost;
    return 0;
  }
  return Math.ceil(((cost - b.tokens) * 1000) / ratePerS);
}

/** Takes `cost` tokens whatever the bucket holds (it may go negative: debt). */
export function charge(b: Bucket, cost: number, nowMs: number, ratePerS: number, burst: number): void {
  refill(b, nowMs, ratePerS, burst);
  b.tokens -= cost;
}

/** True when the bucket would be full at `nowMs` (it then carries no information). */
export function isFull(b: Bucket, nowMs: number, ratePerS: number, burst: number): boolean {
  return b.tokens + ((nowMs - b.atMs) * ratePerS) / 1000 >= burst;
}
