// Progress of a load: on a terminal a cli-progress bar (share of the file read, items, items/s,
// failures, ETA); otherwise one line every 5 s. Messages printed meanwhile (bad lines) go above
// the bar so it stays intact.
import cliProgress from "cli-progress";
import type { Io } from "../io.js";

/** Interval of the progress line when stderr is not a terminal (ms). */
export const PROGRESS_LINE_INTERVAL_MS = 5_000;
/** Redraw interval of the terminal bar (ms). */
const BAR_REDRAW_MS = 200;

export interface LoadCounters {
  /** Bytes of the input read so far. */
  bytes: number;
  items: number;
  stored: number;
  failed: number;
  badLines: number;
}

export interface Progress {
  update(): void;
  /** Prints a message without breaking the bar. */
  log(line: string): void;
  stop(): void;
}

function rate(c: LoadCounters, startedMs: number, nowMs: number): number {
  const s = (nowMs - startedMs) / 1000;
  return s > 0 ? Math.round(c.stored / s) : 0;
}

export function startProgress(io: Io, c: LoadCounters, totalBytes: number | undefined, startedMs: number): Progress {
  const stderr = io.stderr as NodeJS.WriteStream;
  if (io.stderr.isTTY) {
    const multi = new cliProgress.MultiBar(
      {
        stream: stderr,
        format: `load {bar} {percentage}% | {items} items | {rate} items/s | {failed} failed | {bad} bad lines | ETA {eta_formatted}`,
        barsize: 24,
        hideCursor: true,
        clearOnComplete: false,
        fps: 1000 / BAR_REDRAW_MS,
        etaBuffer: 50,
        forceRedraw: true,
      },
      cliProgress.Presets.shades_classic,
    );
    const total = totalBytes && totalBytes > 0 ? totalBytes : 1;
    const bar = multi.create(total, 0, { items: 0, rate: 0, failed: 0, bad: 0 });
    const payload = () => ({ items: c.items, rate: rate(c, startedMs, io.now()), failed: c.failed, bad: c.badLines });
    return {
      update: () => bar.update(totalBytes ? Math.min(c.bytes, total) : 0, payload()),
      log: (line) => multi.log(`${line}\n`),
      stop: () => {
        bar.update(totalBytes ? Math.min(c.bytes, total) : 0, payload());
        multi.stop();
      },
    };
  }
  const line = () => {
    const pct = totalBytes ? ` (${Math.floor((100 * c.bytes) / totalBytes)}% of the file)` : "";
    io.stderr.write(`hypercache: load: ${c.items} items, ${rate(c, startedMs, io.now())} items/s, ${c.stored} stored, ${c.failed} failed, ${c.badLines} bad lines${pct}\n`);
  };
  const cancel = io.every(PROGRESS_LINE_INTERVAL_MS, line);
  return {
    update: () => undefined,
    log: (l) => void io.stderr.write(`${l}\n`),
    stop: cancel,
  };
}
