// Waiting for something a stream collects (log lines, SSE frames, HTTP posts): the collector calls
// notify() whenever it adds to its state, and each wait re-checks its condition then, until it
// holds or the wait times out.

/** What a check decides: keep waiting (undefined), succeed with a value, or fail. */
export type CheckResult<T> = undefined | { readonly ok: T } | { readonly error: Error };

export class Waiters {
  private readonly checks = new Set<() => void>();

  /** Re-runs every pending check (call after the collected state changed). */
  notify(): void {
    for (const check of this.checks) check();
  }

  /**
   * Resolves with the first `{ ok }` that `check` returns, rejects on its first `{ error }`, or
   * after `timeoutMs` with the error `onTimeout` builds.
   */
  until<T>(check: () => CheckResult<T>, timeoutMs: number, onTimeout: () => string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => {
        const r = check();
        if (r === undefined) return;
        done();
        if ("ok" in r) resolve(r.ok);
        else reject(r.error);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(onTimeout()));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.checks.delete(run);
      };
      this.checks.add(run);
      run();
    });
  }
}
