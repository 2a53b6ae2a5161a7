// Gate 4, no crash: only processes the harness stopped are down (every other exit, and a node that
// does not answer after a heal, is a crash), no request answered 500, and no node logged an error
// record or wrote to stderr.
import type { LivenessFinding, LogFinding, Op, ProcessEvent } from "./history.js";

export type CrashKind = "unexpected-exit" | "unresponsive" | "http-500" | "error-log";

export interface Crash {
  kind: CrashKind;
  node: string;
  t_ms: number;
  detail: string;
}

export function findCrashes(processes: readonly ProcessEvent[], liveness: readonly LivenessFinding[], logs: readonly LogFinding[], ops: readonly Op[]): Crash[] {
  const out: Crash[] = [];
  for (const p of processes) {
    if (p.action !== "exit" || p.expected) continue;
    out.push({ kind: "unexpected-exit", node: p.node, t_ms: p.t_ms, detail: `exited with ${p.code ?? p.signal ?? "?"}` });
  }
  for (const l of liveness) out.push({ kind: "unresponsive", node: l.node, t_ms: l.t_ms, detail: l.error });
  for (const op of ops) {
    if (op.status === 500) out.push({ kind: "http-500", node: op.node, t_ms: op.invoke_ms, detail: `${op.f} ${op.key}: ${op.code ?? ""} ${op.error ?? ""}`.trim() });
  }
  for (const l of logs) out.push({ kind: "error-log", node: l.node, t_ms: l.t_ms, detail: `${l.source}: ${l.text.slice(0, 300)}` });
  return out.sort((a, b) => a.t_ms - b.t_ms);
}
