// The campaign loop: plan the next run, run it, record it, render the summary; until the run or
// time limit, a failure with --stop-on-failure, or stop(). One run at a time (the machine has two
// cores, and chaos runs take a lock). I/O comes in as deps, so the loop is tested without
// processes or clocks.
import { failedRun, renderSummary, type CampaignMeta, type RunRecord } from "./ledger.js";
import { planRun, type CampaignOptions, type RunPlan } from "./plan.js";

/** How a run's process ended. */
export interface ChildOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The last non-empty line it printed. */
  lastLine: string;
}

export interface CampaignDeps {
  nowMs(): number;
  commit: string;
  /** Creates the run's folder and runs it to its end (or its timeout, or stop). */
  runChild(plan: RunPlan, signal: AbortSignal): Promise<ChildOutcome>;
  append(record: RunRecord): void;
  writeSummary(text: string): void;
  prunePassing(dir: string): void;
  print(line: string): void;
}

export class Campaign {
  private readonly records: RunRecord[] = [];
  private readonly abort = new AbortController();
  private readonly startedMs: number;

  constructor(
    private readonly options: CampaignOptions,
    private readonly deps: CampaignDeps,
  ) {
    this.startedMs = deps.nowMs();
  }

  /** Stops the run in progress (its process is stopped) and starts no other. */
  stop(): void {
    this.abort.abort();
  }

  /** Runs until a limit; resolves with the exit code: 0 when every run passed. */
  async run(): Promise<number> {
    for (let index = 0; this.mayStart(index); index++) {
      const record = await this.once(planRun(index, this.options));
      this.records.push(record);
      this.deps.append(record);
      if (record.passed) this.deps.prunePassing(record.dir);
      const verdict = record.passed ? "passed" : record.reason === "stopped" ? "stopped" : `FAILED${record.reason ? ` (${record.reason})` : ""}`;
      this.deps.print(`campaign: run ${index + 1} ${record.kind} seed ${record.seed}: ${verdict} in ${record.duration_s.toFixed(0)} s`);
      this.deps.writeSummary(this.summary(false));
      if (failedRun(record) && this.options.stopOnFailure) break;
    }
    this.deps.writeSummary(this.summary(true));
    const failed = this.records.filter(failedRun).length;
    const passed = this.records.filter((r) => r.passed).length;
    this.deps.print(`campaign: ${this.records.length} runs, ${passed} passed, ${failed} failed`);
    return failed === 0 ? 0 : 1;
  }

  private mayStart(index: number): boolean {
    if (this.abort.signal.aborted) return false;
    if (this.options.runs !== undefined && index >= this.options.runs) return false;
    return this.options.durationMs === undefined || this.deps.nowMs() - this.startedMs < this.options.durationMs;
  }

  private async once(plan: RunPlan): Promise<RunRecord> {
    const startMs = this.deps.nowMs();
    this.deps.print(`campaign: run ${plan.index + 1} ${plan.kind} seed ${plan.seed} in ${plan.dir}`);
    const outcome = await this.deps.runChild(plan, this.abort.signal);
    const stopped = this.abort.signal.aborted;
    const passed = !outcome.timedOut && !stopped && outcome.exitCode === 0;
    const reason = outcome.timedOut ? "timeout" : stopped && !passed ? "stopped" : undefined;
    return {
      index: plan.index,
      kind: plan.kind,
      seed: plan.seed,
      commit: this.deps.commit,
      started_at: new Date(startMs).toISOString(),
      duration_s: (this.deps.nowMs() - startMs) / 1000,
      passed,
      exit_code: outcome.exitCode,
      signal: outcome.signal,
      ...(reason ? { reason } : {}),
      last_line: outcome.lastLine,
      dir: plan.dir,
      replay: plan.replay,
    };
  }

  private summary(finished: boolean): string {
    const meta: CampaignMeta = {
      started_at: new Date(this.startedMs).toISOString(),
      now: new Date(this.deps.nowMs()).toISOString(),
      base_seed: this.options.baseSeed,
      kinds: this.options.kinds,
      finished,
    };
    return renderSummary(this.records, meta);
  }
}
