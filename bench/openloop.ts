// The open-loop load driver of the p99 part: bench/openloop.c (a small C program, built here
// with the system C compiler on first use), GETs at a fixed rate with each latency counted from
// when its request was due. See the comment at the top of openloop.c for the schedule and why
// neither wrk (closed loop) nor h2load (coordinated omission, and too slow on one core) will do.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runTool, type Placement } from "./proc.js";

const SOURCE = fileURLToPath(new URL("./openloop.c", import.meta.url));

/** What openloop prints (one JSON line): the requests due in the measured window. */
export interface OpenLoopRun {
  readonly rate: number;
  readonly connections: number;
  readonly seconds: number;
  /** Requests due in the measured window (the schedule's count). */
  readonly due: number;
  /** Of those, the ones sent. */
  readonly sent: number;
  /** Of those, the ones answered (latency recorded). */
  readonly answered: number;
  /** Non-2xx answers over the whole run (warm-up included). */
  readonly non2xx: number;
  /** Requests that could not be written, or whose connection the server closed. */
  readonly errors: number;
  /** Requests of the window still unanswered 2 s after the schedule ended. */
  readonly timeouts: number;
  /** Requests of the window never sent: their connection was still waiting when the run ended. */
  readonly unsent: number;
  readonly reconnects: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  /** The generator's own CPU time over the measured window / its wall time (getrusage). */
  readonly generatorCpuShare: number;
}

const NUMBER_FIELDS = ["rate", "connections", "seconds", "due", "sent", "answered", "non2xx", "errors", "timeouts", "unsent", "reconnects", "p50Ms", "p90Ms", "p99Ms", "p999Ms", "maxMs", "generatorCpuShare"] as const;

/** Parses openloop's output line; throws on anything else. */
export function parseOpenLoopOutput(text: string): OpenLoopRun {
  const line = text.trim().split("\n").pop() ?? "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new Error(`openloop printed no result line: ${text.slice(0, 200)}`);
  }
  const o = parsed as Record<string, unknown>;
  for (const f of NUMBER_FIELDS) if (typeof o[f] !== "number" || !Number.isFinite(o[f])) throw new Error(`openloop result has no number ${f}: ${line}`);
  return o as unknown as OpenLoopRun;
}

/**
 * The path of the built generator: compiled once per source version into the temp directory
 * (`cc -O2`), so a changed openloop.c is rebuilt and an unchanged one is not.
 */
export function buildOpenLoop(): string {
  const source = readFileSync(SOURCE);
  const digest = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const dir = path.join(os.tmpdir(), "hypercache-bench");
  const bin = path.join(dir, `openloop-${digest}`);
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const partial = `${bin}.${process.pid}`;
  try {
    execFileSync("cc", ["-O2", "-Wall", "-o", partial, SOURCE], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim().split("\n")[0] ?? String(err);
    throw new Error(`could not build bench/openloop.c with cc (install with \`apt-get install gcc libc6-dev\`): ${why}`);
  }
  renameSync(partial, bin);
  return bin;
}

export interface OpenLoopOptions {
  readonly port: number;
  readonly rate: number;
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly keys: number;
  readonly placement: Placement;
  readonly seed: number;
}

/** GETs of `bench-<n>` (n random below `keys`) at `rate` per second; see openloop.c. */
export async function runOpenLoop(bin: string, o: OpenLoopOptions, hz: number): Promise<OpenLoopRun> {
  const args = [o.port, o.rate, o.connections, o.seconds, o.warmupSeconds, o.keys, "bench-", o.seed].map(String);
  const run = await runTool(o.placement, bin, args, hz);
  if (run.code !== 0) throw new Error(`openloop exited with ${run.code}: ${run.stderr.trim() || run.stdout.trim()}`);
  return parseOpenLoopOutput(run.stdout);
}
