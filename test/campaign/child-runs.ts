// Runs a campaign's runs as processes, each in its own process group (so a Ctrl-C reaches the
// campaign, not the run), with its output in <dir>/run.log. On timeout or stop: SIGINT to the run,
// then SIGKILL to its group after the grace; when the run ends, whatever it left in its group (a
// node it did not stop) is killed too. `killNow` kills the group of the run in progress at once
// (a second Ctrl-C).
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import path from "node:path";
import type { ChildOutcome } from "./campaign.js";
import type { RunPlan } from "./plan.js";

const TAIL_BYTES = 4_096;

export interface ChildRunsOptions {
  /** The folder runs start in (the repository root). */
  readonly cwd: string;
  /** After SIGINT, how long a run has to clean up (chaos removes its namespaces) before SIGKILL. */
  readonly graceMs: number;
}

/** The last non-empty line of a file (from its last 4 KiB). */
export function lastLine(file: string): string {
  const size = statSync(file).size;
  const length = Math.min(size, TAIL_BYTES);
  const buf = Buffer.alloc(length);
  const fd = openSync(file, "r");
  try {
    readSync(fd, buf, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  const lines = buf.toString("utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines[lines.length - 1] ?? "";
}

/** SIGKILL to process group `pgid`; nothing when it is gone already. */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // the group is gone already
  }
}

export class ChildRuns {
  /** Process groups of the runs under way (one at a time in a campaign). */
  private readonly groups = new Set<number>();

  constructor(private readonly options: ChildRunsOptions) {}

  /** Kills every run under way and whatever is in its process group, without the grace. */
  killNow(): void {
    for (const pgid of this.groups) killGroup(pgid);
  }

  /** Runs `plan` to its end, its timeout or `signal`; never rejects. */
  run(plan: RunPlan, signal: AbortSignal): Promise<ChildOutcome> {
    mkdirSync(plan.dir, { recursive: true });
    const logFile = path.join(plan.dir, "run.log");
    const log = openSync(logFile, "w");
    const child = spawn(process.execPath, ["--import", "tsx/esm", ...plan.argv], { cwd: this.options.cwd, stdio: ["ignore", log, log], detached: true });
    closeSync(log);
    const pgid = child.pid;
    if (pgid !== undefined) this.groups.add(pgid);
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    // Chaos removes its namespaces and nodes on SIGINT; soak and fuzz just end, and the group kill
    // after the exit takes their nodes.
    const interrupt = () => {
      if (child.exitCode !== null || child.signalCode !== null || killTimer) return;
      child.kill("SIGINT");
      if (pgid !== undefined) killTimer = setTimeout(() => killGroup(pgid), this.options.graceMs);
    };
    const timeout = setTimeout(() => {
      timedOut = true;
      interrupt();
    }, plan.timeoutMs);
    signal.addEventListener("abort", interrupt, { once: true });
    const settle = () => {
      clearTimeout(timeout);
      clearTimeout(killTimer);
      signal.removeEventListener("abort", interrupt);
      if (pgid !== undefined) this.groups.delete(pgid);
    };
    return new Promise((resolve) => {
      // a child that could not start (no such file, too many processes) is a failed run, not a crash
      child.once("error", (err) => {
        settle();
        resolve({ exitCode: null, signal: null, timedOut: false, lastLine: `could not start: ${err.message}` });
      });
      child.once("exit", (exitCode, sig) => {
        // whatever the run left behind in its process group (a node it did not stop) goes with it
        if (pgid !== undefined) killGroup(pgid);
        settle();
        resolve({ exitCode, signal: sig, timedOut, lastLine: lastLine(logFile) });
      });
    });
  }
}
