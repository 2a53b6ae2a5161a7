// Gate 1, no lost write: after a heal (with the workload paused) every key holds a value that no
// acknowledged write or delete followed in real time. For a single-writer key that is its last
// acknowledged write (or delete), or a later indeterminate one; for a contended key, any write
// that was not superseded by an acknowledged one.
import type { KeyKind, KeyPlan, Op } from "./history.js";
import { lastAcknowledged, mutationsByKey, producersOf, resultOf, supersedersOf, writtenByFailedOp } from "./real-time.js";

export type LostReason = "superseded" | "failed-write" | "unknown-value" | "unverified";

export interface LostWrite {
  key: string;
  kind: KeyKind;
  /** The checkpoint (phase) whose read found the problem. */
  phase: string;
  /** What the checkpoint read found (null: absent), with its version and origin when present. */
  found: string | null;
  found_version?: number | null;
  found_origin?: string | null;
  /** The last acknowledged mutation's result (null: absent or none). */
  expected: string | null;
  /** The phase in which the lost acknowledged mutation was invoked. */
  lost_phase: string | null;
  reason: LostReason;
  /** The acknowledged mutation that should have replaced what was found. */
  superseded_by?: { value: string | null; f: string; invoke_ms: number; complete_ms: number };
}

/**
 * Checks one key against one checkpoint read. `mutations` are the key's writes and deletes invoked
 * before the checkpoint read. Returns undefined when the found state is allowed.
 */
export function checkKeyAtCheckpoint(plan: KeyPlan, mutations: readonly Op[], read: Op): LostWrite | undefined {
  const last = lastAcknowledged(mutations);
  const base = {
    key: plan.key,
    kind: plan.kind,
    phase: read.phase,
    expected: last ? resultOf(last) : null,
    lost_phase: last?.phase ?? null,
  };
  if (read.outcome !== "ok") return { ...base, found: null, reason: "unverified" };
  const found = read.value;
  const stamp = { found_version: read.version, found_origin: read.origin };
  const producers = producersOf(found, mutations);
  if (producers.length === 0) {
    const reason = found !== null && writtenByFailedOp(found, mutations) ? "failed-write" : "unknown-value";
    return { ...base, ...stamp, found, reason };
  }
  let firstSuperseder: Op | undefined;
  for (const p of producers) {
    const later = supersedersOf(p, mutations);
    if (later.length === 0) return undefined;
    firstSuperseder ??= later.reduce((a, b) => (b.invoke_ms < a.invoke_ms ? b : a));
  }
  const by = firstSuperseder as Op;
  return {
    ...base,
    ...stamp,
    found,
    reason: "superseded",
    superseded_by: { value: resultOf(by), f: by.f, invoke_ms: by.invoke_ms, complete_ms: by.complete_ms },
  };
}

/**
 * Every lost write found by the checkpoint reads. A checkpoint read is matched with the mutations
 * invoked before it; a key with no (or no successful) checkpoint read counts as `unverified`.
 */
export function findLostWrites(keys: readonly KeyPlan[], ops: readonly Op[]): LostWrite[] {
  const byKey = mutationsByKey(ops);
  const plans = new Map(keys.map((k) => [k.key, k]));
  const lost: LostWrite[] = [];
  for (const read of checkpointReads(ops)) {
    const plan = plans.get(read.key) ?? { key: read.key, kind: "contended" as const };
    const before = (byKey.get(read.key) ?? []).filter((m) => m.invoke_ms < read.invoke_ms);
    const problem = checkKeyAtCheckpoint(plan, before, read);
    if (problem) lost.push(problem);
  }
  return lost;
}

/**
 * The checkpoint read that counts for each (phase, key): the first successful attempt, else the
 * last failed one (the harness retries a failed checkpoint read on other nodes).
 */
export function checkpointReads(ops: readonly Op[]): Op[] {
  const chosen = new Map<string, Op>();
  for (const op of ops) {
    if (op.worker !== "checkpoint" || op.f !== "read") continue;
    const id = `${op.phase}\u0000${op.key}`;
    const prev = chosen.get(id);
    if (!prev || (prev.outcome !== "ok" && (op.outcome === "ok" || op.invoke_ms > prev.invoke_ms))) chosen.set(id, op);
  }
  return [...chosen.values()];
}
