// The checker: a pure function from a saved run to a verdict with seven gates and one row per phase.
//   1. no lost write        2. no resurrection (nor a read of a value never written)
//   3. convergence after every heal, within 60 s     4. no crash
//   5. counters: no increment lost or applied twice
//   6. conditional writes: at most one acknowledged per ETag while the ring stays as it is
//   7. leases: one at a time, fills and releases taken only and always while held (both while
//      the ring stays as it is), and a refused fill stores nothing
// Stale reads, repeated counter values, conditional conflicts across ring changes, availability
// and clock skew are reported, not gated.
import { phaseAvailability, type Availability } from "./availability.js";
import { largestOffset, nodeClockOffsets, versionOffsets, type OffsetEstimate } from "./clock-skew.js";
import { phaseConvergence, CONVERGENCE_DEADLINE_MS, type PhaseConvergence } from "./convergence.js";
import { conditionalCoverage, findConditionalConflicts, isGatedConflict, ringStablePhases, type ConditionalConflict } from "./conditional.js";
import { counterKeys, findCounterRepeats, findCounterViolations, type CounterRepeat, type CounterViolation } from "./counters.js";
import { findCrashes, type Crash } from "./crashes.js";
import { findLeaseViolations, leaseCoverage, leaseKeys, type LeaseViolation } from "./leases.js";
import type { PhaseRecord, RunRecord } from "./history.js";
import { checkpointReads, findLostWrites, type LostWrite } from "./lost-writes.js";
import { findReadAnomalies, isGatedResurrection, type ReadAnomaly } from "./reads.js";

export interface PhaseRow {
  phase: string;
  nemesis: string;
  skipped?: string;
  availability: Availability;
  lost: number;
  resurrected: number;
  /** Stale QUORUM reads (reported). */
  stale: number;
  /** ONE reads that were stale or returned a deleted value (reported). */
  stale_one: number;
  convergence: PhaseConvergence;
  crashes: number;
  /** Counter checkpoints out of their bounds, and acknowledged increments that answered a value twice (reported). */
  counters: number;
  counter_repeats: number;
  /** Acknowledged conditional writes on an ETag another one used (gated only where the ring stays as it is). */
  conditional_conflicts: number;
  /** The ring stayed as it was through the phase (conditional.ts, ringStable): its conflicts are gated. */
  ring_stable: boolean;
  /** Broken lease promises (leases.ts), gated or not (across ring changes), counted in the phase of the later operation. */
  lease_violations: number;
  /** The node clock furthest off during the phase, and the origin whose versions were furthest off. */
  clock_offset?: OffsetEstimate;
  version_offset?: OffsetEstimate;
}

export interface Gate {
  name: string;
  passed: boolean;
  detail: string;
}

export interface Verdict {
  passed: boolean;
  gates: Gate[];
  phases: PhaseRow[];
  lost: LostWrite[];
  anomalies: ReadAnomaly[];
  crashes: Crash[];
  counters: CounterViolation[];
  counter_repeats: CounterRepeat[];
  conditional_conflicts: ConditionalConflict[];
  lease_violations: LeaseViolation[];
  clock_offsets: OffsetEstimate[];
  version_offsets: OffsetEstimate[];
}

export interface CheckOptions {
  /** Skipped nemeses do not fail the run (--allow-skip). */
  allowSkip?: boolean;
}

function within(phase: PhaseRecord, t: number): boolean {
  return t >= phase.start_ms && t <= phase.end_ms;
}

/** Keys without any checkpoint read in a phase that ran: the run cannot vouch for them. */
function missingCheckpoints(record: RunRecord): LostWrite[] {
  const out: LostWrite[] = [];
  const seen = new Set(checkpointReads(record.ops).map((r) => `${r.phase}\u0000${r.key}`));
  for (const phase of record.phases) {
    if (phase.skipped) continue;
    for (const k of record.keys) {
      if (!seen.has(`${phase.name}\u0000${k.key}`)) {
        out.push({ key: k.key, kind: k.kind, phase: phase.name, found: null, expected: null, lost_phase: null, reason: "unverified" });
      }
    }
  }
  return out;
}

