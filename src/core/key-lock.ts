// One async task at a time per key, in arrival order: a line of waiting tasks per key (a key nobody
// holds starts its task at once), no timers and no busy waiting, so a queue never stalls the event
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
  /** Tasks running or waiting on the key. */
  queued: number;
  /** Starts of the tasks waiting on the key, first in line first; none while only one runs. */
  readonly waiting: Array<() => void>;
}

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
    let started: Promise<T>;
    if (q === undefined) {
      if (this.queues.size >= this.limits.keysMax) return Promise.reject(busy(`${this.limits.keysMax} keys already have conditional writes under way on this node`));
      q = { queued: 1, waiting: [] };
      this.queues.set(key, q);
      // A key nobody holds starts its task at once, in the caller's turn (no wait for a microtask).
      started = startNow(task);
    } else {
      if (q.queued >= this.limits.waitersPerKey) return Promise.reject(busy(`${this.limits.waitersPerKey} conditional writes of this key are already queued on its primary`));
      q.queued++;
      const waiting = q.waiting;
      started = new Promise<void>((resolve) => waiting.push(resolve)).then(task);
    }
    // The key passes on when the task settles, either way (one pair of callbacks, no finally chain).
    const queue = q;
    return started.then(
      (value) => {
        this.passOn(key, queue);
        return value;
      },
      (err: unknown) => {
        this.passOn(key, queue);
        throw err;
      },
    );
  }

  /** A task on `key` finished: the next one waiting starts, or the key is free. */
  private passOn(key: string, queue: KeyQueue): void {
    queue.queued--;
    const next = queue.waiting.shift();
    if (next !== undefined) next();
    else this.queues.delete(key);
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
