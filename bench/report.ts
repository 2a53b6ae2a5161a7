// The report: round rows as they are measured, gate figures with their spread and target, a
// summary table at the end, and the same figures as JSON (--json FILE).
import { writeFile } from "node:fs/promises";
import type { RoundResult } from "./measure.js";
import { ratioOfMedians } from "./stats.js";

/** A figure the project is judged by (or one reported beside them), as printed and as written to JSON. */
export interface Figure {
  readonly id: string;
  readonly label: string;
  readonly value: number;
  readonly unit: string;
  /** Lowest and highest per-round value (ratios: per-round ratios). */
  readonly min?: number;
  readonly max?: number;
  readonly target?: string;
  /** False when a round behind the figure had errors (non-2xx answers, socket errors, a broken schedule). */
  readonly valid: boolean;
  readonly note?: string;
  /** Decimals to print (default by unit: 2 for ratios and ms, 0 otherwise). */
  readonly digits?: number;
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * Below this share of its core, a pinned server under closed-loop load did not get the core (or
 * waited on something else): its ops/s say little, its CPU per request still holds.
 */
export const SERVER_SHARE_MIN = 0.9;

const starved = (r: RoundResult) => r.pinned && r.serverCpuShare < SERVER_SHARE_MIN;

/**
 * Above this share of its core the load generator was the bottleneck (it busy sends and reads
 * late): the round's ops/s and latencies are the generator's as much as the server's.
 */
export const GENERATOR_SHARE_MAX = 0.9;

const generatorBusy = (r: { readonly generatorCpuShare: number }) => r.generatorCpuShare > GENERATOR_SHARE_MAX;

function pct(share: number): string {
  return `${fmt(100 * share)}%`;
}

export function formatRound(r: RoundResult): string {
  const cols = [
    `round ${r.round}`,
    // Sides named for their workload ("node incr") are not named twice.
    (r.side.endsWith(r.method) ? r.side : `${r.side} ${r.method}`).padEnd(26),
    `${fmt(r.opsPerSec).padStart(7)} ops/s`,
    `p50 ${fmt(r.p50Ms, 2).padStart(6)} ms`,
    `p99 ${fmt(r.p99Ms, 2).padStart(6)} ms`,
    `CPU ${fmt(r.cpuUsPerRequest, 1).padStart(5)} µs/req`,
    `server CPU ${pct(r.serverCpuShare).padStart(4)}`,
    `load gen. CPU ${pct(r.generatorCpuShare).padStart(4)}`,
  ];
  if (r.peerCallsPerRequest !== undefined) cols.push(`all nodes' CPU ${fmt(r.allCpuUsPerRequest, 1)} µs/req`, `peer RPCs/req ${fmt(r.peerCallsPerRequest, 2)}`);
  if (r.errors > 0) cols.push(`ERRORS ${fmt(r.errors)}`);
  if (starved(r)) cols.push("SERVER SHORT OF ITS CORE");
  if (generatorBusy(r)) cols.push("LOAD GENERATOR BUSY");
  return "  " + cols.join("  ");
}

/**
 * median(pick(numerator rounds)) / median(pick(denominator rounds)), valid when no round had
 * errors and no round's load generator was above GENERATOR_SHARE_MAX of its core.
 */
export function ratioFigure(
  id: string,
  label: string,
  numerator: readonly RoundResult[],
  denominator: readonly RoundResult[],
  pick: (r: RoundResult) => number,
  target?: string,
): Figure {
  const r = ratioOfMedians(numerator.map(pick), denominator.map(pick));
  const all = [...numerator, ...denominator];
  const busy = all.filter(generatorBusy).length;
  const valid = all.every((x) => x.errors === 0) && busy === 0;
  const short = all.filter(starved).length;
  const notes = [
    ...(short > 0 ? [`${short} of ${all.length} rounds had the server below ${pct(SERVER_SHARE_MIN)} of its core: a busy machine`] : []),
    ...(busy > 0 ? [`${busy} of ${all.length} rounds had the load generator above ${pct(GENERATOR_SHARE_MAX)} of its core: the generator's figure`] : []),
  ];
  const note = notes.length > 0 ? `(${notes.join("; ")})` : undefined;
  return { id, label, value: r.value, unit: "×", min: r.min, max: r.max, ...(target ? { target } : {}), valid, ...(note ? { note } : {}) };
}

export function formatFigure(f: Figure): string {
  const digits = f.digits ?? (f.unit === "×" || f.unit === "ms" ? 2 : 0);
  const value = `${fmt(f.value, digits)}${f.unit === "×" || f.unit === "" ? "" : ` ${f.unit}`}`;
  const spread = f.min !== undefined && f.max !== undefined ? ` (rounds ${fmt(f.min, digits)}–${fmt(f.max, digits)})` : "";
  const target = f.target ? `   target ${f.target}` : "";
  const invalid = f.valid ? "" : "   NOT VALID: errors, a broken schedule or a busy load generator in its rounds (see above)";
  const note = f.note ? `   ${f.note}` : "";
  return `  ${f.label.padEnd(52)} ${value}${spread}${target}${invalid}${note}`;
}

/** Collects what the parts measured; prints as it goes. */
export class Report {
  private readonly figures: Figure[] = [];
  private readonly rounds: RoundResult[] = [];
  private readonly facts: Record<string, unknown> = {};

  constructor(private readonly out: (line: string) => void) {}

  line(text = ""): void {
    this.out(text);
  }

  section(title: string, method: string): void {
    this.out(`\n== ${title}`);
    this.out(`   ${method}`);
  }

  round(r: RoundResult): void {
    this.rounds.push(r);
    this.out(formatRound(r));
  }

  figure(f: Figure): void {
    this.figures.push(f);
    this.out(formatFigure(f));
  }

  /** A value for the JSON output only (settings, machine, the peak rate used, ...). */
  fact(key: string, value: unknown): void {
    this.facts[key] = value;
  }

  summary(): void {
    this.out("\n== Summary (ratios of medians within this run; spread = lowest–highest per-round ratio)");
    for (const f of this.figures.filter((x) => x.target !== undefined)) this.out(formatFigure(f));
  }

  async writeJson(file: string): Promise<void> {
    await writeFile(file, JSON.stringify({ ...this.facts, figures: this.figures, rounds: this.rounds }, null, 2) + "\n");
  }
}
