// Process control for the benchmark: servers and load generators started pinned to one core
// (taskset), their CPU time and memory read from /proc, and the check that the tools exist.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import path from "node:path";

/** CPU time of a process in clock ticks, from /proc/<pid>/stat (utime and stime, fields 14 and 15). */
export interface CpuTicks {
  readonly utime: number;
  readonly stime: number;
}

/**
 * Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold
 * spaces and parentheses, so fields are counted from the last ")".
 */
export function parseProcStat(text: string): CpuTicks {
  const close = text.lastIndexOf(")");
  if (close < 0) throw new Error(`not a /proc/<pid>/stat line: ${text.slice(0, 80)}`);
  // After ")": field 3 (state) is index 0, so utime (field 14) is index 11 and stime index 12.
  const fields = text.slice(close + 2).trim().split(/\s+/);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) throw new Error(`no utime/stime in /proc/<pid>/stat: ${text.slice(0, 80)}`);
  return { utime, stime };
}

/** Resident set size in bytes from the VmRSS line of /proc/<pid>/status. */
export function parseVmRssBytes(text: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text);
  if (!m) throw new Error("no VmRSS line in /proc/<pid>/status");
  return Number(m[1]) * 1024;
}

/** CPU microseconds between two readings, at `hz` clock ticks per second. */
export function cpuMicrosBetween(before: CpuTicks, after: CpuTicks, hz: number): number {
  return ((after.utime + after.stime - before.utime - before.stime) / hz) * 1e6;
}

/** Clock ticks per second of /proc figures (`getconf CLK_TCK`, 100 on Linux x86). */
export function clockTicksPerSecond(): number {
  const hz = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  if (!Number.isInteger(hz) || hz <= 0) throw new Error(`getconf CLK_TCK gave ${hz}`);
  return hz;
}

export function cpuTicks(pid: number): CpuTicks {
  return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

export function rssBytes(pid: number): number {
  return parseVmRssBytes(readFileSync(`/proc/${pid}/status`, "utf8"));
}

/** Where a process runs: on one core (`taskset -c <core>`), or wherever the kernel puts it. */
export type Placement = { core: number } | "unpinned";

function command(placement: Placement, file: string, args: readonly string[]): [string, string[]] {
  // taskset execs the command, so the child's pid is the pid of the pinned program itself.
  return placement === "unpinned" ? [file, [...args]] : ["taskset", ["-c", String(placement.core), file, ...args]];
}

/** A long-running child (a server under test). */
export interface Proc {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Kills the process (SIGKILL: every round starts a fresh one) and waits for its exit. */
  stop(): Promise<void>;
}

/** Starts `node <args>`; stdout is dropped (the node's JSON log), stderr shows crashes. */
export function startNodeProcess(placement: Placement, args: readonly string[], env: Record<string, string>): Proc {
  const [file, argv] = command(placement, process.execPath, args);
  const child = spawn(file, argv, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "ignore", "inherit"] });
  if (child.pid === undefined) throw new Error(`could not start ${file}`);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    pid: child.pid,
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** How long a tool ran and how busy it kept its core: a saturated load generator caps the figure. */
export interface ToolRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly wallSeconds: number;
  /** Approximate: CPU of the tool as last sampled before it exited (sampled every 100 ms). */
  readonly cpuSeconds: number;
}

const TOOL_CPU_SAMPLE_MS = 100;

/** Runs a tool to completion, sampling its CPU time from /proc while it runs. */
export function runTool(placement: Placement, file: string, args: readonly string[], hz: number): Promise<ToolRun> {
  const [bin, argv] = command(placement, file, args);
  const started = performance.now();
  const child = spawn(bin, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  let last: CpuTicks = { utime: 0, stime: 0 };
  const sample = () => {
    try {
      if (child.pid !== undefined) last = cpuTicks(child.pid);
    } catch {
      // The process has just exited: keep the previous sample.
    }
  };
  const sampler = setInterval(sample, TOOL_CPU_SAMPLE_MS);
  return new Promise((resolve, reject) => {
    child.once("error", (err) => {
      clearInterval(sampler);
      reject(err);
    });
    child.once("close", (code) => {
      clearInterval(sampler);
      const cpuSeconds = (last.utime + last.stime) / hz;
      resolve({ code: code ?? -1, stdout, stderr, wallSeconds: (performance.now() - started) / 1000, cpuSeconds });
    });
  });
}

/** Where each missing tool comes from (Debian packages). */
export const TOOL_PACKAGES: Readonly<Record<string, string>> = { wrk: "wrk", cc: "gcc", taskset: "util-linux", getconf: "libc-bin" };

/** The tools of `names` not found as executables on `searchPath` (a PATH value). */
export function missingTools(names: readonly string[], searchPath: string): string[] {
  const found = (name: string) =>
    searchPath.split(path.delimiter).some((dir) => {
      try {
        accessSync(path.join(dir, name), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return names.filter((n) => !found(n));
}
