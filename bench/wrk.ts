// The closed-loop load driver: wrk (Debian wrk 4.1) with bench/wrk.lua choosing random keys
// for a workload (measure.ts), and the parser of its text report.
import { fileURLToPath } from "node:url";
import type { Workload } from "./measure.js";
import { runTool, type Placement } from "./proc.js";

const SCRIPT = fileURLToPath(new URL("./wrk.lua", import.meta.url));

export interface WrkResult {
  /** Completed requests (all statuses) and the time they took. */
  readonly requests: number;
  readonly durationSeconds: number;
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly non2xx: number;
  readonly socketErrors: { readonly connect: number; readonly read: number; readonly write: number; readonly timeout: number };
}

const TIME_UNIT_MS: Readonly<Record<string, number>> = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

/** "842.00us", "1.37ms", "3.00s", "1.00m" (wrk's time format) in milliseconds. */
export function parseWrkTimeMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new Error(`not a wrk time: ${text}`);
  return Number(m[1]) * (TIME_UNIT_MS[m[2] as string] as number);
}

function field(text: string, re: RegExp, what: string): RegExpExecArray {
  const m = re.exec(text);
  if (!m) throw new Error(`wrk output has no ${what} (run with --latency?):\n${text}`);
  return m;
}

/** Parses the report wrk prints with --latency. */
export function parseWrk(text: string): WrkResult {
  const [, requests, duration] = field(text, /^\s*(\d+) requests in ([\d.]+\w+),/m, "request count");
  const [, opsPerSec] = field(text, /^Requests\/sec:\s+([\d.]+)/m, "Requests/sec");
  const [, maxLatency] = field(text, /^\s*Latency\s+\S+\s+\S+\s+(\S+)/m, "latency line");
  const [, p50] = field(text, /^\s*50%\s+(\S+)/m, "50% latency");
  const [, p99] = field(text, /^\s*99%\s+(\S+)/m, "99% latency");
  const non2xx = /^\s*Non-2xx or 3xx responses:\s+(\d+)/m.exec(text);
  const sock = /^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/m.exec(text);
  return {
    requests: Number(requests),
    durationSeconds: parseWrkTimeMs(duration as string) / 1000,
    opsPerSec: Number(opsPerSec),
    p50Ms: parseWrkTimeMs(p50 as string),
    p99Ms: parseWrkTimeMs(p99 as string),
    maxMs: parseWrkTimeMs(maxLatency as string),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: {
      connect: Number(sock?.[1] ?? 0),
      read: Number(sock?.[2] ?? 0),
      write: Number(sock?.[3] ?? 0),
      timeout: Number(sock?.[4] ?? 0),
    },
  };
}

export interface WrkLoad {
  readonly port: number;
  readonly workload: Workload;
  /** Keys are `<prefix>0` .. `<prefix><keys-1>` (`bench-` by default), picked at random for every request. */
  readonly keys: number;
  readonly valueBytes: number;
  readonly connections: number;
  readonly seconds: number;
  readonly token?: string;
  readonly placement: Placement;
}

export interface WrkRun extends WrkResult {
  /** Share of one core the load generator used (near 1: wrk itself may be the bottleneck). */
  readonly generatorCpuShare: number;
}

/** Runs wrk once (one thread: it has one core) and parses its report. */
export async function runWrk(load: WrkLoad, hz: number): Promise<WrkRun> {
  const args = [
    "-t1",
    `-c${load.connections}`,
    `-d${load.seconds}s`,
    "--timeout",
    "5s",
    "--latency",
    "-s",
    SCRIPT,
    `http://127.0.0.1:${load.port}`,
    "--",
    load.workload.method,
    String(load.keys),
    String(load.valueBytes),
    load.token ?? "",
    load.workload.prefix ?? "bench-",
    load.workload.suffix ?? "",
    load.workload.header ?? "",
  ];
  const run = await runTool(load.placement, "wrk", args, hz);
  if (run.code !== 0) throw new Error(`wrk exited with ${run.code}: ${run.stderr.trim() || run.stdout.trim()}`);
  return { ...parseWrk(run.stdout), generatorCpuShare: run.cpuSeconds / run.wallSeconds };
}
