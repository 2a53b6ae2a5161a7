// Gate 7, stampede leases (openapi/client.yaml, "Stampede leases"). The lease keys are written
// only by their holders' fills (values that live a short TTL), so:
// - one lease at a time: a lease granted while another lease of the key still had time left must
//   follow that lease's fill or release: nothing else ends it (for two lease reads that overlap
//   in real time, either may have been granted first, so both orders must be impossible);
// - a fill or release is answered only while its lease is held: one acknowledged after the lease
//   ran out, after it was released or filled, or after a newer lease of the key was granted, is a
//   violation; and one refused (409) while its lease surely still held (answered before its time
//   could have run out, and nothing else of that lease came first) is one too;
// - a refused fill stores nothing: every value read from a lease key (a lease read's hit or
//   waiter's answer, a checkpoint read) was written by a fill that was not refused.
// Leases live in the primary's memory, so a change of primary loses them and a new lease may be
// granted at once: the first two rules are gated where the ring stays as it is (ringStablePhases,
// as gate 6) and reported elsewhere, the third gated always. Times are the harness clock's; a lease taken by a read lasts at
// least its length from the read's invoke, and ends at most its length after its completion (the
// primary's monotonic clock, and timers that may fire late but never early).
import { groupBy } from "./group.js";
import type { KeyPlan, Op } from "./history.js";

/** A lease ends no earlier than this before its length after its grant (scheduling slack, ms). */
export const LEASE_SLACK_MS = 50;

export type LeaseViolationKind = "double-grant" | "late-fill" | "late-release" | "refused-while-held" | "refused-fill-read";

export interface LeaseViolation {
  kind: LeaseViolationKind;
  key: string;
  /** The phase of the later operation. */
  phase: string;
  /** Gated (the ring stayed as it was through the phases involved, or the rule holds anyway), else reported. */
  gated: boolean;
  /** The lease that was broken: its token, and when it was taken. */
  token: string | null;
  why: string;
  op: { f: string; value: string | null; lease?: string; node: string; invoke_ms: number; complete_ms: number };
}

/** What the workload did with leases: the gate fails when nothing was granted or filled. */
export interface LeaseCoverage {
  granted: number;
  /** Grants recorded without their length (older or hand-made histories): not checked. */
  unchecked: number;
  held: number;
  none: number;
  hits: number;
  filled: number;
  fillRefused: number;
  released: number;
  releaseRefused: number;
}

const took = (op: Op) => op.outcome !== "fail";
const grantOf = (op: Op) => op.f === "lease" && op.outcome === "ok" && op.lease_answer === "granted" && op.lease !== undefined;
/** A grant the rules can check: its token and its length are known. */
const checkable = (op: Op) => grantOf(op) && op.lease_ms !== undefined;
const endsLease = (op: Op) => (op.f === "write" || op.f === "release") && took(op);

function brief(op: Op): LeaseViolation["op"] {
  return { f: op.f, value: op.value, ...(op.lease !== undefined ? { lease: op.lease } : {}), node: op.node, invoke_ms: op.invoke_ms, complete_ms: op.complete_ms };
}

/** The keys of the `lease` kind. */
export function leaseKeys(keys: readonly KeyPlan[]): Set<string> {
  return new Set(keys.filter((k) => k.kind === "lease").map((k) => k.key));
}

/** Why `op` (a fill or a release of `grant`'s lease, invoked after it) could not have found the lease held, or undefined. */
function endedBefore(grant: Op, op: Op, sameLease: readonly Op[], grants: readonly Op[]): string | undefined {
  const leaseMs = grant.lease_ms as number;
  if (op.invoke_ms > grant.complete_ms + leaseMs + LEASE_SLACK_MS) return `invoked ${Math.round(op.invoke_ms - grant.complete_ms)} ms after the ${leaseMs} ms lease was granted`;
  const ender = sameLease.find((o) => o !== op && o.outcome === "ok" && (o.f === "write" || o.f === "release") && o.complete_ms < op.invoke_ms);
  if (ender) return `invoked after the lease was ${ender.f === "write" ? "filled" : "released"} (acknowledged at ${Math.round(ender.complete_ms)})`;
  const newer = grants.find((g) => g.lease !== grant.lease && g.invoke_ms > grant.complete_ms && g.complete_ms < op.invoke_ms);
  if (newer) return `invoked after a newer lease of the key (${newer.lease}) was granted`;
  return undefined;
}

function grantViolations(key: string, grants: readonly Op[], byToken: Map<string, Op[]>, stable: ReadonlySet<string>): LeaseViolation[] {
  // `later`, had it been granted after `first`, would have found `first` surely held: answered
  // before `first`'s time could have run out, and no fill or release of `first` invoked by then
  const blocked = (first: Op, later: Op) =>
    later.complete_ms < first.invoke_ms + (first.lease_ms as number) - LEASE_SLACK_MS && !(byToken.get(first.lease as string) ?? []).some((e) => endsLease(e) && e.invoke_ms < later.complete_ms);
  const out: LeaseViolation[] = [];
  grants.forEach((first, i) => {
    for (const later of grants.slice(i + 1)) {
      // grants are in invoke order; overlapping reads were granted in an order nobody saw
      const overlap = later.invoke_ms <= first.complete_ms;
      if (!blocked(first, later) || (overlap && !blocked(later, first))) continue;
      out.push({
        kind: "double-grant",
        key,
        phase: later.phase,
        gated: stable.has(first.phase) && stable.has(later.phase),
        token: first.lease as string,
        why: `granted ${Math.round(later.complete_ms - first.invoke_ms)} ms into the ${first.lease_ms} ms lease ${first.lease}${overlap ? " (the two lease reads overlapped; neither lease could have ended before the other was granted)" : ""}, which no fill or release had ended`,
        op: brief(later),
      });
    }
  });
  return out;
}

