// The campaign runner without processes or clocks: its plan (kinds in turn, a seed per run), its
// command line, the loop's limits and verdicts, the summary, and what a passing run keeps.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Campaign, type CampaignDeps, type ChildOutcome } from "../../campaign/campaign.js";
import { renderSummary, type RunRecord } from "../../campaign/ledger.js";
import { parseCampaignOptions } from "../../campaign/options.js";
import { planRun, type CampaignOptions, type RunPlan } from "../../campaign/plan.js";
import { prunePassingRun } from "../../campaign/prune.js";

const OPTIONS: CampaignOptions = {
  kinds: ["chaos", "fuzz", "soak"],
  baseSeed: 100,
  out: "/tmp/c",
  runs: undefined,
  durationMs: undefined,
  stopOnFailure: false,
  build: false,
  chaosNodes: 5,
  fuzzCases: 20_000,
  soakSeconds: 600,
};

const ok = (lastLine = "passed"): ChildOutcome => ({ exitCode: 0, signal: null, timedOut: false, lastLine });
const failed = (lastLine = "FAILED seed=1"): ChildOutcome => ({ exitCode: 1, signal: null, timedOut: false, lastLine });

/** A campaign whose runs take `runMs` each on a manual clock and end as `outcomes` says, in turn. */
function harness(options: Partial<CampaignOptions>, outcomes: Array<ChildOutcome | ((c: Campaign) => ChildOutcome)>, runMs = 60_000) {
  let now = Date.UTC(2026, 10, 30, 12);
  const records: RunRecord[] = [];
  const summaries: string[] = [];
  const pruned: string[] = [];
  const plans: RunPlan[] = [];
  const deps: CampaignDeps = {
    nowMs: () => now,
    commit: "abc1234",
    runChild: async (plan) => {
      plans.push(plan);
      now += runMs;
      const next = outcomes[plans.length - 1] ?? ok();
      return typeof next === "function" ? next(campaign) : next;
    },
    append: (r) => records.push(r),
    writeSummary: (t) => summaries.push(t),
    prunePassing: (dir) => pruned.push(dir),
    print: () => undefined,
  };
  const campaign: Campaign = new Campaign({ ...OPTIONS, ...options }, deps);
  return { campaign, records, summaries, pruned, plans };
}

describe("campaign: the plan of each run", () => {
  it("takes the kinds in turn with the base seed plus the run's index, each in its own folder with its replay command", () => {
    const plans = [0, 1, 2, 3].map((i) => planRun(i, OPTIONS));
    expect(plans.map((p) => [p.kind, p.seed])).to.deep.equal([
      ["chaos", 100],
      ["fuzz", 101],
      ["soak", 102],
      ["chaos", 103],
    ]);
    expect(plans[0]?.argv).to.deep.equal(["test/chaos/main.ts", "--seed", "100", "--nodes", "5", "--nemesis", "all", "--out", "/tmp/c/0001-chaos-100"]);
    expect(plans[0]?.replay).to.equal("npm run chaos -- --seed 100 --nodes 5 --nemesis all");
    expect(plans[1]?.argv).to.deep.equal(["test/fuzz/main.ts", "--cases", "20000", "--seed", "101"]);
    expect(plans[2]?.argv).to.deep.equal(["test/soak/main.ts", "--seconds", "600", "--seed", "102", "--out", "/tmp/c/0003-soak-102"]);
    expect(plans[2]?.timeoutMs, "a soak may take its length and 15 minutes").to.equal(600_000 + 900_000);
    expect(plans[0]?.timeoutMs).to.equal(30 * 60_000);
  });

  it("reads its command line, resolving --out, and refuses what it cannot run with one line", () => {
    const c = parseCampaignOptions(["--kinds", "fuzz,soak", "--runs", "3", "--seed", "9", "--out", "rel", "--no-build", "--stop-on-failure"], () => 5);
    expect(c).to.deep.include({ kind: "run" });
    if (c.kind !== "run") return;
    expect(c.options).to.deep.include({ kinds: ["fuzz", "soak"], runs: 3, baseSeed: 9, build: false, stopOnFailure: true, durationMs: undefined });
    expect(c.options.out).to.equal(path.resolve("rel"));
    const d = parseCampaignOptions(["--hours", "1.5"], () => 5);
    expect(d.kind === "run" && [d.options.baseSeed, d.options.durationMs, d.options.runs, d.options.kinds.length]).to.deep.equal([5, 5_400_000, undefined, 3]);
    expect(() => parseCampaignOptions(["--kinds", "chaos,meteor"], () => 1)).to.throw(/unknown kind "meteor"/);
    expect(() => parseCampaignOptions(["--hours", "1", "--runs", "2"], () => 1)).to.throw(/not both/);
    expect(() => parseCampaignOptions(["--runs", "0"], () => 1)).to.throw(/at least 1/);
    expect(() => parseCampaignOptions(["--hours", "0"], () => 1)).to.throw(/positive number/);
    expect(() => parseCampaignOptions(["--soak-seconds", "10"], () => 1)).to.throw(/at least 30/);
    expect(() => parseCampaignOptions(["--bogus"], () => 1)).to.throw();
  });
});

