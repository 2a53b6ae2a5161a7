// The node lifecycle: serving, then draining (one-way; only a restart leaves it). Draining is
// decided in one place, when a write is admitted: admitWrite() throws DRAINING once the node
// drains, and a write admitted earlier completes even if draining starts while it runs (its
// body still arriving, its replicas still answering), so shutdown lets in-flight writes finish.
// The writes under way are counted (track()), so a drain knows when none is left.
import { CacheError } from "../core/errors.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";

export class Lifecycle {
  private drainingSince: number | undefined;
  private writesInFlight = 0;
  private readonly drainListeners: Array<() => void> = [];

  constructor(private readonly deps: { nodeId: string; metrics: Metrics; logger: Logger; nowMs: () => number }) {}

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** When draining started, Unix ms; undefined while serving. */
  get drainingSinceMs(): number | undefined {
    return this.drainingSince;
  }

  /** Admitted writes (client and forwarded) that have not completed yet. */
  get inFlightWrites(): number {
    return this.writesInFlight;
  }

  /**
   * Admits a client write arriving now; throws 503 DRAINING once the node drains. The error names
   * this node (message and `details.node`): a non-owner that forwarded the write relays it as is,
   * so its client learns which node drains, not only that a write failed.
   */
  admitWrite(): void {
    if (this.drainingSince !== undefined) {
      const node = this.deps.nodeId;
      throw new CacheError("DRAINING", `node ${node} is draining: writes go to another node`, { node });
    }
  }

  /** Counts an admitted write as in flight until `write` settles; returns it unchanged. */
  async track<T>(write: Promise<T>): Promise<T> {
    this.writesInFlight++;
    try {
      return await write;
    } finally {
      this.writesInFlight--;
    }
  }

  /**
   * Registers an observer of the transition into draining. It runs after the state changed, must
   * not call drain() again, and must return quickly.
   */
  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  /** Enters draining; idempotent. Returns true on the transition, false when already draining. */
  drain(reason: string): boolean {
    if (this.drainingSince !== undefined) return false;
    this.drainingSince = this.deps.nowMs();
    this.deps.metrics.inc("dist.drains");
    this.deps.logger.info(LOG.draining, { reason });
    for (const l of this.drainListeners) l();
    return true;
  }
}
