// The node lifecycle: serving, then draining (one-way; only a restart leaves it). Draining is
// decided in one place, when a write is admitted: admitWrite() throws DRAINING once the node
// drains, and a write admitted earlier completes even if draining starts while it runs (its
// body still arriving, its replicas still answering), so shutdown lets in-flight writes finish.
import { CacheError } from "../core/errors.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";

export class Lifecycle {
  private drainingSince: number | undefined;

  constructor(private readonly deps: { metrics: Metrics; logger: Logger; nowMs: () => number }) {}

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** Admits a client write arriving now; throws 503 DRAINING once the node drains. */
  admitWrite(): void {
    if (this.drainingSince !== undefined) throw new CacheError("DRAINING", "node is draining: writes go to another node");
  }

  /** Enters draining; idempotent. Returns true on the transition, false when already draining. */
  drain(reason: string): boolean {
    if (this.drainingSince !== undefined) return false;
    this.drainingSince = this.deps.nowMs();
    this.deps.metrics.inc("dist.drains");
    this.deps.logger.info(LOG.draining, { reason });
    return true;
  }
}
