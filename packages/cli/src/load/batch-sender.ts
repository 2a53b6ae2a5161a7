// The batches of `load`: items are gathered until the batch holds --batch-size items or its JSON
// body would pass BATCH_BODY_BYTES_MAX (the server refuses a body over its 16 MiB limit whole,
// 413 for every item), then sent with setMany; at most `concurrency` batches are in flight, and
// `add` waits while they are, so lines are read only as fast as batches are sent. An item that is
// alone over the bound is a batch of its own, which setMany fails alone (PayloadTooLargeError).
import type { WriteStream } from "node:fs";
import { BATCH_BODY_BYTES_MAX, setManyItemBytes, type HypercacheClient, type SetManyItem } from "@hypercache/client/node";
import { exitCodeFor } from "../exit-codes.js";
import type { LoadCounters } from "./progress.js";

export interface BatchSenderDeps {
  readonly client: HypercacheClient;
  readonly counters: LoadCounters;
  /** Called after each batch's results are counted. */
  readonly onBatch: () => void;
  /** The lines of failed items are written here, one per line. */
  readonly errorsOut?: WriteStream | undefined;
  readonly batchSize: number;
  readonly concurrency: number;
}

export class BatchSender {
  /** The first item that failed, and the exit codes of every failure. */
  firstFailure: Error | undefined;
  readonly failureCodes = new Set<number>();
  private items: SetManyItem[] = [];
  private raws: string[] = [];
  private bytes = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: BatchSenderDeps) {}

  /** Adds one item (and its line); sends the batch when it is full and waits while too many are in flight. */
  async add(item: SetManyItem, raw: string): Promise<void> {
    const size = setManyItemBytes(item) + 1;
    if (this.items.length > 0 && this.bytes + size > BATCH_BODY_BYTES_MAX) await this.flush();
    this.items.push(item);
    this.raws.push(raw);
    this.bytes += size;
    if (this.items.length >= this.deps.batchSize) await this.flush();
  }

  /** Items gathered but not sent (an interrupted load drops them). */
  get pending(): number {
    return this.items.length;
  }

  /** Sends what was gathered, then waits for every batch in flight. */
  async finish(sendPending: boolean): Promise<void> {
    if (sendPending && this.items.length > 0) this.send();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
  }

  private async flush(): Promise<void> {
    this.send();
    while (this.inFlight.size >= this.deps.concurrency) await Promise.race(this.inFlight);
  }

  private send(): void {
    const items = this.items;
    const raws = this.raws;
    this.items = [];
    this.raws = [];
    this.bytes = 0;
    const c = this.deps.counters;
    const p = this.deps.client.setMany(items, { concurrency: 1 }).then((results) => {
      results.forEach((r, i) => {
        if (r.stored) return void c.stored++;
        c.failed++;
        const err = r.error ?? new Error("not stored");
        this.firstFailure ??= err;
        this.failureCodes.add(exitCodeFor(err));
        this.deps.errorsOut?.write(`${raws[i]}\n`);
      });
      this.deps.onBatch();
    });
    const tracked = p.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}
