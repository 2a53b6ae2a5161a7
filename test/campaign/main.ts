// npm run campaign: chaos, fuzz and soak runs one after another with fresh seeds, for hours or
// until stopped, so the promises keep being tested after the CI smoke runs; every run's verdict
// goes to campaign.jsonl and summary.md (ledger.ts), and a failing run keeps its whole folder
// with the command that replays it. See test/chaos/README.md, "Campaign".
import { spawn, spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { appendFileSync, closeSync, mkdirSync, openSync, readSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Campaign, type ChildOutcome } from "./campaign.js";
import { CAMPAIGN_USAGE, parseCampaignOptions, type CampaignCommand } from "./options.js";
import type { RunPlan } from "./plan.js";
import { prunePassingRun } from "./prune.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** After SIGINT, how long a run has to clean up (chaos removes its namespaces) before SIGKILL. */
const GRACE_MS = 60_000;
const TAIL_BYTES = 4_096;

const print = (line: string) => process.stdout.write(`${line}\n`);

function git(args: string[]): string {
  const r = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "";
}

function commitId(): string {
  const head = git(["rev-parse", "--short", "HEAD"]) || "unknown";
  return git(["status", "--porcelain", "--untracked-files=no"]) === "" ? head : `${head}-dirty`;
}

/** The last non-empty line of a file (from its last 4 KiB). */
function lastLine(file: string): string {
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

/**
 * Runs one plan in its own process group (so a Ctrl-C reaches the campaign, not the run), its
 * output in <dir>/run.log; on timeout or stop, SIGINT, then SIGKILL to the group after GRACE_MS.
 */
function runChild(plan: RunPlan, signal: AbortSignal): Promise<ChildOutcome> {
  mkdirSync(plan.dir, { recursive: true });
  const logFile = path.join(plan.dir, "run.log");
  const log = openSync(logFile, "w");
  const child = spawn(process.execPath, ["--import", "tsx/esm", ...plan.argv], { cwd: ROOT, stdio: ["ignore", log, log], detached: true });
  closeSync(log);
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const killGroup = () => {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // the group is gone already
    }
  };
  // Chaos removes its namespaces and nodes on SIGINT; soak and fuzz just end, and the group kill
  // after the exit takes their nodes.
  const interrupt = () => {
    if (child.exitCode !== null || child.signalCode !== null || killTimer) return;
    child.kill("SIGINT");
    killTimer = setTimeout(killGroup, GRACE_MS);
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    interrupt();
  }, plan.timeoutMs);
  signal.addEventListener("abort", interrupt, { once: true });
  return new Promise((resolve) => {
    // a child that could not start (no such file, too many processes) is a failed run, not a crash
    child.once("error", (err) => {
      clearTimeout(timeout);
      signal.removeEventListener("abort", interrupt);
      resolve({ exitCode: null, signal: null, timedOut: false, lastLine: `could not start: ${err.message}` });
    });
    child.once("exit", (exitCode, sig) => {
      // whatever the run left behind in its process group (a node it did not stop) goes with it
      killGroup();
      clearTimeout(timeout);
      clearTimeout(killTimer);
      signal.removeEventListener("abort", interrupt);
      resolve({ exitCode, signal: sig, timedOut, lastLine: lastLine(logFile) });
    });
  });
}

function writeAtomically(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

async function main(): Promise<number> {
  let command: CampaignCommand;
  try {
    command = parseCampaignOptions(process.argv.slice(2), () => randomInt(1, 2 ** 30));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${CAMPAIGN_USAGE}\n`);
    return 2;
  }
  if (command.kind === "help") {
    print(CAMPAIGN_USAGE);
    return 0;
  }
  const options = command.options;
  if (options.build && spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" }).status !== 0) {
    process.stderr.write("campaign: npm run build failed\n");
    return 2;
  }
  mkdirSync(options.out, { recursive: true });
  const ledger = path.join(options.out, "campaign.jsonl");
  const campaign = new Campaign(options, {
    nowMs: () => Date.now(),
    commit: commitId(),
    runChild,
    append: (record) => appendFileSync(ledger, `${JSON.stringify(record)}\n`),
    writeSummary: (text) => writeAtomically(path.join(options.out, "summary.md"), text),
    prunePassing: prunePassingRun,
    print,
  });
  const stop = (sig: string) => {
    print(`campaign: ${sig}: stopping the run in progress, then writing the summary`);
    campaign.stop();
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  print(`campaign: kinds ${options.kinds.join(", ")}, base seed ${options.baseSeed}, ${options.runs !== undefined ? `${options.runs} runs` : options.durationMs !== undefined ? `${(options.durationMs / 3_600_000).toFixed(2)} h` : "until stopped"}; ledger in ${options.out}`);
  return campaign.run();
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`campaign: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
