// The report of a run: a table per phase and the gates (text), and report.json with everything
// the checker found.
import type { Verdict } from "../checker/check.js";
import type { OffsetEstimate } from "../checker/clock-skew.js";

function offset(e: OffsetEstimate | undefined): string {
  if (!e) return "-";
  const s = e.median_ms / 1000;
  return `${e.node} ${s >= 0 ? "+" : ""}${s.toFixed(1)} s`;
}

function pct(r: number | null): string {
  return r === null ? "-" : `${Math.round(r * 100)}%`;
}

function secs(ms: number | null): string {
  return ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`;
}

/** A Markdown table, one row per phase, then one line per gate. */
export function renderTable(v: Verdict): string {
  const head = ["phase", "nemesis", "ok/fail/info", "writes ok", "reads ok", "acked", "lost", "resurrected", "stale (Q/ONE)", "converged after heal (quiet)", "longest write outage", "crashes", "counters off (repeats)", "CAS conflicts", "lease faults", "clock (versions)"];
  const rows = v.phases.map((p) => {
    if (p.skipped) return [p.phase, p.nemesis, p.skipped, "", "", "", "", "", "", "", "", "", "", "", "", ""];
    const a = p.availability;
    const c = p.convergence;
    return [
      p.phase,
      p.nemesis,
      `${a.ok}/${a.fail}/${a.info}`,
      pct(a.write_ratio),
      pct(a.read_ratio),
      String(a.acked),
      String(p.lost),
      String(p.resurrected),
      `${p.stale}/${p.stale_one}`,
      c.converged ? `${secs(c.after_heal_ms)} (${secs(c.after_quiesce_ms)})` : "NOT CONVERGED",
      secs(a.longest_write_outage_ms),
      String(p.crashes),
      `${p.counters} (${p.counter_repeats})`,
      `${p.conditional_conflicts}${p.ring_stable ? " (stable ring)" : ""}`,
      String(p.lease_violations),
      `${offset(p.clock_offset)} (${offset(p.version_offset)})`,
    ];
  });
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const out = [line(head), line(head.map(() => "---")), ...rows.map(line), ""];
  for (const g of v.gates) out.push(`${g.passed ? "PASS" : "FAIL"}  ${g.name}: ${g.detail}`);
  return out.join("\n");
}

export interface ReportMeta {
  seed: number;
  replay: string;
  network: string;
  started_at: string;
  duration_s: number;
  settings: Record<string, unknown>;
}

/** report.json: the verdict with the run's identity; long lists are cut to keep the file readable. */
export function reportJson(v: Verdict, meta: ReportMeta): Record<string, unknown> {
  const LIMIT = 200;
  return {
    ...meta,
    passed: v.passed,
    gates: v.gates,
    phases: v.phases,
    clock_offsets: v.clock_offsets,
    version_offsets: v.version_offsets,
    lost: v.lost.slice(0, LIMIT),
    lost_total: v.lost.length,
    read_anomalies: v.anomalies.slice(0, LIMIT),
    read_anomalies_total: v.anomalies.length,
    crashes: v.crashes.slice(0, LIMIT),
    crashes_total: v.crashes.length,
    counters: v.counters.slice(0, LIMIT),
    counters_total: v.counters.length,
    counter_repeats: v.counter_repeats.slice(0, LIMIT),
    conditional_conflicts: v.conditional_conflicts.slice(0, LIMIT),
    lease_violations: v.lease_violations.slice(0, LIMIT),
    lease_violations_total: v.lease_violations.length,
  };
}
