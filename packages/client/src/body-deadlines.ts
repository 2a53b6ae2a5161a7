// The time limit over whole bodies of the Node client's answers. undici's own limits are the wait
// for the headers and the longest pause between two chunks, so a body that trickles a byte at a
// time never reaches them. Rather than a timer per request (and the promise races it needs), every
// body being read is listed with its deadline, and one sweep every SWEEP_MS, running only while
// bodies are read, destroys those past it: their read rejects with a TimeoutError, at most
// SWEEP_MS late. A per-attempt timer and race cost a `get` about 3 µs of its 20.
import type { Clock, TimerHandle, Timers } from "./runtime.js";

export const SWEEP_MS = 100;

/** What a body must offer: the whole read, and its end with an error. */
export interface DestroyableBody {
  arrayBuffer(): Promise<ArrayBuffer>;
  destroy(err: Error): void;
}

function timeLimitError(): Error {
  const e = new Error("the answer's body did not arrive within the time limit");
  e.name = "TimeoutError";
  return e;
}

export class BodyDeadlines {
  /** Bodies being read, and their deadlines (clock ms). */
  private readonly reading = new Map<DestroyableBody, number>();
  private sweeper: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly timers: Timers,
  ) {}

  /** Reads `body` whole; rejects with a TimeoutError once `deadline` (clock ms) has passed. */
  async read(body: DestroyableBody, deadline: number): Promise<ArrayBuffer> {
    this.reading.set(body, deadline);
    this.sweeper ??= this.timers.every(SWEEP_MS, () => this.sweep());
    try {
      return await body.arrayBuffer();
    } finally {
      this.reading.delete(body);
    }
  }

  /** Bodies being read now (for tests). */
  get size(): number {
    return this.reading.size;
  }

  private sweep(): void {
    const now = this.clock.nowMs();
    for (const [body, deadline] of this.reading) {
      if (now < deadline) continue;
      this.reading.delete(body);
      body.destroy(timeLimitError());
    }
    if (this.reading.size === 0) {
      this.sweeper?.cancel();
      this.sweeper = undefined;
    }
  }
}
