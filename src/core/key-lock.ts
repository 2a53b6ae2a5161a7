// One async task at a time per key, in arrival order: a promise chain per key (a key nobody holds
// starts its task at once), no timers and no busy waiting, so a queue never stalls the event
// loop. Bounded: past `waitersPerKey` tasks on one key or `keysMax` keys at once a new task fails
// at once with 503 UNAVAILABLE (Retry-After 1).
import { CacheError } from "./errors.js";

export interface KeyLockLimits {
  /** Tasks per key (running and waiting) at most. */
  readonly waitersPerKey: number;
  /** Keys with a running or waiting task at most. */
  readonly keysMax: number;
}

interface KeyQueue {
  /** Settles when the last task queued on the key has finished. */
  tail: Promise<void>;
  /** Tasks running or waiting on the key. */
  queued: number;
}

/** The tail of a key nobody holds (its first task starts at once and never waits on it). */
const SETTLED: Promise<void> = Promise.resolve();

export class KeyLock {
  private readonly queues = new Map<string, KeyQueue>();

  constructor(private readonly limits: KeyLockLimits) {}

  /** Keys with a running or waiting task. */
  get keys(): number {
    return this.queues.size;
  }

  /** Tasks running or waiting on `key`. */
  queuedOn(key: string): number {
    return this.queues.get(key)?.queued ?? 0;
  }

  /** Runs `task` once every task queued on `key` before it has finished; resolves with its result. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let q = this.queues.get(key);
    const idle = q === undefined;
    if (q === undefined) {
      if (this.queues.size >= this.limits.keysMax) return Promise.reject(busy(`${this.limits.keysMax} keys already have conditional writes under way on this node`));
      q = { tail: SETTLED, queued: 0 };
      this.queues.set(key, q);
    } else if (q.queued >= this.limits.waitersPerKey) {
      return Promise.reject(busy(`${this.limits.waitersPerKey} conditional writes of this key are already queued on its primary`));
    }
    const queue = q;
    queue.queued++;
    let release: () => void = () => undefined;
    const previous = queue.tail;
    queue.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    const done = () => {
      queue.queued--;
      if (queue.queued === 0 && this.queues.get(key) === queue) this.queues.delete(key);
      release();
    };
    // A key nobody holds starts its task at once, in the caller's turn (no wait for a microtask).
    return (idle ? startNow(task) : previous.then(task)).finally(done);
  }
}

/** `task()`, with a synchronous throw as a rejection. */
function startNow<T>(task: () => Promise<T>): Promise<T> {
  try {
    return task();
  } catch (err) {
    return Promise.reject(err);
  }
}

function busy(message: string): CacheError {
  return new CacheError("UNAVAILABLE", message, undefined, { retryAfterS: 1 });
}
