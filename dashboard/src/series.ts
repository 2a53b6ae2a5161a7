// The Metrics view's data: per-second rates derived from consecutive heartbeat frames (each a
// /dist/metrics snapshot of counters), kept for 5 minutes in fixed-size ring buffers.

/** The rates shown: label and the counter (or counters, added) they come from. */
export const RATE_SERIES = [
  { label: "writes/s", metrics: ["dist.write.attempts"] },
  { label: "quorum failures/s", metrics: ["dist.write.quorum_failures"] },
  { label: "promotions/s", metrics: ["dist.write.forward_promotion"] },
  { label: "hints queued/s", metrics: ["dist.hinted.queued"] },
  { label: "read repairs/s", metrics: ["dist.read_repair"] },
  { label: "Merkle pulls/s", metrics: ["dist.merkle.keys_pulled"] },
  { label: "evictions/s", metrics: ["item_evicted_count"] },
] as const;

/** Samples kept: 5 minutes of 1-second heartbeats. */
export const HISTORY_SAMPLES = 300;

/** A fixed-capacity ring of numbers (oldest dropped first). */
export class Ring {
  private readonly buf: Float64Array;
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.buf = new Float64Array(capacity);
  }

  push(v: number): void {
    const end = (this.start + this.count) % this.capacity;
    this.buf[end] = v;
    if (this.count < this.capacity) this.count++;
    else this.start = (this.start + 1) % this.capacity;
  }

  get length(): number {
    return this.count;
  }

  /** Oldest first. */
  toArray(): number[] {
    const out = new Array<number>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.buf[(this.start + i) % this.capacity] as number;
    return out;
  }

  last(): number | undefined {
    return this.count === 0 ? undefined : this.buf[(this.start + this.count - 1) % this.capacity];
  }
}

/** The value of one series in a snapshot: the first of its counters present, else undefined. */
function valueOf(snapshot: Record<string, number>, metrics: readonly string[]): number | undefined {
  for (const m of metrics) if (typeof snapshot[m] === "number") return snapshot[m];
  return undefined;
}

/** Time (s) plus one ring per series. Rates need two snapshots; counter resets (a restart) give 0. */
export class RateHistory {
  readonly times = new Ring(HISTORY_SAMPLES);
  readonly series = RATE_SERIES.map(() => new Ring(HISTORY_SAMPLES));
  /** Series whose counter the node does not report. */
  readonly missing = new Set<string>();
  private prev: { atMs: number; snapshot: Record<string, number> } | undefined;

  add(atMs: number, snapshot: Record<string, number>): void {
    const prev = this.prev;
    this.prev = { atMs, snapshot };
    if (prev === undefined || atMs <= prev.atMs) return;
    const dt = (atMs - prev.atMs) / 1000;
    this.times.push(atMs / 1000);
    RATE_SERIES.forEach((s, i) => {
      const now = valueOf(snapshot, s.metrics);
      const before = valueOf(prev.snapshot, s.metrics);
      if (now === undefined) this.missing.add(s.label);
      const delta = now !== undefined && before !== undefined ? now - before : 0;
      this.series[i]!.push(delta >= 0 ? delta / dt : 0);
    });
  }

  /** Total over the kept window of series `i` (events, not per second). */
  windowTotal(i: number): number {
    const t = this.times.toArray();
    const v = this.series[i]!.toArray();
    let sum = 0;
    for (let k = 1; k < t.length; k++) sum += (v[k] as number) * ((t[k] as number) - (t[k - 1] as number));
    return sum;
  }
}
