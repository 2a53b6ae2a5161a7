// The per-target view of a hint queue for operators (GET /dist/hints): pure, from the queue's
// summary and the current time.
import type { HintTargetSummary } from "./hint-queue.js";

export interface HintTargetView {
  readonly node: string;
  readonly count: number;
  readonly bytes: number;
  /** Age of the oldest queued hint, ms (0 for a hint queued this millisecond). */
  readonly oldestAgeMs: number;
  readonly replayFailing: boolean;
}

export interface HintsOverview {
  /** Targets with hints queued, sorted by node id. */
  readonly targets: readonly HintTargetView[];
  readonly totalCount: number;
  readonly totalBytes: number;
  /** Age of the oldest hint of any target, ms; 0 when nothing is queued. */
  readonly oldestAgeMs: number;
}

export function summarizeHints(targets: readonly HintTargetSummary[], nowMs: number): HintsOverview {
  const views = targets
    .map((t) => ({ node: t.target, count: t.count, bytes: t.bytes, oldestAgeMs: Math.max(0, nowMs - t.oldestQueuedAtMs), replayFailing: t.replayFailing }))
    .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  let totalCount = 0;
  let totalBytes = 0;
  let oldestAgeMs = 0;
  for (const v of views) {
    totalCount += v.count;
    totalBytes += v.bytes;
    oldestAgeMs = Math.max(oldestAgeMs, v.oldestAgeMs);
  }
  return { targets: views, totalCount, totalBytes, oldestAgeMs };
}
