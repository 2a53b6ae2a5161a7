// Gate 3, convergence: after a heal, every owner's local copy of every key (HEAD with
// consistency=one) has the same (version, origin), or every owner answers 404. The harness polls in
// rounds; a phase converged at the first round where no key diverges, and must do so within
// CONVERGENCE_DEADLINE_MS of its heal.
import type { ConvergenceRound, KeySample, PhaseRecord } from "./history.js";

/** The promise: converged within 60 s of the heal. */
export const CONVERGENCE_DEADLINE_MS = 60_000;

/** True when the owners of this key agree: all 200 with one (version, origin), or all 404. */
export function keyAgrees(sample: KeySample): boolean {
  if (sample.owners.length === 0 || sample.copies.length !== sample.owners.length) return false;
  const answered = new Set(sample.copies.map((c) => c.node));
  if (sample.owners.some((o) => !answered.has(o))) return false;
  const [first] = sample.copies;
  if (!first) return false;
  if (first.status === 404) return sample.copies.every((c) => c.status === 404);
  if (first.status !== 200) return false;
  return sample.copies.every((c) => c.status === 200 && c.version === first.version && c.origin === first.origin);
}

/** The keys of a round whose owners disagree. */
export function divergingKeys(round: ConvergenceRound): KeySample[] {
  return round.samples.filter((s) => !keyAgrees(s));
}

export interface PhaseConvergence {
  phase: string;
  converged: boolean;
  /** From the heal to the first converged round. */
  after_heal_ms: number | null;
  /** From the workload pause to the first converged round (what the cluster needed once quiet). */
  after_quiesce_ms: number | null;
  rounds: number;
  /** A few keys that still diverged in the last round, when it never converged. */
  diverging?: KeySample[];
  within_deadline: boolean;
}

export function phaseConvergence(phase: PhaseRecord, rounds: readonly ConvergenceRound[]): PhaseConvergence {
  const mine = rounds.filter((r) => r.phase === phase.name).sort((a, b) => a.t_ms - b.t_ms);
  const first = mine.find((r) => r.samples.length > 0 && divergingKeys(r).length === 0);
  if (!first) {
    const last = mine[mine.length - 1];
    return {
      phase: phase.name,
      converged: false,
      after_heal_ms: null,
      after_quiesce_ms: null,
      rounds: mine.length,
      diverging: last ? divergingKeys(last).slice(0, 5) : [],
      within_deadline: false,
    };
  }
  const afterHeal = first.t_ms - phase.heal_ms;
  return {
    phase: phase.name,
    converged: true,
    after_heal_ms: afterHeal,
    after_quiesce_ms: Math.max(0, first.t_ms - phase.quiesce_ms),
    rounds: mine.indexOf(first) + 1,
    within_deadline: afterHeal <= CONVERGENCE_DEADLINE_MS,
  };
}