/** A fill or release refused (409) although its lease surely still held: answered within its time, nothing else of the lease before it. */
function refusedWhileHeld(grant: Op, op: Op, sameLease: readonly Op[]): string | undefined {
  if (op.outcome !== "fail" || op.status !== 409) return undefined;
  if (op.complete_ms >= grant.invoke_ms + (grant.lease_ms as number) - LEASE_SLACK_MS) return undefined;
  if (sameLease.some((o) => o !== op && endsLease(o) && o.invoke_ms < op.complete_ms)) return undefined;
  return `refused (409) ${Math.round(op.complete_ms - grant.invoke_ms)} ms into its ${grant.lease_ms} ms lease, which nothing had ended`;
}

function answerViolations(key: string, grants: readonly Op[], byToken: Map<string, Op[]>, stable: ReadonlySet<string>): LeaseViolation[] {
  const out: LeaseViolation[] = [];
  for (const grant of grants) {
    const sameLease = byToken.get(grant.lease as string) ?? [];
    for (const op of sameLease) {
      if (op.f !== "write" && op.f !== "release") continue;
      const gated = stable.has(grant.phase) && stable.has(op.phase);
      const late = op.outcome === "ok" ? endedBefore(grant, op, sameLease, grants) : undefined;
      if (late !== undefined) out.push({ kind: op.f === "write" ? "late-fill" : "late-release", key, phase: op.phase, gated, token: grant.lease as string, why: late, op: brief(op) });
      const refused = refusedWhileHeld(grant, op, sameLease);
      if (refused !== undefined) out.push({ kind: "refused-while-held", key, phase: op.phase, gated, token: grant.lease as string, why: refused, op: brief(op) });
    }
  }
  return out;
}

/** Reads of a lease key that returned a value only a refused (4xx) fill carried. */
function refusedFillReads(key: string, ops: readonly Op[]): LeaseViolation[] {
  const written = groupBy(ops.filter((op) => op.f === "write" && op.value !== null), (op) => op.value as string);
  const out: LeaseViolation[] = [];
  for (const op of ops) {
    if ((op.f !== "read" && op.f !== "lease") || op.outcome !== "ok" || op.value === null) continue;
    const producers = written.get(op.value) ?? [];
    if (producers.some(took)) continue;
    const why = producers.length === 0 ? "read a value no fill of the key wrote" : `read the value of a fill answered ${producers[0]?.status} (refused: it must store nothing)`;
    out.push({ kind: "refused-fill-read", key, phase: op.phase, gated: true, token: producers[0]?.lease ?? null, why, op: brief(op) });
  }
  return out;
}

/** Every broken lease promise on the lease keys; those of the first two rules outside `stablePhases` are not `gated`. */
export function findLeaseViolations(keys: ReadonlySet<string>, ops: readonly Op[], stablePhases: ReadonlySet<string>): LeaseViolation[] {
  const out: LeaseViolation[] = [];
  for (const [key, list] of groupBy(ops.filter((o) => keys.has(o.key)), (o) => o.key)) {
    const grants = list.filter(checkable).sort((a, b) => a.invoke_ms - b.invoke_ms);
    const byToken = groupBy(list.filter((o) => o.lease !== undefined), (o) => o.lease as string);
    out.push(...grantViolations(key, grants, byToken, stablePhases), ...answerViolations(key, grants, byToken, stablePhases), ...refusedFillReads(key, list));
  }
  return out;
}

/** Counts of lease answers on the lease keys. */
export function leaseCoverage(keys: ReadonlySet<string>, ops: readonly Op[]): LeaseCoverage {
  const c: LeaseCoverage = { granted: 0, unchecked: 0, held: 0, none: 0, hits: 0, filled: 0, fillRefused: 0, released: 0, releaseRefused: 0 };
  for (const op of ops) {
    if (!keys.has(op.key)) continue;
    if (op.f === "lease" && op.outcome === "ok") {
      if (op.lease_answer === "granted") {
        c.granted++;
        if (op.lease_ms === undefined) c.unchecked++;
      } else if (op.lease_answer === "held") c.held++;
      else if (op.lease_answer === "none") c.none++;
      else if (op.lease_answer === "hit") c.hits++;
    } else if (op.f === "write" && op.lease !== undefined) {
      if (op.outcome === "ok") c.filled++;
      else if (op.status === 409) c.fillRefused++;
    } else if (op.f === "release") {
      if (op.outcome === "ok") c.released++;
      else if (op.status === 409) c.releaseRefused++;
    }
  }
  return c;
}
