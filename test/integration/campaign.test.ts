// npm run campaign as a process: real fuzz runs one after another with their seeds, the ledger and
// summary they leave, and a Ctrl-C (SIGINT) in the middle of a soak: the campaign stops the run,
// takes its nodes with it, records the run as stopped (not failed) and exits 0.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { RunRecord } from "../campaign/ledger.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startCampaign(args: string[]): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx/esm", "test/campaign/main.ts", "--no-build", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => out };
}

const ledger = (out: string): RunRecord[] =>
  readFileSync(path.join(out, "campaign.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as RunRecord);

/** Process ids in process group `pgid`, from /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return members;
}

/** The pid of the process whose command line contains `needle`. */
function findProcess(needle: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").includes(needle)) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

describe("npm run campaign", function () {
  this.timeout(120_000);
  let out: string;
  beforeEach(() => (out = mkdtempSync(path.join(tmpdir(), "campaign-"))));
  afterEach(() => rmSync(out, { recursive: true, force: true }));

  /** A campaign of one 30 s soak of `seed`, once the soak and its three nodes are up. */
  async function soakUnderWay(seed: number): Promise<{ c: ReturnType<typeof startCampaign>; runDir: string; soak: number }> {
    const c = startCampaign(["--kinds", "soak", "--runs", "1", "--soak-seconds", "30", "--seed", String(seed), "--out", out]);
    const runDir = path.join(out, `0001-soak-${seed}`);
    let soak: number | undefined;
    for (let i = 0; i < 200 && soak === undefined; i++) {
      await sleep(100);
      soak = findProcess(`--out ${runDir}`);
    }
    expect(soak, c.output()).to.be.a("number");
    // the soak's nodes are up once it preloads them
    for (let i = 0; i < 300 && groupMembers(soak as number).length < 4; i++) await sleep(100);
    expect(groupMembers(soak as number).length, "the soak and its three nodes").to.be.at.least(4);
    return { c, runDir, soak: soak as number };
  }

  it("runs fuzz runs with consecutive seeds and writes the ledger and the summary", async () => {
    const c = startCampaign(["--kinds", "fuzz", "--runs", "2", "--fuzz-cases", "20", "--seed", "700", "--out", out]);
    expect(await c.exited, c.output()).to.equal(0);
    const records = ledger(out);
    expect(records.map((r) => [r.kind, r.seed, r.passed, r.exit_code])).to.deep.equal([
      ["fuzz", 700, true, 0],
      ["fuzz", 701, true, 0],
    ]);
    expect(records[0]?.last_line).to.equal("passed: seed 700, 20 cases");
    expect(records[1]?.replay).to.equal("npm run fuzz -- --cases 20 --seed 701");
    expect(readFileSync(path.join(records[0]?.dir as string, "run.log"), "utf8")).to.include("passed: seed 700");
    const summary = readFileSync(path.join(out, "summary.md"), "utf8");
    expect(summary).to.match(/^# Campaign finished/).and.include("**2 runs: 2 passed, 0 failed.**").and.include("| fuzz | 2 | 2 | 0 |");
    expect(c.output()).to.include("campaign: 2 runs, 2 passed, 0 failed");
  });

  it("SIGINT during a soak stops it and its nodes, records it as stopped, and exits 0", async () => {
    const { c, runDir, soak } = await soakUnderWay(5);
    c.child.kill("SIGINT");
    expect(await c.exited, c.output()).to.equal(0);
    // SIGKILLed on the campaign's way out: give the kernel a moment to end them
    for (let i = 0; i < 50 && groupMembers(soak).length > 0; i++) await sleep(100);
    expect(groupMembers(soak), "nothing of the run is left").to.deep.equal([]);
    expect(ledger(out).map((r) => [r.kind, r.passed, r.reason])).to.deep.equal([["soak", false, "stopped"]]);
    expect(readFileSync(path.join(out, "summary.md"), "utf8")).to.include("1 stopped by the user (not counted)");
    expect(existsSync(path.join(runDir, "run.log"))).to.equal(true);
  });
});
