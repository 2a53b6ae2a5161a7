// The open-loop load driver: h2load (Debian nghttp2-client) over HTTP/1.1 at a fixed request
// rate, with per-request latencies from its --log-file, and the parsers of its output.
//
// Why h2load and how: wrk keeps a fixed number of requests in flight (closed loop), so a slow
// answer slows the sender and hides itself. h2load --rps sends at a fixed rate per connection
// whatever the answers do. Its summary has no percentiles, but --log-file has one row per request
// (start time, status, duration), from which the p99 is computed here. Two details keep the
// schedule honest:
// - Client start times are spread over one send interval (-r N --rate-period 1ms), else every
//   connection's timer fires in the same millisecond and the server sees bursts of all of them.
// - HTTP/1.1 has one request in flight per connection: a request due while the previous one on
//   its connection is unanswered waits, and that wait is not in its latency. This only happens
//   after an answer slower than the per-connection send interval; an answer of D ms delays at
//   most floor(D / interval) requests of its connection. The figures count those requests and
//   give, beside the p99 of the log, a p99 bound that counts each of them as slower than every
//   answer (the worst their unknown true latency could do to the p99).
// - The per-connection rate is one h2load on one core can keep: every connection sends every
//   SEND_INTERVAL_MS. At 20 requests/s per connection (1,200 connections for 24,000 req/s) h2load
//   fell 12% short of the rate for the ceiling as for the node; at 50 per connection (480) it
//   keeps it. A figure is valid only when the rate sent was within RATE_KEPT_MIN of the rate asked.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { runTool, type Placement } from "./proc.js";
import { percentile } from "./stats.js";

export interface H2loadSummary {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly errored: number;
  readonly timeout: number;
  readonly status2xx: number;
  readonly reqPerSec: number;
}

function field(text: string, re: RegExp, what: string): RegExpExecArray {
  const m = re.exec(text);
  if (!m) throw new Error(`h2load output has no ${what}:\n${text}`);
  return m;
}

/** Parses the summary h2load prints at the end of a run. */
export function parseH2loadSummary(text: string): H2loadSummary {
  const [, reqPerSec] = field(text, /^finished in \S+, ([\d.]+) req\/s/m, "finished line");
  const [, total, , , succeeded, failed, errored, timeout] = field(
    text,
    /^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/m,
    "requests line",
  );
  const [, status2xx] = field(text, /^status codes: (\d+) 2xx/m, "status codes line");
  return {
    total: Number(total),
    succeeded: Number(succeeded),
    failed: Number(failed),
    errored: Number(errored),
    timeout: Number(timeout),
    status2xx: Number(status2xx),
    reqPerSec: Number(reqPerSec),
  };
}

/** One row of h2load's --log-file. */
export interface RequestRow {
  readonly startUs: number;
  readonly status: number;
  readonly durationUs: number;
}

/** Parses --log-file: tab-separated start (µs since the epoch), HTTP status, µs to the end of the response. */
export function parseH2loadLog(text: string): RequestRow[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [start, status, duration] = line.split("\t").map(Number);
      if (!Number.isFinite(start) || !Number.isFinite(status) || !Number.isFinite(duration)) throw new Error(`not an h2load log row: ${line}`);
      return { startUs: start as number, status: status as number, durationUs: duration as number };
    });
}

export interface OpenLoopFigures {
  readonly requests: number;
  readonly ratePerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly non2xx: number;
  /** Answers slower than the per-connection send interval (each may have delayed the next requests). */
  readonly slowerThanInterval: number;
  /** Requests that may have left late: floor(latency / interval) for each slower answer. */
  readonly mayHaveLeftLate: number;
  /** The p99 with the requests that may have left late counted as slower than every answer (Infinity when they are more than 1%). */
  readonly p99BoundMs: number;
}

/**
 * Latency figures of the requests that started inside the measured window: after `warmupMs` from
 * the first start, and before the last `tailMs` (where connections run out of requests one by one).
 */
