// Reported, not gated: how many operations of a phase succeeded, and the longest stretch of the
// phase without an acknowledged write (the writes are QUORUM, so this is when clients could not
// write at all).
import type { Op, PhaseRecord } from "./history.js";

export interface Availability {
  ok: number;
  fail: number;
  info: number;
  /** Acknowledged writes, deletes and increments (lease fills and releases not counted). */
  acked: number;
  /** ok / all, per kind of operation; null when there was none. */
  write_ratio: number | null;
  read_ratio: number | null;
  longest_write_outage_ms: number;
}

export function phaseAvailability(phase: PhaseRecord, ops: readonly Op[]): Availability {
  const mine = ops.filter((o) => o.worker !== "checkpoint" && o.phase === phase.name);
  const count = (pred: (o: Op) => boolean) => mine.filter(pred).length;
  // lease reads are reads; a lease cycle's fill or release (each carries its token) is answered by
  // the primary alone and is refused by design when late, so it is neither (gate 7 judges both)
  const writes = mine.filter((o) => o.f !== "read" && o.f !== "lease" && o.lease === undefined);
  const reads = mine.filter((o) => o.f === "read" || o.f === "lease");
  const ratio = (list: Op[]) => (list.length === 0 ? null : list.filter((o) => o.outcome === "ok").length / list.length);
  return {
    ok: count((o) => o.outcome === "ok"),
    fail: count((o) => o.outcome === "fail"),
    info: count((o) => o.outcome === "info"),
    acked: writes.filter((o) => o.outcome === "ok").length,
    write_ratio: ratio(writes),
    read_ratio: ratio(reads),
    longest_write_outage_ms: longestGap(
      writes.filter((o) => o.outcome === "ok").map((o) => o.complete_ms),
      phase.start_ms,
      phase.quiesce_ms,
    ),
  };
}

/** The longest interval within [from, to] that contains none of `times`. */
export function longestGap(times: readonly number[], from: number, to: number): number {
  const inside = times.filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  let prev = from;
  let longest = 0;
  for (const t of [...inside, to]) {
    longest = Math.max(longest, t - prev);
    prev = t;
  }
  return longest;
}
