// A clock and timers driven by the test: time moves only when the test calls advance().
import type { Clock, TimerHandle, Timers } from "../../src/core/clock.js";

interface Scheduled {
  at: number;
  seq: number;
  interval: number | undefined;
  fn: () => void;
}

export class ManualClock implements Clock, Timers {
  private now: number;
  private mono = 0;
  private seq = 0;
  private readonly scheduled = new Set<Scheduled>();

  /** Starts at 2026-01-01T00:00:00Z unless told otherwise. */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.now = startMs;
  }

  nowMs(): number {
    return this.now;
  }

  monotonicMs(): number {
    return this.mono;
  }

  every(intervalMs: number, fn: () => void): TimerHandle {
    return this.add({ at: this.mono + Math.max(1, intervalMs), seq: this.seq++, interval: Math.max(1, intervalMs), fn });
  }

  after(delayMs: number, fn: () => void): TimerHandle {
    return this.add({ at: this.mono + Math.max(0, delayMs), seq: this.seq++, interval: undefined, fn });
  }

  /**
   * Deferred callbacks run on the real event loop (setImmediate), as in production: flush() and
   * advanceAsync() let them run, and they never move time.
   */
  defer(fn: () => void): void {
    setImmediate(fn);
  }

  /** Timers still scheduled. */
  get pending(): number {
    return this.scheduled.size;
  }

  /** Moves time forward by `ms`, firing due timers in time order, synchronously. */
  advance(ms: number): void {
    const end = this.mono + ms;
    for (let t = this.nextDue(end); t; t = this.nextDue(end)) this.fire(t);
    this.moveTo(end);
  }

  /**
   * Moves time forward by `ms` without firing timers, as for a paused process (SIGSTOP): the timers
   * due meanwhile fire late, on the next advance.
   */
  jump(ms: number): void {
    this.moveTo(this.mono + ms);
  }

  /** Steps the wall clock by `ms` (an NTP step, either way); monotonic time and timers are untouched. */
  stepWall(ms: number): void {
    this.now += ms;
  }

  /** Like advance(), but lets promises settle after every timer that fires. */
  async advanceAsync(ms: number): Promise<void> {
    const end = this.mono + ms;
    await flush();
    for (let t = this.nextDue(end); t; t = this.nextDue(end)) {
      this.fire(t);
      await flush();
    }
    this.moveTo(end);
    await flush();
  }

  private add(s: Scheduled): TimerHandle {
    this.scheduled.add(s);
    return { cancel: () => void this.scheduled.delete(s) };
  }

  private nextDue(end: number): Scheduled | undefined {
    let best: Scheduled | undefined;
    for (const s of this.scheduled) {
      if (s.at <= end && (!best || s.at < best.at || (s.at === best.at && s.seq < best.seq))) best = s;
    }
    return best;
  }

  private fire(s: Scheduled): void {
    this.moveTo(s.at);
    if (s.interval !== undefined) {
      s.at += s.interval;
      s.seq = this.seq++;
    } else {
      this.scheduled.delete(s);
    }
    s.fn();
  }

  private moveTo(mono: number): void {
    if (mono > this.mono) {
      this.now += mono - this.mono;
      this.mono = mono;
    }
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
