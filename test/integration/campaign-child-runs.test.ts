// How the campaign ends its runs as processes (test/campaign/child-runs.ts): what a run leaves in
// its process group is killed when it ends; a run deaf to SIGINT is killed with its group after
// the grace, on stop or on its timeout; killNow (a second Ctrl-C) kills it at once.
import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ChildRuns } from "../campaign/child-runs.js";
import type { RunPlan } from "../campaign/plan.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = "test/integration/fixtures/campaign-run.mjs";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True while `pid` runs (a zombie counts as ended). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function until(what: string, f: () => boolean, ms = 10_000): Promise<void> {
  for (let waited = 0; !f(); waited += 50) {
    if (waited >= ms) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

describe("campaign child runs: process groups", function () {
  this.timeout(30_000);
  let dir: string;
  let sleeper: number | undefined;
  const pidFile = () => path.join(dir, "sleeper.pid");
  const plan = (mode: "leave" | "deaf", timeoutMs = 60_000): RunPlan => ({ index: 0, kind: "fuzz", seed: 1, dir: path.join(dir, "run"), argv: [FIXTURE, pidFile(), mode], timeoutMs, replay: "" });
  const sleeperPid = async () => {
    await until("the run wrote its sleeper's pid", () => existsSync(pidFile()) && readFileSync(pidFile(), "utf8") !== "");
    sleeper = Number(readFileSync(pidFile(), "utf8"));
    return sleeper;
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "child-runs-"));
    sleeper = undefined;
  });
  afterEach(() => {
    if (sleeper !== undefined && running(sleeper)) process.kill(sleeper, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("kills what a run left in its process group when the run ends", async () => {
    const outcome = await new ChildRuns({ cwd: ROOT, graceMs: 60_000 }).run(plan("leave"), new AbortController().signal);
    expect(outcome).to.deep.include({ exitCode: 0, signal: null, timedOut: false, lastLine: "leaving the sleeper behind" });
    const pid = await sleeperPid();
    await until("the sleeper left behind is killed", () => !running(pid));
  });

  it("a stopped run deaf to SIGINT is killed with its group once the grace has passed", async () => {
    const stop = new AbortController();
    const started = Date.now();
    const outcome = new ChildRuns({ cwd: ROOT, graceMs: 300 }).run(plan("deaf"), stop.signal);
    const pid = await sleeperPid();
    await until("the run is ready", () => readFileSync(path.join(dir, "run", "run.log"), "utf8").includes("ready"));
    const stoppedAt = Date.now();
    stop.abort();
    const o = await outcome;
    expect(o).to.deep.include({ exitCode: null, signal: "SIGKILL", timedOut: false, lastLine: "SIGINT ignored" });
    expect(Date.now() - stoppedAt, "not before the grace").to.be.at.least(300);
    expect(Date.now() - started).to.be.below(20_000);
    await until("its sleeper is killed with it", () => !running(pid));
  });

  it("a run past its timeout is stopped the same way and counts as timed out", async () => {
    const o = await new ChildRuns({ cwd: ROOT, graceMs: 200 }).run(plan("deaf", 2_000), new AbortController().signal);
    expect(o).to.deep.include({ signal: "SIGKILL", timedOut: true });
    const pid = await sleeperPid();
    await until("its sleeper is killed with it", () => !running(pid));
  });

  it("killNow kills the run in progress and its group at once, without the grace", async () => {
    const runs = new ChildRuns({ cwd: ROOT, graceMs: 60_000 });
    const stop = new AbortController();
    const outcome = runs.run(plan("deaf"), stop.signal);
    const pid = await sleeperPid();
    await until("the run is ready", () => readFileSync(path.join(dir, "run", "run.log"), "utf8").includes("ready"));
    stop.abort();
    await sleep(200);
    expect(running(pid), "SIGINT alone ends nothing here").to.equal(true);
    const killedAt = Date.now();
    runs.killNow();
    expect((await outcome).signal).to.equal("SIGKILL");
    expect(Date.now() - killedAt).to.be.below(5_000);
    await until("its sleeper is killed with it", () => !running(pid));
  });
});
