// One metrics registry per node: plain numbers in a Float64Array, cheap to bump on hot paths.
// /dist/metrics, the SSE heartbeat and the OpenTelemetry mirror all read from here.
import { COUNTERS, GAUGES, type CounterName, type GaugeName, type MetricName } from "./metric-names.js";

const NAMES: readonly MetricName[] = [...COUNTERS, ...GAUGES];
const INDEX: ReadonlyMap<MetricName, number> = new Map(NAMES.map((n, i) => [n, i]));

export class Metrics {
  private readonly values = new Float64Array(NAMES.length);

  /** Adds `by` (default 1) to a counter. */
  inc(name: CounterName, by = 1): void {
    this.values[INDEX.get(name) as number]! += by;
  }

  /** Sets a gauge. */
  set(name: GaugeName, value: number): void {
    this.values[INDEX.get(name) as number] = value;
  }

  /** Adds `by` (may be negative) to a gauge. */
  add(name: GaugeName, by: number): void {
    this.values[INDEX.get(name) as number]! += by;
  }

  get(name: MetricName): number {
    return this.values[INDEX.get(name) as number] as number;
  }

  /** Every metric by full name, in a fixed order. */
  snapshot(): Record<MetricName, number> {
    const out = {} as Record<MetricName, number>;
    for (let i = 0; i < NAMES.length; i++) out[NAMES[i] as MetricName] = this.values[i] as number;
    return out;
  }

  static names(): readonly MetricName[] {
    return NAMES;
  }
}
