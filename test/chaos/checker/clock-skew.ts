// Reported, not gated: each origin node's clock offset, estimated from the versions it stamped. A
// version is wall-clock ms × 1000 + a counter, stamped while the write was in flight, so a read
// that returns a write's value bounds the stamping node's offset by the write's invoke and complete
// times. The median over all such reads is the estimate (hybrid clocks lift versions above a
// skewed node's for a while, so single samples can mislead).
import type { Op } from "./history.js";

export interface SkewEstimate {
  origin: string;
  samples: number;
  median_ms: number;
  max_ms: number;
}

export function estimateClockSkew(ops: readonly Op[]): SkewEstimate[] {
  const writes = new Map<string, Op>();
  for (const op of ops) if (op.f === "write" && op.value !== null && op.outcome === "ok") writes.set(op.value, op);
  const byOrigin = new Map<string, number[]>();
  for (const op of ops) {
    if (op.f !== "read" || op.outcome !== "ok" || op.value === null || op.version === null || !op.origin) continue;
    const w = writes.get(op.value);
    if (!w) continue;
    const stampMs = Math.floor(op.version / 1000);
    const offset = stampMs - (w.invoke_ms + w.complete_ms) / 2;
    const list = byOrigin.get(op.origin);
    if (list) list.push(offset);
    else byOrigin.set(op.origin, [offset]);
  }
  return [...byOrigin.entries()]
    .map(([origin, list]) => {
      const sorted = [...list].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)] as number;
      const max = sorted.reduce((m, v) => (Math.abs(v) > Math.abs(m) ? v : m), 0);
      return { origin, samples: sorted.length, median_ms: Math.round(median), max_ms: Math.round(max) };
    })
    .sort((a, b) => a.origin.localeCompare(b.origin));
}
