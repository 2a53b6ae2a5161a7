// The metric names of the two hint queues: "hinted" for replica hints, "migration" for failed
// rebalance migrations (and a draining node's undelivered records).
import type { CounterName, GaugeName } from "../../observability/index.js";

/** The metric names of one queue: "hinted" for replica hints, "migration" for migrations. */
export interface HintMetricNames {
  readonly queued: CounterName;
  readonly replayed: CounterName;
  readonly expired: CounterName;
  readonly dropped: CounterName;
  readonly globalDropped: CounterName;
  /** Replays the target refused (it did not own the key in its view): kept until their TTL. */
  readonly refused: CounterName;
  readonly bytes?: GaugeName;
  readonly lastAgeNs?: GaugeName;
  /** Hints a draining node handed to a live owner because their target was unreachable. */
  readonly handedOff: CounterName;
}

export const HINTED_METRICS: HintMetricNames = Object.freeze({
  queued: "dist.hinted.queued",
  replayed: "dist.hinted.replayed",
  expired: "dist.hinted.expired",
  dropped: "dist.hinted.dropped",
  globalDropped: "dist.hinted.global_dropped",
  refused: "dist.hinted.refused",
  bytes: "dist.hinted.bytes",
  handedOff: "dist.hinted.handed_off",
});

export const MIGRATION_METRICS: HintMetricNames = Object.freeze({
  queued: "dist.migration.queued",
  replayed: "dist.migration.replayed",
  expired: "dist.migration.expired",
  dropped: "dist.migration.dropped",
  globalDropped: "dist.migration.dropped",
  refused: "dist.migration.refused",
  lastAgeNs: "dist.migration.last_age_ns",
  handedOff: "dist.migration.handed_off",
});
