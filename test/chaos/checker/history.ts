// The records a chaos run writes and the checker reads: operations (history.jsonl), run events
// (events.jsonl) and the key plan (keys.json). Plain data, so a saved run can be checked offline.

/** ok: acknowledged. fail: certainly not applied (never sent, or a 4xx). info: indeterminate. */
export type Outcome = "ok" | "fail" | "info";
/**
 * A conditional write is a `write` with a `precondition`; an `incr` adds `delta` to a counter key.
 * A `lease` is a lease read (`?lease=`), a lease fill is a `write` with its `lease` token, and a
 * `release` gives a lease back unfilled (DELETE .../lease).
 */
export type OpKind = "write" | "delete" | "read" | "incr" | "lease" | "release";
/** What a lease read answered: a value (200), the lease (404 with X-Cache-Lease), LEASE_HELD, or a plain 404. */
export type LeaseAnswer = "hit" | "granted" | "held" | "none";
export type Consistency = "one" | "quorum" | "all";

/** One client operation, as the workload (or a checkpoint read) saw it. Times are epoch ms (fractional). */
export interface Op {
  /** Worker index, or "checkpoint" for the reads taken after each phase with the workload paused. */
  worker: number | "checkpoint";
  f: OpKind;
  key: string;
  /** The value written, or the value read (null: the key was absent). Written values are unique. */
  value: string | null;
  invoke_ms: number;
  /** When the answer (or the timeout) came. For `info`, the op may have taken effect until then. */
  complete_ms: number;
  outcome: Outcome;
  /** The node the request was sent to. */
  node: string;
  /** Version and origin of the item read (reads only; null otherwise or when absent). */
  version: number | null;
  origin: string | null;
  consistency: Consistency;
  /** The phase running when the op was invoked. */
  phase: string;
  /** HTTP status, null when no answer came. */
  status: number | null;
  code: string | null;
  error?: string;
  /** Conditional writes: the ETag the write was conditioned on (If-Match), or "*" (If-None-Match: *). */
  precondition?: string;
  /** Increments: what was added. Their `value` is the counter's value answered (ok only). */
  delta?: number;
  /** The ETag answered by a successful read or write, when there was one. */
  etag?: string;
  /** Lease reads: the token granted (answer "granted"); fills and releases: the token they name. */
  lease?: string;
  /** Lease reads: how long the lease lasts if this read gets it (ms), and what the read answered (ok only). */
  lease_ms?: number;
  lease_answer?: LeaseAnswer;
  /** Lease fills: the TTL of the value stored (ms). */
  ttl_ms?: number;
}

/**
 * single: one writer; contended: every worker writes and deletes; cas: every worker writes only
 * conditionally (on the ETag it just read); counter: every worker increments, nothing else;
 * lease: every worker reads with a lease, and the holder fills it (a value with a short TTL) or
 * releases it; nothing else writes.
 */
export type KeyKind = "single" | "contended" | "cas" | "counter" | "lease";

export interface KeyPlan {
  key: string;
  kind: KeyKind;
  /** The only worker that writes a single-writer key. */
  writer?: number;
}

/** The timeline of one phase: its nemesis starts, is healed, the workload is paused, the checkpoint ends. */
export interface PhaseRecord {
  name: string;
  nemesis: string;
  start_ms: number;
  heal_ms: number;
  quiesce_ms: number;
  end_ms: number;
  /** Set when the nemesis could not run here (and why). */
  skipped?: string;
  detail?: Record<string, unknown>;
}

/** HEAD `consistency=one` of one owner: status 0 when no answer came. */
export interface CopySample {
  node: string;
  status: number;
  version: number | null;
  origin: string | null;
}

export interface KeySample {
  key: string;
  owners: string[];
  copies: CopySample[];
}

export interface ConvergenceRound {
  phase: string;
  t_ms: number;
  samples: KeySample[];
}

export type ProcessAction = "start" | "exit";

export interface ProcessEvent {
  node: string;
  t_ms: number;
  action: ProcessAction;
  /** True when the harness caused this exit (kill, SIGTERM) or start. */
  expected: boolean;
  code?: number | null;
  signal?: string | null;
}

/** A log record at level error, or anything a node wrote to stderr. */
export interface LogFinding {
  node: string;
  t_ms: number;
  source: "log" | "stderr";
  text: string;
}

/** A node that did not answer /healthz after a heal although it should be running. */
export interface LivenessFinding {
  node: string;
  t_ms: number;
  phase: string;
  error: string;
}

/** A node's wall clock against the driver's, from the Date header of one answer (±1 s). */
export interface ClockSample {
  node: string;
  t_ms: number;
  offset_ms: number;
}

/** The ids on one node's ring (GET /cluster/ring), sampled every second. */
export interface RingSample {
  node: string;
  t_ms: number;
  members: string[];
}

export type RunEvent =
  | ({ type: "phase" } & PhaseRecord)
  | ({ type: "ring" } & RingSample)
  | ({ type: "process" } & ProcessEvent)
  | ({ type: "convergence" } & ConvergenceRound)
  | ({ type: "log" } & LogFinding)
  | ({ type: "liveness" } & LivenessFinding)
  | ({ type: "clock" } & ClockSample);

/** Everything the checker looks at. */
export interface RunRecord {
  ops: Op[];
  keys: KeyPlan[];
  phases: PhaseRecord[];
  convergence: ConvergenceRound[];
  processes: ProcessEvent[];
  logs: LogFinding[];
  liveness: LivenessFinding[];
  clock: ClockSample[];
  /** Absent in runs saved before the ring samples (2026-11-30). */
  ring?: RingSample[];
}

/** Splits the event stream into the parts of a RunRecord. */
export function recordFrom(ops: Op[], keys: KeyPlan[], events: RunEvent[]): RunRecord {
  const record: RunRecord = { ops, keys, phases: [], convergence: [], processes: [], logs: [], liveness: [], clock: [], ring: [] };
  for (const e of events) {
    const { type, ...rest } = e;
    if (type === "phase") record.phases.push(rest as PhaseRecord);
    else if (type === "process") record.processes.push(rest as ProcessEvent);
    else if (type === "convergence") record.convergence.push(rest as ConvergenceRound);
    else if (type === "log") record.logs.push(rest as LogFinding);
    else if (type === "liveness") record.liveness.push(rest as LivenessFinding);
    else if (type === "clock") record.clock.push(rest as ClockSample);
    else if (type === "ring") record.ring?.push(rest as RingSample);
  }
  return record;
}

/** Parses JSON Lines, skipping blank lines; a malformed line throws with its number. */
export function parseJsonLines<T>(text: string): T[] {
  const out: T[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch (err) {
      throw new Error(`line ${i + 1}: ${(err as Error).message}`);
    }
  }
  return out;
}