export function check(record: RunRecord, options: CheckOptions = {}): Verdict {
  // counters hold decimal text no write produced (gate 5 checks them), and the values of lease
  // keys expire within seconds (gate 7 checks them)
  const counters = counterKeys(record.keys);
  const leases = leaseKeys(record.keys);
  const valueOps = record.ops.filter((o) => !counters.has(o.key) && !leases.has(o.key));
  const lost = [...findLostWrites(record.keys, valueOps), ...missingCheckpoints(record)];
  const anomalies = findReadAnomalies(valueOps);
  const counterViolations = findCounterViolations(record.keys, record.ops);
  const repeats = findCounterRepeats(record.ops);
  const conflicts = findConditionalConflicts(record.ops);
  const stablePhases = ringStablePhases(record);
  const gatedConflicts = conflicts.filter((c) => isGatedConflict(c, stablePhases));
  const leaseFindings = findLeaseViolations(leases, record.ops, stablePhases);
  const leaseViolations = leaseFindings.filter((l) => l.gated);
  const leaseUse = leaseCoverage(leases, record.ops);
  const idleLeases = leases.size > 0 && (leaseUse.granted === 0 || leaseUse.filled === 0);
  // a gate over operations that never succeeded proves nothing: it fails instead
  const ackedIncrs = record.ops.filter((o) => o.f === "incr" && o.outcome === "ok").length;
  const casKeys = new Set(record.keys.filter((k) => k.kind === "cas").map((k) => k.key));
  const coverage = conditionalCoverage(record.ops, casKeys);
  const idleCounters = counters.size > 0 && ackedIncrs === 0;
  const idleConditional = casKeys.size > 0 && (coverage.ifMatchAcked === 0 || coverage.withoutEtag > 0);
  const crashes = findCrashes(record.processes, record.liveness, record.logs, record.ops);
  const clockOffsets = nodeClockOffsets(record.clock, record.phases);
  const versionOffsetList = versionOffsets(record.ops);
  const phases: PhaseRow[] = record.phases.map((phase) => {
    const mineAnomalies = anomalies.filter((a) => a.phase === phase.name);
    return {
      phase: phase.name,
      nemesis: phase.nemesis,
      ...(phase.skipped ? { skipped: phase.skipped } : {}),
      availability: phaseAvailability(phase, record.ops),
      lost: lost.filter((l) => l.phase === phase.name).length,
      resurrected: mineAnomalies.filter((a) => isGatedResurrection(a) || (a.kind === "unknown")).length,
      stale: mineAnomalies.filter((a) => a.kind === "stale" && a.consistency !== "one" && !a.checkpoint).length,
      stale_one: mineAnomalies.filter((a) => a.consistency === "one" && a.kind !== "unknown").length,
      convergence: phaseConvergence(phase, record.convergence),
      crashes: crashes.filter((c) => within(phase, c.t_ms)).length,
      counters: counterViolations.filter((c) => c.phase === phase.name).length,
      counter_repeats: repeats.filter((r) => r.phase === phase.name).length,
      conditional_conflicts: conflicts.filter((c) => c.phase === phase.name).length,
      ring_stable: stablePhases.has(phase.name),
      lease_violations: leaseFindings.filter((l) => l.phase === phase.name).length,
      clock_offset: largestOffset(clockOffsets, phase.name),
      version_offset: largestOffset(versionOffsetList, phase.name),
    };
  });
  const ran = phases.filter((p) => !p.skipped);
  const gatedReads = anomalies.filter((a) => isGatedResurrection(a) || a.kind === "unknown");
  const notConverged = ran.filter((p) => !p.convergence.within_deadline);
  const skipped = phases.filter((p) => p.skipped);
  const gates: Gate[] = [
    {
      name: "no lost write",
      passed: lost.length === 0,
      detail: lost.length === 0 ? `every key held an allowed value at ${ran.length} checkpoints` : `${lost.length} key checks failed (${summarize(lost.map((l) => l.reason))})`,
    },
    {
      name: "no resurrection",
      passed: gatedReads.length === 0,
      detail: gatedReads.length === 0 ? "no QUORUM or checkpoint read returned a deleted value or a value never written" : `${gatedReads.length} reads (${summarize(gatedReads.map((a) => a.kind))})`,
    },
    {
      name: "convergence",
      passed: notConverged.length === 0 && ran.length > 0,
      detail:
        ran.length === 0
          ? "no phase ran"
          : notConverged.length === 0
            ? `every phase converged within ${CONVERGENCE_DEADLINE_MS / 1000} s of its heal (slowest ${Math.round(Math.max(...ran.map((p) => p.convergence.after_heal_ms ?? 0)))} ms)`
            : `not converged within ${CONVERGENCE_DEADLINE_MS / 1000} s: ${notConverged.map((p) => p.phase).join(", ")}`,
    },
    {
      name: "no crash",
      passed: crashes.length === 0,
      detail: crashes.length === 0 ? "only stopped processes went down; no 500; no error in the logs" : `${crashes.length} (${summarize(crashes.map((c) => c.kind))})`,
    },
    {
      name: "counters",
      passed: counterViolations.length === 0 && !idleCounters,
      detail: idleCounters
        ? "no increment was acknowledged: the gate checked nothing"
        : counterViolations.length === 0
          ? `every counter checkpoint lay between its acknowledged and its attempted increments (${ackedIncrs} acknowledged)`
          : `${counterViolations.length} counter checks failed (${summarize(counterViolations.map((c) => c.reason))})`,
    },
    {
      name: "conditional writes",
      passed: gatedConflicts.length === 0 && !idleConditional,
      detail: idleConditional
        ? coverage.withoutEtag > 0
          ? `${coverage.withoutEtag} reads of conditional keys answered a value without an ETag`
          : "no If-Match write was acknowledged: the gate checked nothing"
        : gatedConflicts.length === 0
          ? `no ETag taken by two conditional writes while the ring stayed as it was (${stablePhases.size} of ${ran.length} phases; ${coverage.ifMatchAcked} If-Match writes acknowledged, ${coverage.refused} answered 412; ${conflicts.length} conflicts across ring changes, reported)`
          : `${gatedConflicts.length} ETags with more than one acknowledged conditional write in ${[...new Set(gatedConflicts.map((c) => c.phase))].join(", ")}`,
    },
    {
      name: "leases",
      passed: leaseViolations.length === 0 && !idleLeases,
      detail: idleLeases
        ? "no lease was granted and filled: the gate checked nothing"
        : leaseViolations.length === 0
          ? `one lease at a time, fills and releases taken only and always while held (${stablePhases.size} of ${ran.length} phases), no refused fill stored (${leaseUse.granted} granted, ${leaseUse.filled} filled, ${leaseUse.fillRefused} fills refused (409), ${leaseUse.released} released (${leaseUse.releaseRefused} refused), ${leaseUse.held} LEASE_HELD, ${leaseUse.none} without a lease, ${leaseUse.hits} values${leaseUse.unchecked > 0 ? `; ${leaseUse.unchecked} grants without their length, unchecked` : ""}; ${leaseFindings.length} broken across ring changes, reported)`
          : `${leaseViolations.length} broken lease promises (${summarize(leaseViolations.map((l) => l.kind))})`,
    },
  ];
  if (!options.allowSkip) {
    gates.push({
      name: "no skipped nemesis",
      passed: skipped.length === 0,
      detail: skipped.length === 0 ? "every nemesis ran" : skipped.map((p) => `${p.nemesis}: ${p.skipped}`).join("; "),
    });
  }
  return {
    passed: gates.every((g) => g.passed),
    gates,
    phases,
    lost,
    anomalies,
    crashes,
    counters: counterViolations,
    counter_repeats: repeats,
    conditional_conflicts: conflicts,
    lease_violations: leaseFindings,
    clock_offsets: clockOffsets,
    version_offsets: versionOffsetList,
  };
}

function summarize(items: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  return [...counts.entries()].map(([k, n]) => `${k}: ${n}`).join(", ");
}
