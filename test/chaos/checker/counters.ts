// Gate 5, counters: increments are never lost and never applied twice. The harness never retries
// an increment and never writes or deletes a counter key, so after a heal (workload paused) each
// counter holds at least the sum of the acknowledged increments invoked before the checkpoint read,
// and at most that plus the indeterminate ones (an absent counter is 0). Deltas are positive, so a
// counter never goes down either: it holds at least what the previous checkpoint read (after
// convergence, so on every owner) plus the acknowledged increments since; without that, an
// indeterminate increment that went through would hide a later lost one. Reported, not gated: two
// acknowledged increments of a key that answered the same value (both sides of a partition may;
// a stable cluster should not).
import { groupBy } from "./group.js";
import type { KeyPlan, Op } from "./history.js";
import { checkpointReads } from "./lost-writes.js";

export type CounterReason = "lost-increments" | "extra-increments" | "not-a-counter" | "unverified";

export interface CounterViolation {
  key: string;
  /** The checkpoint (phase) whose read found it. */
  phase: string;
  /** What the checkpoint read found (null: absent or no answer). */
  found: string | null;
  /** Sum of the acknowledged increments, and of the acknowledged and indeterminate ones. */
  low: number;
  high: number;
  reason: CounterReason;
}

/** Acknowledged increments of one key that answered the same value. */
export interface CounterRepeat {
  key: string;
  phase: string;
  value: string;
  count: number;
}

export function counterKeys(keys: readonly KeyPlan[]): Set<string> {
  return new Set(keys.filter((k) => k.kind === "counter").map((k) => k.key));
}

/** The sum of the deltas of the increments invoked in [fromMs, toMs) whose outcome is one of `outcomes`. */
function deltaSum(incrs: readonly Op[], fromMs: number, toMs: number, outcomes: ReadonlyArray<Op["outcome"]>): number {
  let sum = 0;
  for (const op of incrs) if (op.invoke_ms >= fromMs && op.invoke_ms < toMs && outcomes.includes(op.outcome)) sum += op.delta ?? 0;
  return sum;
}

/** The bounds of one counter at `beforeMs` from its increments: acknowledged, and not failed. */
export function counterBounds(incrs: readonly Op[], beforeMs: number): { low: number; high: number } {
  return { low: deltaSum(incrs, -Infinity, beforeMs, ["ok"]), high: deltaSum(incrs, -Infinity, beforeMs, ["ok", "info"]) };
}

/** Every checkpoint read of a counter key outside its bounds (or without an answer). */
export function findCounterViolations(keys: readonly KeyPlan[], ops: readonly Op[]): CounterViolation[] {
  const counters = counterKeys(keys);
  const incrsByKey = groupBy(
    ops.filter((op) => op.f === "incr" && counters.has(op.key)),
    (op) => op.key,
  );
  const out: CounterViolation[] = [];
  const previous = new Map<string, { value: number; atMs: number }>();
  const reads = checkpointReads(ops)
    .filter((r) => counters.has(r.key))
    .sort((x, y) => x.invoke_ms - y.invoke_ms);
  for (const read of reads) {
    const incrs = incrsByKey.get(read.key) ?? [];
    const bounds = counterBounds(incrs, read.invoke_ms);
    const prev = previous.get(read.key);
    const low = prev === undefined ? bounds.low : Math.max(bounds.low, prev.value + deltaSum(incrs, prev.atMs, read.invoke_ms, ["ok"]));
    const base = { key: read.key, phase: read.phase, found: read.value, low, high: bounds.high };
    if (read.outcome !== "ok") out.push({ ...base, reason: "unverified" });
    else if (read.value !== null && !/^-?\d+$/.test(read.value)) out.push({ ...base, reason: "not-a-counter" });
    else {
      const n = read.value === null ? 0 : Number(read.value);
      if (n < low) out.push({ ...base, reason: "lost-increments" });
      else if (n > bounds.high) out.push({ ...base, reason: "extra-increments" });
      previous.set(read.key, { value: n, atMs: read.invoke_ms });
    }
  }
  return out;
}

/** Acknowledged increments of a key, in one phase, that answered the same value. */
export function findCounterRepeats(ops: readonly Op[]): CounterRepeat[] {
  const seen = new Map<string, CounterRepeat>();
  for (const op of ops) {
    if (op.f !== "incr" || op.outcome !== "ok" || op.value === null) continue;
    const id = `${op.phase}\u0000${op.key}\u0000${op.value}`;
    const prev = seen.get(id);
    if (prev) prev.count++;
    else seen.set(id, { key: op.key, phase: op.phase, value: op.value, count: 1 });
  }
  return [...seen.values()].filter((r) => r.count > 1);
}
