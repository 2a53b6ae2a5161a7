// The life of one attempt on one endpoint: a time limit over the headers and the body, and the
// caller's signal and the client's close(), which end it early. Every await of the attempt is
// raced against the scope's end, so a fetch implementation (or a body) that ignores its time limit
// or its signal cannot hold the request past them. When it ends early, the attempt cancels the
// answer's body if one came (the connection is not left reading a body nobody wants): the scope
// holds a body reader only, never the answer, whose reference here cost a get 5 µs of garbage
// collection.
//
// The fetch gets the scope's `signal` (one AbortController, made when asked for), aborted when
// the scope ends early: a fetch that honours it lets its connection go at close() or an abort,
// rather than at its own `timeoutMs`. Not joined with AbortSignal.any: on a long-lived source
// (the client's close signal) each joined signal stays referenced until the source aborts.
import type { TimerHandle, Timers } from "./runtime.js";

/** The reason a scope ends with when its time limit passes: named "TimeoutError" (see isTimeout). */
export function timeLimitError(ms: number): Error {
  const e = new Error(`no answer within ${ms} ms`);
  e.name = "TimeoutError";
  return e;
}

export class AttemptScope {
  private timer: TimerHandle | undefined;
  /** Rejects the race under way, if any. */
  private fail: ((reason: unknown) => void) | undefined;
  private caller: AbortSignal | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private controller: AbortController | undefined;
  private done = false;
  /** True once the time limit passed (the attempt failed; another endpoint may answer). */
  timedOut = false;
  /** True once the caller's signal or close() ended the attempt (the request ends, no failover). */
  abortedFromOutside = false;
  /** Why the scope ended early (the time limit's error, the caller's reason, close()'s). */
  reason: unknown;

  /**
   * `timeoutMs` 0 sets no time limit. `caller` is the caller's signal, listened to until `end()`;
   * an aborted one ends the scope at once.
   */
  constructor(timers: Timers, timeoutMs: number, caller: AbortSignal | undefined) {
    if (caller !== undefined) {
      if (caller.aborted) {
        this.stop(caller.reason, false);
        return;
      }
      caller.addEventListener("abort", this.onCallerAbort);
      this.caller = caller;
    }
    if (timeoutMs > 0) this.timer = timers.after(timeoutMs, () => this.stop(timeLimitError(timeoutMs), true));
  }

  /** True once the scope ended early. */
  get stopped(): boolean {
    return this.timedOut || this.abortedFromOutside;
  }

  /**
   * `p`, or the scope's early end, whichever comes first. One race at a time. By hand rather than
   * with Promise.race, which costs ten times as much on the hot path.
   */
  race<T>(p: Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(this.reason);
    return new Promise<T>((resolve, reject) => {
      this.fail = reject;
      p.then(resolve, reject);
    });
  }

  /** The signal of the attempt's fetch: aborted with the reason the scope ends early for. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.stopped) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** The reader a chunked body is read with: cancelled if the scope ends early. */
  holds(reader: ReadableStreamDefaultReader<Uint8Array>): void {
    this.reader = reader;
  }

  /** Ends the attempt early, from outside (close()): the race under way rejects with `reason`. */
  abort(reason: unknown): void {
    this.stop(reason, false);
  }

  /** The headers arrived of an answer whose body is a stream: the time limit no longer applies. */
  stopClock(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Removes the timer and the listener on the caller's signal; the scope no longer ends early. */
  end(): void {
    this.done = true;
    this.stopClock();
    this.caller?.removeEventListener("abort", this.onCallerAbort);
  }

  private readonly onCallerAbort = (e: Event): void => {
    this.stop((e.target as AbortSignal).reason, false);
  };

  private stop(reason: unknown, timedOut: boolean): void {
    if (this.stopped || this.done) return;
    this.timedOut = timedOut;
    this.abortedFromOutside = !timedOut;
    this.reason = reason;
    // A body being read through a reader is locked: the reader cancels it (the attempt cancels
    // any other body once the race below rejects).
    if (this.reader) void this.reader.cancel(reason).catch(() => undefined);
    this.controller?.abort(reason);
    this.fail?.(reason);
    this.end();
  }
}

/**
 * `p`, or the reason of the first of `signals` to abort, whichever comes first; leaves no listener
 * behind. For the waits of a request outside its attempts (a token provider, a discovery run).
 */
export function untilAborted<T>(p: Promise<T>, signals: readonly (AbortSignal | undefined)[]): Promise<T> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  const aborted = live.find((s) => s.aborted);
  if (aborted) return Promise.reject(aborted.reason as unknown);
  if (live.length === 0) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (e: Event) => {
      done();
      reject((e.target as AbortSignal).reason);
    };
    const done = () => {
      for (const s of live) s.removeEventListener("abort", onAbort);
    };
    for (const s of live) s.addEventListener("abort", onAbort);
    p.then(
      (v) => (done(), resolve(v)),
      (err: unknown) => (done(), reject(err)),
    );
  });
}
