// Runtime figures of the process, from node:perf_hooks and node:v8: event-loop delay over the
// last window (percentiles, seconds), event-loop utilization, heap and memory, CPU time, and
// garbage collections (v8js.gc.duration by kind). Sampling starts with the node and stops with
// it; nothing runs at import time.
import { constants, monitorEventLoopDelay, performance, PerformanceObserver, type IntervalHistogram } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import type { TimerHandle, Timers } from "../core/clock.js";
import { Histogram, type HistogramSeries } from "./histogram.js";

/** The window over which event-loop delay percentiles are reported, ms. */
export const EVENT_LOOP_WINDOW_MS = 10_000;
/**
 * Sampling interval of the event-loop delay monitor, ms. Each sample wakes the process: at
 * Node's default of 10 ms an idle node woke about 130 times a second, and on a machine whose
 * cores the nodes share, the idle nodes' wake-ups made the busy one's work dearer (3 nodes, GET
 * ONE through one: its CPU per request was 1.07-1.13 x one node's in four runs at 10 ms,
 * 0.95-1.06 x at 50 and 100 ms). At 50 ms a 10 s window still holds 200 samples.
 */
export const EVENT_LOOP_RESOLUTION_MS = 50;
const EVENT_LOOP_RESOLUTION_NS = EVENT_LOOP_RESOLUTION_MS * 1e6;
/**
 * How long after a full collection the ArrayBuffer figure is read, ms: long enough for V8's
 * concurrent sweeper to free the dead buffers (a few ms), short enough that little new garbage
 * has been allocated.
 */
const ARRAY_BUFFERS_SETTLE_MS = 100;
/**
 * The event-loop delay of a monitor's samples, seconds (0 without samples). monitorEventLoopDelay records the whole
 * time between samples, `intervalNs` included (an idle loop reads about the interval): the delay
 * is what passes it.
 */
export function delayOf(h: Pick<IntervalHistogram, "count" | "min" | "max" | "mean" | "percentile">, intervalNs: number): EventLoopDelay {
  // no sample at all (the loop was held for the whole window: max tells it next window)
  const s = (ns: number) => (h.count > 0 && Number.isFinite(ns) ? Math.max(0, ns - intervalNs) / 1e9 : 0);
  return { min: s(h.min), max: s(h.max), mean: s(h.mean), p50: s(h.percentile(50)), p90: s(h.percentile(90)), p99: s(h.percentile(99)) };
}

/** GC pause boundaries, seconds. */
const GC_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** Event-loop delay of the last complete window, seconds. */
export interface EventLoopDelay {
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

const GC_KINDS: ReadonlyArray<[number, string]> = [
  [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"],
];

export class RuntimeMetrics {
  readonly gc = new Histogram(GC_BUCKETS_S);
  private readonly gcByKind = new Map<number, HistogramSeries>();
  private monitor: IntervalHistogram | undefined;
  private observer: PerformanceObserver | undefined;
  private timer: TimerHandle | undefined;
  private lastDelay: EventLoopDelay = { min: 0, max: 0, mean: 0, p50: 0, p90: 0, p99: 0 };
  private lastUtilization = performance.eventLoopUtilization();
  /**
   * V8 heap in use just after the last full (mark-compact) collection, bytes: the heap's live
   * size. Heap in use between collections swings with garbage (30-110 MiB from one 10 s sample to
   * the next under the soak), so a leak shows here and not in a single reading of it.
   * 0 before the first full collection.
   */
  private heapLive = 0;
  /**
   * Bytes of ArrayBuffers (Buffers, typed arrays) just after the last full collection. Like the
   * heap, they hold garbage until a collection frees the objects that own them: V8 lets memory
   * outside its heap grow by up to 64 MiB before it collects (the soak saw 80 to 130 MiB from one
   * sample to the next), so a leak shows here and not in a single reading of it. Read from
   * process.memoryUsage().arrayBuffers ARRAY_BUFFERS_SETTLE_MS after the collection: V8 frees
   * dead buffers on a concurrent sweeper after the collection ends (and its external_memory
   * counter lags until a later allocation), so a reading in the GC observer still counts them.
   * 0 before the first full collection.
   */
  private arrayBuffersLive = 0;
  private arrayBuffersRead: TimerHandle | undefined;

  start(timers: Timers): void {
    if (this.monitor) return;
    this.monitor = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.monitor.enable();
    this.timer = timers.every(EVENT_LOOP_WINDOW_MS, () => this.rotate());
    this.observer = new PerformanceObserver((list) => {
      let major = false;
      for (const e of list.getEntries()) {
        const kind = ((e as { detail?: { kind?: number } }).detail)?.kind ?? 0;
        this.gcSeries(kind).record(e.duration / 1000);
        major ||= kind === constants.NODE_PERFORMANCE_GC_MAJOR;
      }
      // Read once per batch of entries, just after a full collection: what the heap and the
      // memory its objects own outside it hold alive.
      if (!major) return;
      this.heapLive = getHeapStatistics().used_heap_size;
      // One reading pending at a time: re-arming on every collection would put it off for as long
      // as full collections come less than ARRAY_BUFFERS_SETTLE_MS apart (a heap near its limit).
      if (this.arrayBuffersRead !== undefined) return;
      this.arrayBuffersRead = timers.after(ARRAY_BUFFERS_SETTLE_MS, () => {
        this.arrayBuffersRead = undefined;
        this.arrayBuffersLive = process.memoryUsage().arrayBuffers;
      });
    });
    this.observer.observe({ entryTypes: ["gc"] });
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.monitor?.disable();
    this.monitor = undefined;
    this.observer?.disconnect();
    this.observer = undefined;
    this.arrayBuffersRead?.cancel();
    this.arrayBuffersRead = undefined;
  }

  /** Event-loop delay percentiles of the last window (zero before the first window ends). */
  get eventLoopDelay(): EventLoopDelay {
    return this.lastDelay;
  }

  /** Share of time the event loop was busy since the previous call (0 to 1). */
  eventLoopUtilization(): number {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, this.lastUtilization).utilization;
    this.lastUtilization = now;
    return Number.isFinite(u) ? u : 0;
  }

  /** Heap and memory figures, bytes. */
  memory(): { heapUsed: number; heapLive: number; heapTotal: number; heapLimit: number; external: number; arrayBuffers: number; arrayBuffersLive: number; rss: number } {
    const h = getHeapStatistics();
    const m = process.memoryUsage();
    return { heapUsed: h.used_heap_size, heapLive: this.heapLive, heapTotal: h.total_heap_size, heapLimit: h.heap_size_limit, external: m.external, arrayBuffers: m.arrayBuffers, arrayBuffersLive: this.arrayBuffersLive, rss: m.rss };
  }

  /** CPU time used by the process, seconds. */
  cpu(): { user: number; system: number } {
    const c = process.cpuUsage();
    return { user: c.user / 1e6, system: c.system / 1e6 };
  }

  private rotate(): void {
    const m = this.monitor;
    if (!m) return;
    this.lastDelay = delayOf(m, EVENT_LOOP_RESOLUTION_NS);
    m.reset();
  }

  private gcSeries(kind: number): HistogramSeries {
    let series = this.gcByKind.get(kind);
    if (!series) {
      series = this.gc.add({ "v8js.gc.type": GC_KINDS.find(([k]) => k === kind)?.[1] ?? "other" });
      this.gcByKind.set(kind, series);
    }
    return series;
  }
}
