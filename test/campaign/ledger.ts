// The campaign's ledger: one record per finished run (appended to campaign.jsonl as it ends),
// and summary.md rendered from all of them after every run: counts per kind, every failure with
// its replay command and folder, and the latest runs.
import type { RunKind } from "./plan.js";

export interface RunRecord {
  index: number;
  kind: RunKind;
  seed: number;
  /** The commit the build came from, `-dirty` when the working tree had changes. */
  commit: string;
  started_at: string;
  duration_s: number;
  passed: boolean;
  /** The run's exit code, null when a signal ended it. */
  exit_code: number | null;
  signal: string | null;
  /**
   * Why a run did not pass without a failing verdict of its own: "timeout" (a hang: a failure) or
   * "stopped" (the campaign was stopped during it: neither passed nor failed).
   */
  reason?: "timeout" | "stopped";
  /** The last line the run printed (its verdict line when it got that far). */
  last_line: string;
  dir: string;
  replay: string;
}

export interface CampaignMeta {
  started_at: string;
  /** When the summary was written (ISO). */
  now: string;
  base_seed: number;
  kinds: readonly RunKind[];
  /** True once the campaign has stopped starting runs. */
  finished: boolean;
}

const LATEST = 20;

/** A run that failed: not passed, and not cut short by stopping the campaign. */
export const failedRun = (r: RunRecord): boolean => !r.passed && r.reason !== "stopped";
const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

function verdict(r: RunRecord): string {
  if (r.passed) return "passed";
  if (r.reason === "stopped") return "stopped (not counted)";
  if (r.reason) return `FAILED (${r.reason})`;
  return r.signal ? `FAILED (signal ${r.signal})` : `FAILED (exit ${r.exit_code})`;
}

export function renderSummary(records: readonly RunRecord[], meta: CampaignMeta): string {
  const failed = records.filter(failedRun);
  const passed = records.filter((r) => r.passed).length;
  const stopped = records.length - passed - failed.length;
  const commits = [...new Set(records.map((r) => r.commit))];
  const out = [
    `# Campaign ${meta.finished ? "finished" : "running"}`,
    "",
    `Started ${meta.started_at}, summary written ${meta.now}; base seed ${meta.base_seed}; kinds ${meta.kinds.join(", ")}; commit ${commits.join(", ") || "-"}.`,
    "",
    `**${records.length} runs: ${passed} passed, ${failed.length} failed${stopped > 0 ? `, ${stopped} stopped by the user (not counted)` : ""}.**`,
    "",
    "| kind | runs | passed | failed | longest |",
    "|---|---|---|---|---|",
  ];
  for (const kind of meta.kinds) {
    const mine = records.filter((r) => r.kind === kind);
    if (mine.length === 0) continue;
    const bad = mine.filter(failedRun).length;
    out.push(`| ${kind} | ${mine.length} | ${mine.filter((r) => r.passed).length} | ${bad} | ${Math.max(...mine.map((r) => r.duration_s)).toFixed(0)} s |`);
  }
  out.push("", "## Failures", "");
  if (failed.length === 0) out.push("None.");
  for (const r of failed) {
    out.push(`- run ${r.index + 1}, ${r.kind} seed ${r.seed}: ${verdict(r)} after ${r.duration_s.toFixed(0)} s; \`${r.replay}\`; folder \`${r.dir}\`; last line: ${cell(r.last_line) || "(none)"}`);
  }
  out.push("", `## Latest runs`, "", "| run | kind | seed | started | duration | verdict | last line |", "|---|---|---|---|---|---|---|");
  for (const r of records.slice(-LATEST).reverse()) {
    out.push(`| ${r.index + 1} | ${r.kind} | ${r.seed} | ${r.started_at} | ${r.duration_s.toFixed(0)} s | ${verdict(r)} | ${cell(r.last_line.slice(0, 160))} |`);
  }
  return `${out.join("\n")}\n`;
}
