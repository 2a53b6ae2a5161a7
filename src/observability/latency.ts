// Latency summaries of client operations over a sliding window of recent samples: a fixed ring
// buffer per operation, so recording is one array write and memory never grows.

import { LATENCY_WINDOW_OPS } from "../core/limits.js";

const WINDOW = LATENCY_WINDOW_OPS;

export interface LatencySummary {
  readonly count: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
}

export class LatencyWindow {
  private readonly samples = new Float64Array(WINDOW);
  private total = 0;

  record(ms: number): void {
    this.samples[this.total % WINDOW] = ms;
    this.total++;
  }

  /** Operations ever recorded, and the 50th and 99th percentiles of the recent window. */
  summary(): LatencySummary {
    const n = Math.min(this.total, WINDOW);
    if (n === 0) return { count: 0, p50_ms: 0, p99_ms: 0 };
    const sorted = this.samples.slice(0, n).sort();
    const at = (q: number) => round(sorted[Math.min(n - 1, Math.ceil(q * n) - 1)] as number);
    return { count: this.total, p50_ms: at(0.5), p99_ms: at(0.99) };
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** The latency windows of the client operations reported by /stats. */
export class OperationLatencies {
  readonly get = new LatencyWindow();
  readonly set = new LatencyWindow();
  readonly delete = new LatencyWindow();
}
