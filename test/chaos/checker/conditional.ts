// Gate 6, conditional writes: of the writes conditioned on one ETag (or on the key's absence, "*"),
// at most one is acknowledged; two acknowledged means both replaced the same version, and one of
// them was lost without either client knowing. The API promises this while the owners of a key
// agree on the ring (openapi/client.yaml, "Guarantee"), so conflicts are gated in phases whose
// nemesis leaves membership alone and reported in the others.
import type { Op, PhaseRecord } from "./history.js";

/** Nemeses under which the ring stays as it is: no node joins, leaves, restarts or is declared dead. */
export const RING_STABLE_NEMESES: ReadonlySet<string> = new Set(["none", "slow-link"]);

export interface ConditionalConflict {
  key: string;
  precondition: string;
  /** The phase of the later of the acknowledged writes. */
  phase: string;
  writes: Array<{ value: string | null; node: string; phase: string; invoke_ms: number; complete_ms: number }>;
}

/** Groups of more than one acknowledged conditional write of a key on the same precondition. */
export function findConditionalConflicts(ops: readonly Op[]): ConditionalConflict[] {
  const groups = new Map<string, Op[]>();
  for (const op of ops) {
    if (op.f !== "write" || op.precondition === undefined || op.outcome !== "ok") continue;
    const id = `${op.key}\u0000${op.precondition}`;
    const list = groups.get(id);
    if (list) list.push(op);
    else groups.set(id, [op]);
  }
  const out: ConditionalConflict[] = [];
  for (const list of groups.values()) {
    if (list.length < 2) continue;
    const sorted = [...list].sort((a, b) => a.invoke_ms - b.invoke_ms);
    const first = sorted[0] as Op;
    out.push({
      key: first.key,
      precondition: first.precondition as string,
      phase: (sorted[sorted.length - 1] as Op).phase,
      writes: sorted.map((w) => ({ value: w.value, node: w.node, phase: w.phase, invoke_ms: w.invoke_ms, complete_ms: w.complete_ms })),
    });
  }
  return out;
}

/** True when a conflict in `phase` breaks the promise (its nemesis keeps the ring as it is). */
export function isGatedConflict(c: ConditionalConflict, phases: readonly PhaseRecord[]): boolean {
  const p = phases.find((x) => x.name === c.phase);
  return p !== undefined && RING_STABLE_NEMESES.has(p.nemesis) && c.writes.every((w) => w.phase === c.phase);
}
