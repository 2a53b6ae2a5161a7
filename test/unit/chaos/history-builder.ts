// Hand-made histories for the checker's unit tests: ops written as [invoke, complete] intervals.
import type { Consistency, Op, Outcome, PhaseRecord, RunRecord } from "../../chaos/checker/history.js";

interface OpSpec {
  worker?: number | "checkpoint";
  key?: string;
  at: [number, number];
  outcome?: Outcome;
  node?: string;
  consistency?: Consistency;
  phase?: string;
  version?: number | null;
  origin?: string | null;
  status?: number | null;
  /** The ETag the answer carried. */
  etag?: string;
}

function op(f: Op["f"], value: string | null, s: OpSpec): Op {
  const outcome = s.outcome ?? "ok";
  return {
    worker: s.worker ?? 0,
    f,
    key: s.key ?? "k",
    value,
    invoke_ms: s.at[0],
    complete_ms: s.at[1],
    outcome,
    node: s.node ?? "n1",
    version: s.version ?? null,
    origin: s.origin ?? null,
    consistency: s.consistency ?? "quorum",
    phase: s.phase ?? "p1",
    status: s.status === undefined ? (outcome === "ok" ? 200 : outcome === "fail" ? 400 : null) : s.status,
    code: null,
    ...(s.etag !== undefined ? { etag: s.etag } : {}),
  };
}

export const write = (value: string, s: OpSpec): Op => op("write", value, s);
/** A write conditioned on `precondition` (an ETag, or "*" for If-None-Match: *). */
export const cas = (value: string, precondition: string, s: OpSpec): Op => ({ ...op("write", value, s), precondition });
/** An increment by `delta`; `value` is the counter's value answered (ok only). */
export const incr = (delta: number, value: string | null, s: OpSpec): Op => ({ ...op("incr", value, s), delta });
export const del = (s: OpSpec): Op => op("delete", null, s);
/** A lease read that got the lease `token` for `leaseMs` (404 with X-Cache-Lease). */
export const grant = (token: string, leaseMs: number, s: OpSpec): Op => ({ ...op("lease", null, { status: 404, ...s }), lease: token, lease_ms: leaseMs, lease_answer: "granted" });
/** A lease read answered with a value (a hit, or a waiter's value). */
export const leaseHit = (value: string, s: OpSpec): Op => ({ ...op("lease", value, s), lease_ms: 2_000, lease_answer: "hit" });
/** The fill of the lease `token` (ok: 200; a refused one: outcome "fail", status 409). */
export const fill = (value: string, token: string, s: OpSpec): Op => ({ ...op("write", value, s), lease: token, ttl_ms: 1_500 });
/** The release of the lease `token` (ok: 204; a refused one: outcome "fail", status 409). */
export const release = (token: string, s: OpSpec): Op => ({ ...op("release", null, { status: s.outcome === undefined || s.outcome === "ok" ? 204 : s.status, ...s }), lease: token });
export const read = (value: string | null, s: OpSpec): Op => op("read", value, s);
/** The read a checkpoint takes of one key after the phase (workload paused). */
export const checkpoint = (value: string | null, s: Omit<OpSpec, "worker">): Op => op("read", value, { ...s, worker: "checkpoint" });

export function phase(name: string, start: number, heal: number, quiesce: number, end: number, extra: Partial<PhaseRecord> = {}): PhaseRecord {
  return { name, nemesis: extra.nemesis ?? name, start_ms: start, heal_ms: heal, quiesce_ms: quiesce, end_ms: end, ...extra };
}

export function emptyRecord(over: Partial<RunRecord> = {}): RunRecord {
  return { ops: [], keys: [{ key: "k", kind: "single", writer: 0 }], phases: [], convergence: [], processes: [], logs: [], liveness: [], clock: [], ...over };
}
