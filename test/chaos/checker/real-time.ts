// Real-time order between operations on one key: which writes or deletes can explain a value that
// was observed, and whether an acknowledged operation followed (superseded) them.
//
// An `info` operation is taken to have taken effect by its complete_ms or never (the workload's
// timeout is longer than any server-side call chain, see the README of test/chaos); a `fail`
// operation never took effect. The key starts absent: the INITIAL producer completed at -Infinity.
import { groupBy } from "./group.js";
import type { Op } from "./history.js";

/** A mutation that may have produced an observed state: a write, a delete, or the initial absence. */
export interface Producer {
  op: Op | "initial";
  invoke_ms: number;
  complete_ms: number;
}

const INITIAL: Producer = { op: "initial", invoke_ms: -Infinity, complete_ms: -Infinity };

export function isMutation(op: Op): boolean {
  return op.f === "write" || op.f === "delete";
}

/** The workload's writes and deletes (not the checkpoints' reads), by key. */
export function mutationsByKey(ops: readonly Op[]): Map<string, Op[]> {
  return groupBy(
    ops.filter((op) => op.worker !== "checkpoint" && isMutation(op)),
    (op) => op.key,
  );
}

/**
 * The mutations that could have produced `value` (null: absent): the non-failed write of that
 * value (values are unique), or for absence the non-failed deletes and the initial state.
 */
export function producersOf(value: string | null, mutations: readonly Op[]): Producer[] {
  const out: Producer[] = [];
  for (const m of mutations) {
    if (m.outcome === "fail") continue;
    if (value === null ? m.f === "delete" : m.f === "write" && m.value === value) {
      out.push({ op: m, invoke_ms: m.invoke_ms, complete_ms: m.complete_ms });
    }
  }
  if (value === null) out.push(INITIAL);
  return out;
}

/** True when some failed write wrote `value` (the value of a write the client was told failed). */
export function writtenByFailedOp(value: string, mutations: readonly Op[]): boolean {
  return mutations.some((m) => m.f === "write" && m.value === value && m.outcome === "fail");
}

/**
 * The acknowledged mutations that followed `p` in real time (invoked after it completed), and, when
 * `before_ms` is given, completed before that instant.
 */
export function supersedersOf(p: Producer, mutations: readonly Op[], before_ms = Infinity): Op[] {
  return mutations.filter((x) => x.outcome === "ok" && x !== p.op && x.invoke_ms > p.complete_ms && x.complete_ms < before_ms);
}

/** The effect of a mutation: the value it leaves (null for a delete). */
export function resultOf(op: Op): string | null {
  return op.f === "write" ? op.value : null;
}

/** The acknowledged mutation that completed last, if any. */
export function lastAcknowledged(mutations: readonly Op[]): Op | undefined {
  let last: Op | undefined;
  for (const m of mutations) if (m.outcome === "ok" && (!last || m.complete_ms > last.complete_ms)) last = m;
  return last;
}
