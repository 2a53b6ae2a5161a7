// Histograms cheap enough for the hot request path: fixed bucket boundaries, one series per
// attribute set created once and kept by its caller, so recording a value is a binary search
// and a few additions, with no allocation and no attribute hashing. The OpenTelemetry mirror
// reads them at collection time (explicit-bucket histogram points, cumulative).

/** Attribute values of a series (OpenTelemetry attributes, Prometheus labels). */
export type Attributes = Readonly<Record<string, string | number>>;

/**
 * Request durations in seconds: the OpenTelemetry HTTP semantic-convention boundaries, with
 * finer ones below 5 ms because a cache answers most requests in well under a millisecond.
 */
export const DURATION_BUCKETS_S: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
]);

/** One attribute set of a histogram: bucket counts (n boundaries + 1), sum, count, min, max. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;

  constructor(
    readonly attributes: Attributes,
    private readonly boundaries: Float64Array,
  ) {
    this.counts = new Float64Array(boundaries.length + 1);
  }

  /** Adds one value: it lands in the first bucket whose upper bound is at or above it. */
  record(value: number): void {
    const b = this.boundaries;
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (value <= (b[mid] as number)) hi = mid;
      else lo = mid + 1;
    }
    this.counts[lo]! += 1;
    this.sum += value;
    this.count++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
}

/** A histogram instrument: its boundaries and the series created so far. */
export class Histogram {
  private readonly bounds: Float64Array;
  private readonly all: HistogramSeries[] = [];

  constructor(boundaries: readonly number[] = DURATION_BUCKETS_S) {
    this.bounds = Float64Array.from(boundaries);
  }

  get boundaries(): readonly number[] {
    return [...this.bounds];
  }

  /** Every series, in creation order. */
  get series(): readonly HistogramSeries[] {
    return this.all;
  }

  /** A new series for `attributes`; callers keep it (this does not look for an existing one). */
  add(attributes: Attributes): HistogramSeries {
    const s = new HistogramSeries(Object.freeze({ ...attributes }), this.bounds);
    this.all.push(s);
    return s;
  }

  /** Drops series; their callers must not record into them again. */
  remove(gone: ReadonlySet<HistogramSeries>): void {
    if (gone.size === 0) return;
    const kept = this.all.filter((s) => !gone.has(s));
    this.all.length = 0;
    this.all.push(...kept);
  }
}

/** Series of one histogram keyed by a string the caller builds (off the hot path). */
export class KeyedHistogram {
  private readonly byKey = new Map<string, HistogramSeries>();

  constructor(readonly histogram: Histogram) {}

  series(key: string, attributes: () => Attributes): HistogramSeries {
    let s = this.byKey.get(key);
    if (s === undefined) {
      s = this.histogram.add(attributes());
      this.byKey.set(key, s);
    }
    return s;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Drops the series whose attributes match (a departed peer's, say); they are not exported again. */
  removeWhere(match: (attributes: Attributes) => boolean): void {
    const gone = new Set<HistogramSeries>();
    for (const [key, s] of this.byKey) {
      if (!match(s.attributes)) continue;
      gone.add(s);
      this.byKey.delete(key);
    }
    this.histogram.remove(gone);
  }
}
