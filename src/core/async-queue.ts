// An unbounded async queue: producers push, one consumer iterates with `for await`. Used to feed
// and drain long-lived streams. Callers bound what they push (the batchers limit calls in flight).

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private failWaiter: ((e: unknown) => void) | undefined;
  private closed = false;
  private error: unknown;

  get isClosed(): boolean {
    return this.closed;
  }

  /** Items waiting for the consumer. */
  get size(): number {
    return this.items.length;
  }

  private shrinkWaiters: Array<{ below: number; resolve: () => void }> = [];

  /** Resolves once fewer than `below` items wait (or the queue closed). */
  whenShorterThan(below: number): Promise<void> {
    if (this.items.length < below || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.shrinkWaiters.push({ below, resolve }));
  }

  private shrank(): void {
    if (this.shrinkWaiters.length === 0) return;
    const ready = this.shrinkWaiters.filter((w) => this.items.length < w.below || this.closed);
    this.shrinkWaiters = this.shrinkWaiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  push(item: T): boolean {
    if (this.closed) return false;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = this.failWaiter = undefined;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
    return true;
  }

  /** Ends the iteration once the queued items are consumed. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.shrank();
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = this.failWaiter = undefined;
      w({ value: undefined, done: true });
    }
  }

  /** Ends the iteration with an error after the queued items. */
  fail(err: unknown): void {
    if (this.closed) return;
    this.error = err ?? new Error("queue failed");
    this.closed = true;
    this.shrank();
    if (this.failWaiter && this.items.length === 0) {
      const f = this.failWaiter;
      this.waiter = this.failWaiter = undefined;
      f(this.error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) {
          const value = this.items.shift() as T;
          this.shrank();
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return this.error !== undefined ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiter = resolve;
          this.failWaiter = reject;
        });
      },
      return: () => {
        this.closed = true;
        this.items.length = 0;
        this.shrank();
        return Promise.resolve({ value: undefined, done: true });
      },
      throw: (err?: unknown) => {
        this.closed = true;
        this.items.length = 0;
        this.shrank();
        return Promise.reject(err ?? new Error("queue iteration aborted"));
      },
    };
  }
}
