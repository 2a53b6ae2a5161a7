// Gate 6, conditional writes: of the writes conditioned on one ETag (or on the key's absence, "*"),
// at most one takes effect; two means both replaced the same version, and one of them was lost
// without either client knowing. A write took effect when it was acknowledged, or when it was
// indeterminate (a 503, a timeout) and some read returned its value (values are unique). The API
// promises this while the owners of a key agree on the ring (openapi/client.yaml, "Guarantee"),
// so a conflict is gated when two of its writes ran in phases whose nemesis leaves membership
// alone, and reported otherwise. The gate also fails when it would check nothing: no If-Match
// write acknowledged, or a read of a conditional key answered a value without an ETag (the
// workload then cannot condition on it).
import type { Op, Outcome, PhaseRecord } from "./history.js";

/** Nemeses under which the ring stays as it is: no node joins, leaves, restarts or is declared dead. */
export const RING_STABLE_NEMESES: ReadonlySet<string> = new Set(["none", "slow-link"]);

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
  const groups = new Map<string, Op[]>();
  for (const op of ops) {
    if (op.f !== "write" || op.precondition === undefined) continue;
    const tookEffect = op.outcome === "ok" || (op.outcome === "info" && op.value !== null && observed.has(id(op.key, op.value)));
    if (!tookEffect) continue;
    const group = id(op.key, op.precondition);
    const list = groups.get(group);
    if (list) list.push(op);
    else groups.set(group, [op]);
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
      writes: sorted.map((w) => ({ value: w.value, outcome: w.outcome, node: w.node, phase: w.phase, invoke_ms: w.invoke_ms, complete_ms: w.complete_ms })),
    });
  }
  return out;
}

/** True when two writes of the conflict ran in phases whose nemesis keeps the ring as it is. */
export function isGatedConflict(c: ConditionalConflict, phases: readonly PhaseRecord[]): boolean {
  const stable = new Set(phases.filter((p) => RING_STABLE_NEMESES.has(p.nemesis)).map((p) => p.name));
  return c.writes.filter((w) => stable.has(w.phase)).length >= 2;
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
