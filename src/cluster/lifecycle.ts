// The node lifecycle: serving, then draining (one-way; only a restart leaves it).
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";

export class Lifecycle {
  private drainingSince: number | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly deps: { metrics: Metrics; logger: Logger; nowMs: () => number }) {}

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** Enters draining; idempotent. Returns true on the transition, false when already draining. */
  drain(reason: string): boolean {
    if (this.drainingSince !== undefined) return false;
    this.drainingSince = this.deps.nowMs();
    this.deps.metrics.inc("dist.drains");
    this.deps.logger.info(LOG.draining, { reason });
    for (const l of this.listeners) l();
    return true;
  }

  /** Observers run after the transition, once; they must return quickly. */
  onDrain(listener: () => void): void {
    this.listeners.push(listener);
  }
}
