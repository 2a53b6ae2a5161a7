// Gate 6, conditional writes: of the writes conditioned on one ETag (or on the key's absence, "*"),
// at most one takes effect; two means both replaced the same version, and one of them was lost
// without either client knowing. A write took effect when it was acknowledged, or when it was
// indeterminate (a 503, a timeout) and some read returned its value (values are unique). The API
// promises this while the owners of a key agree on the ring (openapi/client.yaml, "Guarantee"),
// so a conflict is gated when two of its writes ran in phases where the ring stayed as it was,
// and reported otherwise. Which phases those are is observed: every node's ring, sampled every
// second (GET /cluster/ring), showed one and the same set of nodes from the phase's start until
// the workload paused, and no process started or exited meanwhile. Runs saved before the ring
// samples fall back to the nemesis: none and slow-link. The gate also fails when it would check
// nothing: no If-Match write acknowledged, or a read of a conditional key answered a value
// without an ETag (the workload then cannot condition on it).
import { groupBy } from "./group.js";
import type { Op, Outcome, PhaseRecord, RunRecord } from "./history.js";

/** Nemeses under which the ring stays as it is, for runs without ring samples. */
export const RING_STABLE_NEMESES: ReadonlySet<string> = new Set(["none", "slow-link"]);

/**
 * Whether the ring stayed as it was through `phase` (start to the workload's pause): every ring
 * sample in it names the same nodes, at least one sample was taken, and no process started or
 * exited. Without any ring sample in the run, the nemesis decides (RING_STABLE_NEMESES).
 */
export function ringStable(phase: PhaseRecord, record: Pick<RunRecord, "ring" | "processes">): boolean {
  if (phase.skipped) return false;
  const samples = record.ring ?? [];
  if (samples.length === 0) return RING_STABLE_NEMESES.has(phase.nemesis);
  const inside = (t: number) => t >= phase.start_ms && t <= phase.quiesce_ms;
  if (record.processes.some((p) => inside(p.t_ms))) return false;
  const mine = samples.filter((r) => inside(r.t_ms));
  if (mine.length === 0) return false;
  const first = (mine[0] as (typeof mine)[number]).members.join(",");
  return mine.every((r) => r.members.join(",") === first);
}

/** The names of the phases whose ring stayed as it was. */
export function ringStablePhases(record: Pick<RunRecord, "ring" | "processes" | "phases">): Set<string> {
  return new Set(record.phases.filter((p) => ringStable(p, record)).map((p) => p.name));
}

export interface ConditionalConflict {
  key: string;
  precondition: string;
  /** The phase of the last of the writes. */
  phase: string;
  writes: Array<{ value: string | null; outcome: Outcome; node: string; phase: string; invoke_ms: number; complete_ms: number }>;
}

const id = (key: string, value: string) => `${key}\u0000${value}`;

/** Keys and values some successful read returned. */
function observedValues(ops: readonly Op[]): Set<string> {
  const seen = new Set<string>();
  for (const op of ops) if (op.f === "read" && op.outcome === "ok" && op.value !== null) seen.add(id(op.key, op.value));
  return seen;
}

/** Groups of more than one conditional write of a key that took effect on the same precondition. */
export function findConditionalConflicts(ops: readonly Op[]): ConditionalConflict[] {
  const observed = observedValues(ops);
  const tookEffect = (op: Op) => op.outcome === "ok" || (op.outcome === "info" && op.value !== null && observed.has(id(op.key, op.value)));
  const groups = groupBy(
    ops.filter((op) => op.f === "write" && op.precondition !== undefined && tookEffect(op)),
    (op) => id(op.key, op.precondition as string),
  );
  const out: ConditionalConflict[] = [];
  for (const list of groups.values()) {
    if (list.length < 2) continue;
    const sorted = [...list].sort((a, b) => a.invoke_ms - b.invoke_ms);
    const first = sorted[0] as Op;
    out.push({
      key: first.key,
      precondition: first.precondition as string,
      phase: (sorted[sorted.length - 1] as Op).phase,
      writes: sorted.map((w) => ({ value: w.value, outcome: w.outcome, node: w.node, phase: w.phase, invoke_ms: w.invoke_ms, complete_ms: w.complete_ms })),
    });
  }
  return out;
}

/** True when two writes of the conflict ran in phases whose ring stayed as it was (ringStablePhases). */
export function isGatedConflict(c: ConditionalConflict, stablePhases: ReadonlySet<string>): boolean {
  return c.writes.filter((w) => stablePhases.has(w.phase)).length >= 2;
}

/** What the gate checked: acknowledged If-Match writes, 412 answers, and values read without an ETag. */
export function conditionalCoverage(ops: readonly Op[], casKeys: ReadonlySet<string>): { ifMatchAcked: number; refused: number; withoutEtag: number } {
  let ifMatchAcked = 0;
  let refused = 0;
  let withoutEtag = 0;
  for (const op of ops) {
    if (!casKeys.has(op.key)) continue;
    if (op.f === "write" && op.precondition !== undefined && op.precondition !== "*") {
      if (op.outcome === "ok") ifMatchAcked++;
      else if (op.status === 412) refused++;
    }
    if (op.f === "read" && op.outcome === "ok" && op.value !== null && op.etag === undefined) withoutEtag++;
  }
  return { ifMatchAcked, refused, withoutEtag };
}
