// The life of one attempt on one endpoint: a signal that ends it, a time limit over the headers and
// the body, and the links to the caller's signal and to the client's close(). Every await of the
// attempt is raced against the scope's end, so a fetch implementation (or a body) that ignores its
// signal cannot hold the attempt past its time limit, the caller's abort or close().
import type { Timers, TimerHandle } from "./runtime.js";

/** The reason a scope ends with when its time limit passes: named "TimeoutError" (see isTimeout). */
export function timeLimitError(ms: number): Error {
  const e = new Error(`no answer within ${ms} ms`);
  e.name = "TimeoutError";
  return e;
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

export class AttemptScope {
  private readonly ctrl = new AbortController();
  private timer: TimerHandle | undefined;
  private readonly ended: Promise<never>;
  private fail: ((reason: unknown) => void) | undefined;
  private readonly links: AbortSignal[] = [];
  /** True once the time limit passed (the attempt failed; another endpoint may answer). */
  timedOut = false;
  /** True once the caller's signal or close() ended the attempt (the request ends, no failover). */
  abortedFromOutside = false;

  /**
   * `timeoutMs` 0 sets no time limit. `outside` are the caller's signal and the client's close
   * signal; the scope listens to them until `end()`.
   */
  constructor(timers: Timers, timeoutMs: number, outside: readonly (AbortSignal | undefined)[]) {
    this.ended = new Promise<never>((_, reject) => (this.fail = reject));
    // The race may lose to the attempt's own result: a rejection nobody awaits is not an error.
    this.ended.catch(() => undefined);
    for (const s of outside) {
      if (s === undefined) continue;
      if (s.aborted) {
        this.stop(s.reason, false);
        return;
      }
      s.addEventListener("abort", this.onOutsideAbort);
      this.links.push(s);
    }
    if (timeoutMs > 0) this.timer = timers.after(timeoutMs, () => this.stop(timeLimitError(timeoutMs), true));
  }

  /** The signal to give the fetch: aborted when the attempt ends early. */
  get signal(): AbortSignal {
    return this.ctrl.signal;
  }

  /** Why the scope ended early (the time limit's error, the caller's reason). */
  get reason(): unknown {
    return this.ctrl.signal.reason;
  }

  /** `p`, or the scope's early end, whichever comes first. */
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.ended]);
  }

  /** The headers arrived of an answer whose body is a stream: the time limit no longer applies. */
  stopClock(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * Removes the timer and the listeners, but for the one on `keep`: a stream request's signal goes
   * on ending the stream (and the fetch's signal) after the attempt returned.
   */
  end(keep?: AbortSignal): void {
    this.stopClock();
    for (const s of this.links) if (s !== keep) s.removeEventListener("abort", this.onOutsideAbort);
    this.links.length = 0;
  }

  private readonly onOutsideAbort = (e: Event): void => {
    this.stop((e.target as AbortSignal).reason, false);
  };

  private stop(reason: unknown, timedOut: boolean): void {
    if (this.ctrl.signal.aborted) return;
    this.timedOut = timedOut;
    this.abortedFromOutside = !timedOut;
    this.ctrl.abort(reason);
    this.fail?.(reason);
    this.end();
  }
}
