// Reported, not gated: clock offsets per phase.
// - Node clocks: the harness samples each node's HTTP Date header (whole seconds, from the node's
//   wall clock) against its own clock while the run goes; the median per node and phase.
// - Version offsets: a version is wall-clock ms × 1000 + a counter, stamped while the write was in
//   flight, so a read returning a write's value gives the stamping origin's offset from the write's
//   invoke/complete midpoint. Hybrid clocks lift every origin's versions above a skewed node's for
//   a while, which this shows.
import type { ClockSample, Op, PhaseRecord } from "./history.js";

export interface OffsetEstimate {
  phase: string;
  /** A node id (clock samples) or an origin (version offsets). */
  node: string;
  samples: number;
  median_ms: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function grouped(entries: Iterable<[string, string, number]>): OffsetEstimate[] {
  const groups = new Map<string, { phase: string; node: string; values: number[] }>();
  for (const [phase, node, v] of entries) {
    const id = `${phase}\u0000${node}`;
    const g = groups.get(id) ?? { phase, node, values: [] };
    g.values.push(v);
    groups.set(id, g);
  }
  return [...groups.values()]
    .map((g) => ({ phase: g.phase, node: g.node, samples: g.values.length, median_ms: Math.round(median(g.values)) }))
    .sort((a, b) => a.phase.localeCompare(b.phase) || a.node.localeCompare(b.node));
}

/** Each node's clock offset per phase, from the Date samples taken during the phase. */
export function nodeClockOffsets(samples: readonly ClockSample[], phases: readonly PhaseRecord[]): OffsetEstimate[] {
  const entries: [string, string, number][] = [];
  for (const s of samples) {
    const phase = phases.find((p) => s.t_ms >= p.start_ms && s.t_ms <= p.end_ms);
    if (phase) entries.push([phase.name, s.node, s.offset_ms]);
  }
  return grouped(entries);
}

/** Each origin's version offset per phase (phase of the write). */
export function versionOffsets(ops: readonly Op[]): OffsetEstimate[] {
  const writes = new Map<string, Op>();
  for (const op of ops) if (op.f === "write" && op.value !== null && op.outcome === "ok") writes.set(op.value, op);
  const entries: [string, string, number][] = [];
  for (const op of ops) {
    if (op.f !== "read" || op.outcome !== "ok" || op.value === null || op.version === null || !op.origin) continue;
    const w = writes.get(op.value);
    if (!w) continue;
    entries.push([w.phase, op.origin, Math.floor(op.version / 1000) - (w.invoke_ms + w.complete_ms) / 2]);
  }
  return grouped(entries);
}

/** The estimate of a phase furthest from zero, if any. */
export function largestOffset(estimates: readonly OffsetEstimate[], phase: string): OffsetEstimate | undefined {
  let best: OffsetEstimate | undefined;
  for (const e of estimates) if (e.phase === phase && (!best || Math.abs(e.median_ms) > Math.abs(best.median_ms))) best = e;
  return best;
}
