// Gate 2, no resurrection, and the reported read anomalies. A successful read is
// - fresh: some write (or delete, for absence) that could have produced it was not superseded by
//   an acknowledged mutation that completed before the read was invoked;
// - resurrected: it returned a value that an acknowledged delete had replaced before the read
//   was invoked (the delete followed the value's write in real time);
// - stale: superseded otherwise (an older value, or absence after an acknowledged write);
// - unknown: a value no write could have produced by then.
// Resurrections by QUORUM reads and checkpoint reads are gated; ONE reads may lag (eventual
// consistency), so theirs are reported with the stale reads.
import type { Consistency, Op } from "./history.js";
import { mutationsByKey, producersOf, supersedersOf } from "./real-time.js";

export type ReadClass = "fresh" | "stale" | "resurrected" | "unknown";

export interface ReadAnomaly {
  key: string;
  phase: string;
  node: string;
  consistency: Consistency;
  checkpoint: boolean;
  kind: Exclude<ReadClass, "fresh">;
  found: string | null;
  invoke_ms: number;
  /** The acknowledged mutation that had replaced the value found, for stale and resurrected reads. */
  superseded_by?: { f: string; value: string | null; complete_ms: number };
}

/** Classifies one successful read against the key's mutations. */
export function classifyRead(read: Op, mutations: readonly Op[]): { kind: ReadClass; by?: Op } {
  const producers = producersOf(read.value, mutations).filter((p) => p.invoke_ms < read.complete_ms);
  if (producers.length === 0) return { kind: "unknown" };
  let by: Op | undefined;
  for (const p of producers) {
    const before = supersedersOf(p, mutations, read.invoke_ms);
    if (before.length === 0) return { kind: "fresh" };
    by ??= before.find((x) => x.f === "delete") ?? before[0];
  }
  const deleted = read.value !== null && by?.f === "delete";
  return { kind: deleted ? "resurrected" : "stale", by };
}

/** Every non-fresh successful read of the history (workload and checkpoint reads). */
export function findReadAnomalies(ops: readonly Op[]): ReadAnomaly[] {
  const byKey = mutationsByKey(ops);
  const out: ReadAnomaly[] = [];
  for (const read of ops) {
    if (read.f !== "read" || read.outcome !== "ok") continue;
    const { kind, by } = classifyRead(read, byKey.get(read.key) ?? []);
    if (kind === "fresh") continue;
    out.push({
      key: read.key,
      phase: read.phase,
      node: read.node,
      consistency: read.consistency,
      checkpoint: read.worker === "checkpoint",
      kind,
      found: read.value,
      invoke_ms: read.invoke_ms,
      ...(by ? { superseded_by: { f: by.f, value: by.f === "write" ? by.value : null, complete_ms: by.complete_ms } } : {}),
    });
  }
  return out;
}

/** True for the anomalies gate 2 fails on: resurrections seen by a QUORUM/ALL read or a checkpoint. */
export function isGatedResurrection(a: ReadAnomaly): boolean {
  return a.kind === "resurrected" && (a.checkpoint || a.consistency !== "one");
}
