// bcrypt off the event loop: a pool of worker threads (one per core by default) that run
// bcryptjs's compare, with a bounded queue of checks waiting for a worker. A check that finds the
// queue full is refused with 503 UNAVAILABLE and Retry-After, so a flood of Basic requests costs
// the node at most its workers' CPU and a fixed amount of memory. Workers start on first use,
// do not keep the process alive, and end with close(). The pool is built by createAuthenticator;
// nothing here is shared between two pools.
//
// Two queues, each of `queueMax`: checks from suspect clients (a failure in the last minute, or
// another check under way: AuthFailLimiter.suspect) wait in their own, served only when no other
// check waits. Before, one queue served everyone in turn: eight addresses sending wrong
// passwords kept it full, and a user with the right password got 503 on every try (a review).
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { TimerHandle, Timers } from "../core/clock.js";
import { CacheError } from "../core/errors.js";

export interface BcryptPoolOptions {
  /** Worker threads at most (os.availableParallelism() in production). */
  readonly size: number;
  /** Checks waiting for a worker at most, in each of the two queues; one more is refused with 503. */
  readonly queueMax: number;
  /** Retry-After of a refused check, in seconds. */
  readonly retryAfterS: number;
  /** A worker idle this long ends (its memory goes back to the system); the next check starts one. */
  readonly idleExitMs: number;
  readonly timers: Timers;
}

/**
 * The worker's code, run as a CommonJS script: it loads bcryptjs from the path the parent
 * resolved (so it works from dist/ and under a TypeScript loader alike) and answers each
 * `{id, password, hash}` with `{id, ok}`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const bcrypt = require(workerData.bcryptPath);
parentPort.on("message", (m) => {
  let ok = false;
  try { ok = bcrypt.compareSync(m.password, m.hash); } catch { ok = false; }
  parentPort.postMessage({ id: m.id, ok });
});
`;

interface Task {
  readonly id: number;
  readonly password: string;
  readonly hash: string;
  readonly resolve: (ok: boolean) => void;
  readonly reject: (err: unknown) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  task: Task | undefined;
  /** Ends the worker once it has been idle for idleExitMs. */
  idleTimer: TimerHandle | undefined;
}

export class BcryptPool {
  private readonly workers: PoolWorker[] = [];
  /** Checks of clients that are not suspect, served first. */
  private readonly queue: Task[] = [];
  /** Checks of suspect clients, served when `queue` is empty. */
  private readonly suspectQueue: Task[] = [];
  private readonly bcryptPath = createRequire(import.meta.url).resolve("bcryptjs");
  private nextId = 0;
  private closed = false;

  constructor(private readonly opts: BcryptPoolOptions) {}

  /** Workers started so far. */
  get started(): number {
    return this.workers.length;
  }

  /** Checks waiting for a worker, in both queues. */
  get queued(): number {
    return this.queue.length + this.suspectQueue.length;
  }

  /**
   * True when `password` matches the bcrypt `hash`; rejects with 503 UNAVAILABLE when its queue
   * is full. A `suspect` check waits behind every other.
   */
  compare(password: string, hash: string, suspect = false): Promise<boolean> {
    if (this.closed) return Promise.reject(new CacheError("UNAVAILABLE", "the node is stopping"));
    const queue = suspect ? this.suspectQueue : this.queue;
    const idle = this.workers.find((w) => w.task === undefined);
    if (idle === undefined && this.workers.length >= this.opts.size && queue.length >= this.opts.queueMax) {
      return Promise.reject(
        new CacheError("UNAVAILABLE", "password checks are all busy; retry later", { queue_max: this.opts.queueMax }, { retryAfterS: this.opts.retryAfterS }),
      );
    }
    return new Promise<boolean>((resolve, reject) => {
      queue.push({ id: this.nextId++, password, hash, resolve, reject });
      this.dispatch();
    });
  }

  /** Ends the workers; waiting and running checks are refused with 503. */
  async close(): Promise<void> {
    this.closed = true;
    const stopping = new CacheError("UNAVAILABLE", "the node is stopping");
    for (const t of [...this.queue.splice(0), ...this.suspectQueue.splice(0)]) t.reject(stopping);
    const workers = this.workers.splice(0);
    for (const w of workers) {
      w.idleTimer?.cancel();
      w.task?.reject(stopping);
    }
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }

  /** Ends a worker that stayed idle; a later check starts a new one. */
  private retire(w: PoolWorker): void {
    if (w.task !== undefined) return;
    const i = this.workers.indexOf(w);
    if (i < 0) return;
    this.workers.splice(i, 1);
    void w.worker.terminate();
  }

  /** Hands queued checks to idle workers, starting workers up to the pool size. */
  private dispatch(): void {
    while (this.queued > 0) {
      let w = this.workers.find((x) => x.task === undefined);
      if (w === undefined) {
        if (this.workers.length >= this.opts.size) return;
        w = this.startWorker();
      }
      const task = (this.queue.shift() ?? this.suspectQueue.shift()) as Task;
      w.idleTimer?.cancel();
      w.idleTimer = undefined;
      w.task = task;
      w.worker.postMessage({ id: task.id, password: task.password, hash: task.hash });
    }
  }

  private startWorker(): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptPath: this.bcryptPath } });
    worker.unref();
    const w: PoolWorker = { worker, task: undefined, idleTimer: undefined };
    worker.on("message", (m: { id: number; ok: boolean }) => {
      const task = w.task;
      if (task === undefined || task.id !== m.id) return;
      w.task = undefined;
      task.resolve(m.ok === true);
      this.dispatch();
      if (w.task === undefined) w.idleTimer = this.opts.timers.after(this.opts.idleExitMs, () => this.retire(w));
    });
    // A worker that dies fails its check (503) and leaves the pool; the next check starts another.
    const gone = (err: unknown) => {
      const i = this.workers.indexOf(w);
      if (i < 0) return;
      this.workers.splice(i, 1);
      w.task?.reject(new CacheError("UNAVAILABLE", "password check failed; retry", undefined, { cause: err, retryAfterS: this.opts.retryAfterS }));
      w.task = undefined;
      if (!this.closed) this.dispatch();
    };
    worker.on("error", gone);
    worker.on("exit", gone);
    this.workers.push(w);
    return w;
  }
}
