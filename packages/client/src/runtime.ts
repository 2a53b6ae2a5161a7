// Time, timers and randomness, passed into every part of the client so tests drive them by hand.
// The defaults here are the only place the client reads the wall clock or schedules callbacks;
// they work in browsers and in Node (where timers are unref'd so a client never keeps a process up,
// but for a wait that is work the caller is waiting on: a watch's reconnect delay).

/** Reads time in milliseconds; only differences are used. */
export interface Clock {
  nowMs(): number;
}

/** A scheduled callback that can be cancelled; cancelling twice is harmless. */
export interface TimerHandle {
  cancel(): void;
}

/** How a one-shot timer is scheduled. */
export interface AfterOptions {
  /**
   * Keep the process alive while the timer waits (Node; default false, the timer is unref'd). For
   * a wait the caller is waiting on: nothing else may hold the event loop open meanwhile (a watch
   * between two streams has no socket), and an unref'd timer would let Node exit mid-iteration.
   */
  readonly keepAlive?: boolean;
}

/** Schedules callbacks. */
export interface Timers {
  every(intervalMs: number, fn: () => void): TimerHandle;
  after(delayMs: number, fn: () => void, options?: AfterOptions): TimerHandle;
}

/** A source of uniform random numbers in [0, 1). */
export interface Random {
  next(): number;
}

/** What the client needs from its environment. */
export interface Runtime {
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
}

function unref(t: unknown): void {
  const handle = t as { unref?: () => void };
  if (typeof handle.unref === "function") handle.unref();
}

export const systemClock: Clock = Object.freeze({ nowMs: () => Date.now() });

export const systemTimers: Timers = Object.freeze({
  every(intervalMs: number, fn: () => void): TimerHandle {
    const t = setInterval(fn, Math.max(1, intervalMs));
    unref(t);
    return { cancel: () => clearInterval(t) };
  },
  after(delayMs: number, fn: () => void, options?: AfterOptions): TimerHandle {
    const t = setTimeout(fn, Math.max(0, delayMs));
    if (options?.keepAlive !== true) unref(t);
    return { cancel: () => clearTimeout(t) };
  },
});

/** A seeded generator (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return {
    next(): number {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

export const mathRandom: Random = Object.freeze({ next: () => Math.random() });

/** The process's clock and timers, and a random source seeded by `seed` when one is given. */
export function defaultRuntime(seed?: number): Runtime {
  return { clock: systemClock, timers: systemTimers, random: seed === undefined ? mathRandom : seededRandom(seed) };
}