export function openLoopFigures(rows: readonly RequestRow[], opts: { warmupMs: number; tailMs: number; intervalMs: number }): OpenLoopFigures {
  if (rows.length === 0) throw new Error("h2load logged no requests");
  // A loop, not Math.min(...rows): a run logs more rows than a call may have arguments.
  let first = Infinity;
  let last = -Infinity;
  for (const r of rows) {
    first = Math.min(first, r.startUs);
    last = Math.max(last, r.startUs);
  }
  const from = first + opts.warmupMs * 1000;
  const to = last - opts.tailMs * 1000;
  const inside = rows.filter((r) => r.startUs >= from && r.startUs < to);
  if (inside.length === 0 || to <= from) throw new Error("no request in the measured window: run longer");
  const latencies = inside.map((r) => r.durationUs / 1000).sort((a, b) => a - b);
  let late = 0;
  for (const l of latencies) if (l > opts.intervalMs) late += Math.floor(l / opts.intervalMs);
  // Worst case: the late requests are the fastest answers, and each was in truth slower than all.
  const rank = Math.max(1, Math.ceil(0.99 * latencies.length)) + late;
  return {
    requests: inside.length,
    ratePerSec: inside.length / ((to - from) / 1e6),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies[latencies.length - 1] as number,
    non2xx: inside.filter((r) => r.status < 200 || r.status > 299).length,
    slowerThanInterval: latencies.filter((l) => l > opts.intervalMs).length,
    mayHaveLeftLate: late,
    p99BoundMs: rank > latencies.length ? Number.POSITIVE_INFINITY : (latencies[rank - 1] as number),
  };
}

/** Time between two requests on one connection (50 per second); see the file comment. */
export const SEND_INTERVAL_MS = 20;
/** Below this share of the planned rate, the generator (or the server) did not keep the schedule. */
export const RATE_KEPT_MIN = 0.97;
/** Most connections h2load opens; past it, each connection sends more often. */
export const CLIENTS_MAX = 2000;

export interface OpenLoopPlan {
  readonly clients: number;
  readonly rpsPerClient: number;
  readonly intervalMs: number;
  /** Connections started per millisecond, so that their timers spread over one interval. */
  readonly startsPerMs: number;
  readonly rate: number;
  readonly requests: number;
}

/** Connections and per-connection rate for `rate` requests/s over `seconds` (warm-up included). */
export function openLoopPlan(rate: number, seconds: number): OpenLoopPlan {
  const wanted = Math.max(1, Math.round((rate * SEND_INTERVAL_MS) / 1000));
  const clients = Math.min(CLIENTS_MAX, wanted);
  const rpsPerClient = Math.max(1, Math.round(rate / clients));
  const intervalMs = 1000 / rpsPerClient;
  return {
    clients,
    rpsPerClient,
    intervalMs,
    startsPerMs: Math.max(1, Math.ceil(clients / intervalMs)),
    rate: clients * rpsPerClient,
    requests: Math.ceil(clients * rpsPerClient * seconds),
  };
}

export interface H2loadRun extends OpenLoopFigures {
  readonly plan: OpenLoopPlan;
  readonly summary: H2loadSummary;
  readonly generatorCpuShare: number;
}

/**
 * Sends GETs of random keys (`bench-0` .. `bench-<keys-1>`, a shuffled list each connection walks)
 * at a fixed rate for `warmupSeconds + seconds`, and reports the measured window.
 */
export async function runH2load(
  opts: { port: number; rate: number; seconds: number; warmupSeconds: number; keys: number; placement: Placement; random: () => number },
  hz: number,
): Promise<H2loadRun> {
  const plan = openLoopPlan(opts.rate, opts.warmupSeconds + opts.seconds);
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-h2load-"));
  try {
    const uris = Array.from({ length: opts.keys }, (_, i) => `http://127.0.0.1:${opts.port}/v1/cache/bench-${i}`);
    for (let i = uris.length - 1; i > 0; i--) {
      const j = Math.floor(opts.random() * (i + 1));
      [uris[i], uris[j]] = [uris[j] as string, uris[i] as string];
    }
    const uriFile = path.join(dir, "uris.txt");
    const logFile = path.join(dir, "requests.tsv");
    await writeFile(uriFile, uris.join("\n") + "\n");
    const args = ["--h1", "-t1", `-c${plan.clients}`, `--rps=${plan.rpsPerClient}`, `-r${plan.startsPerMs}`, "--rate-period=1ms", `-n${plan.requests}`, `--log-file=${logFile}`, "-i", uriFile];
    const run = await runTool(opts.placement, "h2load", args, hz);
    if (run.code !== 0) throw new Error(`h2load exited with ${run.code}: ${run.stderr.trim() || run.stdout.trim()}`);
    const summary = parseH2loadSummary(run.stdout);
    const figures = openLoopFigures(parseH2loadLog(await readFile(logFile, "utf8")), {
      warmupMs: opts.warmupSeconds * 1000,
      tailMs: plan.intervalMs,
      intervalMs: plan.intervalMs,
    });
    return { ...figures, plan, summary, generatorCpuShare: run.cpuSeconds / run.wallSeconds };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
