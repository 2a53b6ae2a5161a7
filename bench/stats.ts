// The arithmetic of the report: medians, percentiles, and ratios of medians with their spread.

/** The median of `values` (the mean of the two middle values when the count is even). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The `q`-quantile (0..1) of values sorted ascending, by nearest rank: the smallest value with at
 * least q of all values at or below it (so the p99 of 100 values is the 99th, of 1000 the 990th).
 */
export function percentile(sortedAsc: readonly number[], q: number): number {
  if (sortedAsc.length === 0) throw new Error("percentile of no values");
  const rank = Math.max(1, Math.ceil(q * sortedAsc.length));
  return sortedAsc[Math.min(sortedAsc.length, rank) - 1] as number;
}

/** A gate figure: median(numerator) / median(denominator), with the per-round ratios it came from. */
export interface Ratio {
  readonly value: number;
  /** Lowest and highest of the per-round ratios numerator[i] / denominator[i]. */
  readonly min: number;
  readonly max: number;
  readonly perRound: readonly number[];
}

/** Ratio of the medians of paired per-round figures (round i of one side against round i of the other). */
export function ratioOfMedians(numerator: readonly number[], denominator: readonly number[]): Ratio {
  if (numerator.length !== denominator.length || numerator.length === 0) {
    throw new Error(`ratio needs paired rounds, got ${numerator.length} and ${denominator.length}`);
  }
  const perRound = numerator.map((n, i) => n / (denominator[i] as number));
  return { value: median(numerator) / median(denominator), min: Math.min(...perRound), max: Math.max(...perRound), perRound };
}
