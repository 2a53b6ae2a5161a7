// npm run campaign: chaos, fuzz and soak runs one after another with fresh seeds, for hours or
// until stopped, so the promises keep being tested after the CI smoke runs; every run's verdict
// goes to campaign.jsonl and summary.md (ledger.ts), and a failing run keeps its whole folder
// with the command that replays it. See test/chaos/README.md, "Campaign".
import { spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Campaign } from "./campaign.js";
import { ChildRuns } from "./child-runs.js";
import { CAMPAIGN_USAGE, parseCampaignOptions, type CampaignCommand } from "./options.js";
import { prunePassingRun } from "./prune.js";
import { stopOnSignals } from "./stop-signals.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** After SIGINT, how long a run has to clean up (chaos removes its namespaces) before SIGKILL. */
const GRACE_MS = 60_000;

const print = (line: string) => process.stdout.write(`${line}\n`);

function git(args: string[]): string {
  const r = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : "";
}

function commitId(): string {
  const head = git(["rev-parse", "--short", "HEAD"]) || "unknown";
  return git(["status", "--porcelain", "--untracked-files=no"]) === "" ? head : `${head}-dirty`;
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
  const runs = new ChildRuns({ cwd: ROOT, graceMs: GRACE_MS });
  const campaign = new Campaign(options, {
    nowMs: () => Date.now(),
    commit: commitId(),
    runChild: (plan, signal) => runs.run(plan, signal),
    append: (record) => appendFileSync(ledger, `${JSON.stringify(record)}\n`),
    writeSummary: (text) => writeAtomically(path.join(options.out, "summary.md"), text),
    prunePassing: prunePassingRun,
    print,
  });
  const stop = stopOnSignals({ stop: () => campaign.stop(), killNow: () => runs.killNow(), print, exit: (code) => process.exit(code) });
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
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
