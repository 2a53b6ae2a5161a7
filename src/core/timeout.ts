// Bounding the wait for a promise with the injected timers.
import type { Timers } from "./clock.js";
import { CacheError } from "./errors.js";

/** Rejects with UNAVAILABLE when `p` does not settle within `ms`. */
export function withTimeout<T>(timers: Timers, ms: number, p: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = timers.after(ms, () => reject(new CacheError("UNAVAILABLE", `${what} timed out after ${ms} ms`)));
    p.then(
      (v) => {
        t.cancel();
        resolve(v);
      },
      (e: unknown) => {
        t.cancel();
        reject(e);
      },
    );
  });
}
