// Leaving the cluster on SIGTERM: drain, wait until the hand-off says the node is safe to stop
// (or the drain timeout passes), logging progress every few seconds, then announce that the
// node left. A node that timed out does not announce it: its data was not handed off, so peers
// keep counting it (it may come back) and treat it as failed when they stop reaching it. A node
// whose every peer is leaving too, or that never knew another node, is safe with its records
// still held, and says so.
import { sleep, type Clock, type Timers } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { DrainStatus } from "./drain-status.js";

export interface DepartureDeps {
  /** Enters draining (Lifecycle.drain). */
  readonly drain: (reason: string) => void;
  /** The hand-off status (DrainHandoff.status). */
  readonly status: () => DrainStatus;
  /** Announces that this node left (its own gossip claim carries `left`) to every alive peer. */
  readonly leave: () => Promise<void>;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly logger: Logger;
  /** SERVICE_DRAIN_TIMEOUT, ms. */
  readonly timeoutMs: number;
  /** How often progress is logged, ms. */
  readonly progressEveryMs: number;
  /** How often the status is checked, ms. */
  readonly pollMs: number;
}

export interface DepartureOutcome {
  /** True when the node was safe to stop (and announced that it left) before the timeout. */
  readonly safe: boolean;
  readonly status: DrainStatus;
  readonly elapsedMs: number;
}

/** Drains, waits for safe_to_stop or the timeout, and leaves when safe. */
export async function depart(deps: DepartureDeps, reason: string): Promise<DepartureOutcome> {
  const { clock, logger } = deps;
  const started = clock.monotonicMs();
  deps.drain(reason);
  let nextProgress = started + deps.progressEveryMs;
  for (;;) {
    const status = deps.status();
    const elapsedMs = clock.monotonicMs() - started;
    if (status.safe_to_stop) {
      // Safe with records still held: every peer is leaving too, or there never was one, so nobody could take them.
      if (status.hints_pending + status.migrations_pending > 0) logger.warn(LOG.drainWithPeersLeaving, { elapsed_ms: Math.round(elapsedMs), ...progressFields(status) });
      else logger.info(LOG.drainSafe, { elapsed_ms: Math.round(elapsedMs) });
      await deps.leave();
      logger.info(LOG.leftCluster, {});
      return { safe: true, status: deps.status(), elapsedMs };
    }
    if (elapsedMs >= deps.timeoutMs) {
      logger.error(LOG.drainTimedOut, { elapsed_ms: Math.round(elapsedMs), timeout_ms: deps.timeoutMs, ...progressFields(status) });
      return { safe: false, status, elapsedMs };
    }
    if (clock.monotonicMs() >= nextProgress) {
      logger.info(LOG.drainProgress, { elapsed_ms: Math.round(elapsedMs), ...progressFields(status) });
      nextProgress += deps.progressEveryMs;
    }
    await sleep(deps.timers, Math.min(deps.pollMs, Math.max(1, deps.timeoutMs - elapsedMs)));
  }
}

/** The counts and blockers of a status, as log fields. */
export function progressFields(s: DrainStatus): Record<string, unknown> {
  return {
    hints_pending: s.hints_pending,
    migrations_pending: s.migrations_pending,
    repairs_queued: s.repairs_queued,
    in_flight: s.in_flight,
    blockers: s.blockers.map((b) => (b.peers ? `${b.reason}: ${b.peers.join(",")}` : b.count !== undefined ? `${b.reason}: ${b.count}` : b.reason)),
  };
}
