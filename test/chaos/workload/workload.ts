// The workload: N workers, each issuing one operation at a time to a random node, together at
// most `opsPerSecond`. Writes and deletes at QUORUM; reads at QUORUM and at ONE. Every written
// value is unique (worker and sequence number). Workers can be paused between operations, which
// is how checkpoints see a quiet cluster.
import type { KeyPlan, Op } from "../checker/history.js";
import type { SeededRandom } from "../lib/random.js";
import type { CacheClient, Endpoint, OpContext } from "./cache-client.js";

export interface WorkloadOptions {
  workers: number;
  opsPerSecond: number;
  timeoutMs: number;
  keys: readonly KeyPlan[];
}

export interface WorkloadDeps {
  client: CacheClient;
  /** Every node a client may address (down ones included: clients do not know). */
  endpoints(): readonly Endpoint[];
  phase(): string;
  record(op: Op): void;
  random: SeededRandom;
}

/** Shares of each kind of operation, summing to 1. */
export const MIX = { write: 0.4, delete: 0.08, readQuorum: 0.26, readOne: 0.26 } as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Workload {
  private paused = false;
  private stopped = false;
  private readonly idle: boolean[];
  private readonly loops: Promise<void>[] = [];
  private resumeSignal: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly options: WorkloadOptions,
    private readonly deps: WorkloadDeps,
  ) {
    this.idle = new Array<boolean>(options.workers).fill(false);
  }

  start(): void {
    for (let w = 0; w < this.options.workers; w++) this.loops.push(this.loop(w, this.deps.random.fork(`worker-${w}`)));
  }

  /** Stops issuing operations; resolves once every worker's operation in flight has completed. */
  async pause(): Promise<void> {
    this.paused = true;
    this.resumeSignal = new Promise((resolve) => (this.release = resolve));
    await new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.checkIdle();
    });
  }

  resume(): void {
    this.paused = false;
    this.idle.fill(false);
    this.release();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resume();
    await Promise.all(this.loops);
  }

  private checkIdle(): void {
    if (!this.idle.every(Boolean)) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private async loop(worker: number, random: SeededRandom): Promise<void> {
    const intervalMs = (this.options.workers * 1000) / this.options.opsPerSecond;
    const own = this.options.keys.filter((k) => k.kind === "single" && k.writer === worker);
    const contended = this.options.keys.filter((k) => k.kind === "contended");
    let seq = 0;
    // stagger the workers so their operations do not start in lockstep
    await sleep(random.next() * intervalMs);
    while (!this.stopped) {
      if (this.paused) {
        this.idle[worker] = true;
        this.checkIdle();
        await this.resumeSignal;
        continue;
      }
      const started = performance.now();
      const op = await this.once(worker, random, own, contended, () => `w${worker}-${++seq}`);
      this.deps.record(op);
      const wait = intervalMs - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
    this.idle[worker] = true;
    this.checkIdle();
  }

  private once(worker: number, random: SeededRandom, own: readonly KeyPlan[], contended: readonly KeyPlan[], nextValue: () => string): Promise<Op> {
    const { client } = this.deps;
    const node = random.pick(this.deps.endpoints());
    const ctx: OpContext = { worker, phase: this.deps.phase(), timeoutMs: this.options.timeoutMs };
    const roll = random.next();
    const mutationKey = () => (own.length > 0 && (contended.length === 0 || random.next() < 0.5) ? random.pick(own) : random.pick(contended)).key;
    if (roll < MIX.write) return client.write(node, mutationKey(), nextValue(), "quorum", ctx);
    if (roll < MIX.write + MIX.delete) return client.delete(node, mutationKey(), "quorum", ctx);
    const key = random.pick(this.options.keys).key;
    return client.read(node, key, roll < MIX.write + MIX.delete + MIX.readQuorum ? "quorum" : "one", ctx);
  }
}
