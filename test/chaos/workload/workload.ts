// The workload: N workers, each issuing one operation at a time to a random node, together at
// most `opsPerSecond`. Writes and deletes at QUORUM; reads at QUORUM and at ONE; conditional
// writes (a QUORUM read for the ETag, then a PUT with If-Match on it, or If-None-Match: * when the
// key was absent) on the conditional keys; QUORUM increments of 1–5 on the counter keys; lease
// reads of the lease keys, whose holder "loads" and then fills (a QUORUM PUT with the token and a
// short TTL, sometimes after the lease ran out) or releases the lease (LEASE_PLAN). Every
// written value is unique (worker and sequence number). Workers can be paused between operations,
// which is how checkpoints see a quiet cluster.
import type { KeyPlan, Op } from "../checker/history.js";
import type { SeededRandom } from "../lib/random.js";
import type { CacheClient, Endpoint, OpContext } from "./cache-client.js";

/** The keys one worker operates on, by kind. */
interface WorkerKeys {
  own: readonly KeyPlan[];
  contended: readonly KeyPlan[];
  cas: readonly KeyPlan[];
  counters: readonly KeyPlan[];
  leases: readonly KeyPlan[];
  readable: readonly KeyPlan[];
}

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
export const MIX = { write: 0.32, delete: 0.08, conditional: 0.08, incr: 0.08, lease: 0.08, readQuorum: 0.18, readOne: 0.18 } as const;

/**
 * One lease cycle: a lease read (the lease lasts `leaseMs`; a miss waits one of `waitsMs` for
 * another holder's value). The holder loads for up to `loadMaxMs`, then releases the lease
 * (`releaseShare`, as when a load fails) or fills it with a value that lives `fillTtlMs`, so the
 * key is missed again soon; `lateShare` of the holders load past the lease's end (by `lateByMs`)
 * and fill then, which the primary must refuse (409).
 */
export const LEASE_PLAN = { leaseMs: 2_000, waitsMs: [0, 500, 1_500], loadMaxMs: 800, fillTtlMs: 1_500, releaseShare: 0.2, lateShare: 0.1, lateByMs: 300 } as const;

/** The shares of the second draw, among the operations that are neither conditional, increments nor lease cycles. */
const REST = 1 - MIX.conditional - MIX.incr - MIX.lease;
const WRITE_SHARE = MIX.write / REST;
const DELETE_SHARE = MIX.delete / REST;
const QUORUM_READ_SHARE = MIX.readQuorum / (MIX.readQuorum + MIX.readOne);

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
    const plan: WorkerKeys = {
      own,
      contended,
      cas: this.options.keys.filter((k) => k.kind === "cas"),
      counters: this.options.keys.filter((k) => k.kind === "counter"),
      leases: this.options.keys.filter((k) => k.kind === "lease"),
      // counters answer decimal text no write produced, and lease keys' values expire: each kind
      // is checked by its own gate
      readable: this.options.keys.filter((k) => k.kind !== "counter" && k.kind !== "lease"),
    };
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
      for (const op of await this.once(worker, random, plan, () => `w${worker}-${++seq}`)) this.deps.record(op);
      const wait = intervalMs - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
    this.idle[worker] = true;
    this.checkIdle();
  }

  /** One operation (a conditional write is two: its read and its write; a lease cycle one or two). */
  private async once(worker: number, random: SeededRandom, keys: WorkerKeys, nextValue: () => string): Promise<Op[]> {
    const { client } = this.deps;
    const node = random.pick(this.deps.endpoints());
    const ctx: OpContext = { worker, phase: this.deps.phase(), timeoutMs: this.options.timeoutMs };
    const { own, contended, cas, counters, leases } = keys;
    let roll = random.next();
    const mutationKey = () => (own.length > 0 && (contended.length === 0 || random.next() < 0.5) ? random.pick(own) : random.pick(contended)).key;
    if ((roll -= MIX.conditional) < 0 && cas.length > 0) return this.conditional(node, random.pick(cas).key, nextValue(), ctx);
    if ((roll -= MIX.incr) < 0 && counters.length > 0) return [await client.incr(node, random.pick(counters).key, random.int(1, 5), "quorum", ctx)];
    if ((roll -= MIX.lease) < 0 && leases.length > 0) return this.leaseCycle(node, random.pick(leases).key, random, nextValue, ctx);
    roll = random.next();
    const mutations = own.length + contended.length > 0;
    if (mutations && roll < WRITE_SHARE) return [await client.write(node, mutationKey(), nextValue(), "quorum", ctx)];
    if (mutations && roll < WRITE_SHARE + DELETE_SHARE) return [await client.delete(node, mutationKey(), "quorum", ctx)];
    const key = random.pick(keys.readable).key;
    return [await client.read(node, key, random.next() < QUORUM_READ_SHARE ? "quorum" : "one", ctx)];
  }

  /** A lease read; when it got the lease, a load and then the fill or release (through a random node, as LEASE_PLAN draws). */
  private async leaseCycle(node: Endpoint, key: string, random: SeededRandom, nextValue: () => string, ctx: OpContext): Promise<Op[]> {
    const { client } = this.deps;
    const plan = LEASE_PLAN;
    const read = await client.leaseRead(node, key, plan.leaseMs, random.pick(plan.waitsMs), ctx);
    if (read.lease_answer !== "granted" || read.lease === undefined) return [read];
    const roll = random.next();
    const late = roll >= plan.releaseShare && roll < plan.releaseShare + plan.lateShare;
    await sleep(late ? plan.leaseMs + plan.lateByMs : random.next() * plan.loadMaxMs);
    const target = random.pick(this.deps.endpoints());
    const next = { ...ctx, phase: this.deps.phase() };
    if (roll < plan.releaseShare) return [read, await client.release(target, key, read.lease, next)];
    return [read, await client.fill(target, key, nextValue(), read.lease, plan.fillTtlMs, next)];
  }

  /** A QUORUM read for the ETag, then the write conditioned on it; a failed read writes nothing. */
  private async conditional(node: Endpoint, key: string, value: string, ctx: OpContext): Promise<Op[]> {
    const read = await this.deps.client.read(node, key, "quorum", ctx);
    if (read.outcome !== "ok") return [read];
    const precondition = read.value === null ? "*" : read.etag;
    if (precondition === undefined) return [read];
    return [read, await this.deps.client.conditionalWrite(node, key, value, precondition, ctx)];
  }
}
