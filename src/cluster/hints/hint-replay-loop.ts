// The hint replay loop: every tick, expire old hints and replay the rest, for each queue (replica
// hints and queued migrations). Nothing expires while the node drains: its hints and migrations
// are records it must hand off before it may stop, and an expired one looked handed off (the
// drain then said "data handed off" with the records on no other node). The drain timeout bounds
// that time instead. A hint's deadline (a migrated copy's) still holds: the replay drops it.
import type { TimerHandle, Timers } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { PeerTransport } from "../../transport/index.js";
import type { HintQueue } from "./hint-queue.js";

/** The replay loop: every tick, expire old hints and replay the rest. */
export class HintReplayLoop {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      queues: readonly HintQueue[];
      transport: PeerTransport;
      selfId: string;
      timers: Timers;
      intervalMs: number;
      logger: Logger;
      /** True while nothing may expire (the node drains). */
      holdExpiry: () => boolean;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = this.deps.timers.every(this.deps.intervalMs, () => void this.runReplayTick());
    this.deps.logger.info(LOG.hintReplayLoopStarted, { interval_ms: this.deps.intervalMs });
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One pass: expire, then replay; a pass never overlaps the previous one. */
  async runReplayTick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      const expire = !this.deps.holdExpiry();
      for (const q of this.deps.queues) {
        if (expire) q.expire();
        await q.replay(this.deps.transport, this.deps.selfId);
      }
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
