// Whether this node's copy of the data may be incomplete ("unsettled"): for a window after start-up
// or a ring change, and while any watched condition holds (catch-up not done, a rebalance moving
// keys). Reads then look past a local miss, since a new owner may not have its copy yet.
import type { Clock } from "../core/clock.js";
import type { RingFollower } from "./ring-follower.js";

export interface SettleWindowDeps {
  readonly clock: Clock;
  readonly ring: RingFollower;
  /** How long after a ring change (or the start) the node counts as unsettled. */
  readonly windowMs: number;
}

export class SettleWindow {
  private readonly conditions: Array<() => boolean> = [];

  constructor(private readonly deps: SettleWindowDeps) {}

  /** Adds a condition under which the node is unsettled (called at wiring time). */
  watch(unsettledWhile: () => boolean): void {
    this.conditions.push(unsettledWhile);
  }

  unsettled(): boolean {
    if (this.deps.clock.nowMs() - this.deps.ring.changedAtMs < this.deps.windowMs) return true;
    return this.conditions.some((c) => c());
  }
}

/** The settle window: the hint TTL, and at least 10 rebalance intervals. */
export function settleWindowMs(hintTtlMs: number, rebalanceIntervalMs: number): number {
  return Math.max(hintTtlMs, 10 * rebalanceIntervalMs);
}
