// Time and timers, the only place that reads the wall clock or schedules callbacks.
// Everything else receives a Clock and Timers, so tests drive time with a manual clock.

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
}

/** The process clock. */
export const systemClock: Clock = Object.freeze({
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
});

/** Timers backed by the event loop. They do not keep the process alive on their own. */
export const systemTimers: Timers = Object.freeze({
  every(intervalMs: number, fn: () => void): TimerHandle {
    const t = setInterval(fn, Math.max(1, intervalMs));
    t.unref();
    return { cancel: () => clearInterval(t) };
  },
  after(delayMs: number, fn: () => void): TimerHandle {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
});

/** Resolves after `ms` on the given timers (used by code that must wait, such as retries). */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.after(ms, resolve);
  });
}
