// Time and timers, the only place that reads the wall clock or schedules callbacks.
// Everything else receives a Clock and Timers, so tests drive time with a manual clock.
import { TIMER_MAX_MS } from "./duration.js";

/** Reads time. `nowMs` is wall-clock Unix milliseconds; `monotonicMs` never goes backwards. */
export interface Clock {
  nowMs(): number;
  monotonicMs(): number;
}

/** A scheduled callback that can be cancelled; cancelling twice is harmless. */
export interface TimerHandle {
  cancel(): void;
}

/** Schedules callbacks. Callbacks run on the event loop, never re-entrantly. */
export interface Timers {
  /** Calls `fn` every `intervalMs` milliseconds until cancelled. */
  every(intervalMs: number, fn: () => void): TimerHandle;
  /** Calls `fn` once after `delayMs` milliseconds unless cancelled. */
  after(delayMs: number, fn: () => void): TimerHandle;
  /**
   * Calls `fn` at the end of the current event-loop turn, after the I/O callbacks already queued
   * (setImmediate): work parsed in the same poll phase is collected before `fn` runs.
   */
  defer(fn: () => void): void;
}

/** The process clock. */
export const systemClock: Clock = Object.freeze({
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
});

/**
 * Timers backed by the event loop. They do not keep the process alive on their own. A delay past
 * TIMER_MAX_MS waits TIMER_MAX_MS (Node would run it after 1 ms; an interval times a backoff
 * factor can get there).
 */
export const systemTimers: Timers = Object.freeze({
  every(intervalMs: number, fn: () => void): TimerHandle {
    const t = setInterval(fn, Math.min(TIMER_MAX_MS, Math.max(1, intervalMs)));
    t.unref();
    return { cancel: () => clearInterval(t) };
  },
  after(delayMs: number, fn: () => void): TimerHandle {
    const t = setTimeout(fn, Math.min(TIMER_MAX_MS, Math.max(0, delayMs)));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  defer(fn: () => void): void {
    setImmediate(fn);
  },
});

/** Resolves after `ms` on the given timers (used by code that must wait, such as retries). */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.after(ms, resolve);
  });
}

/**
 * `fn` run once at the end of the turn however often the returned function is called in it
 * (timers.defer): for work that only needs the latest state, such as cleanup after membership
 * changes, which come in bursts of thousands.
 */
export function oncePerTurn(timers: Timers, fn: () => void): () => void {
  let due = false;
  return () => {
    if (due) return;
    due = true;
    timers.defer(() => {
      due = false;
      fn();
    });
  };
}

/** Lets the event loop run pending I/O before the caller goes on (long scans pause with it). */
export type YieldToLoop = () => Promise<void>;

/** Resumes after the I/O callbacks already queued (setImmediate). */
export const yieldToEventLoop: YieldToLoop = () =>
  new Promise((resolve) => {
    setImmediate(resolve);
  });

/**
 * Cooperative time slicing for scans over the whole store: the scan spends one unit per record
 * it looks at, and pauses at a resumable point once `budget` units are spent, so a request that
 * arrives meanwhile waits for one slice, not for the whole scan.
 */
export class WorkSlicer {
  private spent = 0;

  constructor(
    private readonly yieldToLoop: YieldToLoop,
    private readonly budget: number,
  ) {}

  /** Spends `units`; true once the budget is used up (the scan should stop and pause()). */
  spend(units = 1): boolean {
    this.spent += units;
    return this.spent >= this.budget;
  }

  /** Yields to the event loop when the budget is used up, and starts a new one. */
  async pause(): Promise<void> {
    if (this.spent < this.budget) return;
    this.spent = 0;
    await this.yieldToLoop();
  }
}