describe("campaign: the loop", () => {
  it("stops after --runs, prunes only the passing runs, and exits 1 when one failed", async () => {
    const h = harness({ runs: 3 }, [ok(), failed(), ok()]);
    expect(await h.campaign.run()).to.equal(1);
    expect(h.records.map((r) => [r.kind, r.seed, r.passed, r.duration_s])).to.deep.equal([
      ["chaos", 100, true, 60],
      ["fuzz", 101, false, 60],
      ["soak", 102, true, 60],
    ]);
    expect(h.pruned).to.deep.equal([h.plans[0]?.dir, h.plans[2]?.dir]);
    expect(h.summaries).to.have.length(4);
    expect(h.summaries[3]).to.match(/^# Campaign finished/).and.match(/3 runs: 2 passed, 1 failed/);
    expect(h.summaries[0]).to.match(/^# Campaign running/);
  });

  it("starts no run once --hours has passed, and exits 0 when every run passed", async () => {
    const h = harness({ durationMs: 150_000 }, [], 60_000);
    expect(await h.campaign.run()).to.equal(0);
    expect(h.records).to.have.length(3);
  });

  it("stops at the first failure with --stop-on-failure", async () => {
    const h = harness({ stopOnFailure: true }, [ok(), failed("FAILED seed=101")]);
    expect(await h.campaign.run()).to.equal(1);
    expect(h.records).to.have.length(2);
    expect(h.summaries.at(-1)).to.include("npm run fuzz -- --cases 20000 --seed 101").and.include("FAILED seed=101");
  });

  it("counts a hang as a failure, and a run cut short by stop() as neither", async () => {
    const hang: ChildOutcome = { exitCode: null, signal: "SIGKILL", timedOut: true, lastLine: "" };
    const h = harness({}, [ok(), hang, (c) => (c.stop(), { exitCode: null, signal: "SIGINT", timedOut: false, lastLine: "" })]);
    expect(await h.campaign.run()).to.equal(1);
    expect(h.records.map((r) => [r.passed, r.reason])).to.deep.equal([
      [true, undefined],
      [false, "timeout"],
      [false, "stopped"],
    ]);
    expect(h.pruned).to.have.length(1);
    const summary = h.summaries.at(-1) as string;
    expect(summary).to.match(/3 runs: 1 passed, 1 failed, 1 stopped by the user/);
    expect(summary).to.include("FAILED (timeout)").and.include("stopped (not counted)");
  });

  it("exits 0 when the only run that did not pass was stopped", async () => {
    const h = harness({}, [ok(), (c) => (c.stop(), { exitCode: 130, signal: null, timedOut: false, lastLine: "" })]);
    expect(await h.campaign.run()).to.equal(0);
    expect(h.records.map((r) => r.reason)).to.deep.equal([undefined, "stopped"]);
  });
});

describe("campaign: summary and pruning", () => {
  it("renders counts per kind and escapes table cells", () => {
    const base = { commit: "abc", started_at: "2026-11-30T12:00:00.000Z", exit_code: 0, signal: null, dir: "/d", replay: "npm run x" };
    const records: RunRecord[] = [
      { ...base, index: 0, kind: "chaos", seed: 1, duration_s: 300, passed: true, last_line: "passed seed=1 | x" },
      { ...base, index: 1, kind: "fuzz", seed: 2, duration_s: 70, passed: false, exit_code: 1, last_line: "fuzz FAILED" },
    ];
    const text = renderSummary(records, { started_at: "s", now: "n", base_seed: 1, kinds: ["chaos", "fuzz", "soak"], finished: true });
    expect(text).to.include("| chaos | 1 | 1 | 0 | 300 s |").and.include("| fuzz | 1 | 0 | 1 | 70 s |").and.not.include("| soak |");
    expect(text).to.include("passed seed=1 \\| x");
    expect(text).to.include("- run 2, fuzz seed 2: FAILED (exit 1) after 70 s; `npm run x`");
  });

  it("drops a passing run's history and events and keeps its reports and logs", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "campaign-prune-"));
    try {
      for (const f of ["history.jsonl", "events.jsonl", "report.md", "report.json", "run.log"]) writeFileSync(path.join(dir, f), "x");
      mkdirSync(path.join(dir, "logs"));
      prunePassingRun(dir);
      expect(readdirSync(dir).sort()).to.deep.equal(["logs", "report.json", "report.md", "run.log"]);
      prunePassingRun(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
