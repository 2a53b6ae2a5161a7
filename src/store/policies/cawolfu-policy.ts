// cawolfu: cache-aware, write-optimised LFU. A frequency score per live slot where a read adds
// READ_WEIGHT and a write (insert or overwrite) adds the smaller WRITE_WEIGHT, so write-heavy
// keys that nobody reads do not crowd out read-hot ones. Scores age: every time the shard has
// seen `agingWindow` accesses (a multiple of its capacity share, hence "cache-aware") every
// score is halved, so yesterday's popularity fades. The lowest score is evicted, the least
// recently touched among equals.
import type { EvictionPolicy } from "./policy.js";
import { ScoreHeap } from "./score-heap.js";

export const READ_WEIGHT = 1;
export const WRITE_WEIGHT = 0.25;
/** Accesses per slot of capacity between two agings. */
export const AGING_ACCESSES_PER_SLOT = 8;
const MIN_AGING_WINDOW = 256;

export class CawolfuPolicy implements EvictionPolicy {
  readonly name = "cawolfu" as const;
  private readonly heap = new ScoreHeap();
  private readonly agingWindow: number;
  private accesses = 0;
  /** Number of agings so far (for tests and diagnostics). */
  agings = 0;

  constructor(capacityShare: number) {
    this.agingWindow = Math.max(MIN_AGING_WINDOW, AGING_ACCESSES_PER_SLOT * capacityShare);
  }

  get size(): number {
    return this.heap.size;
  }

  resize(slots: number): void {
    this.heap.resize(slots);
  }

  insert(slot: number): void {
    this.heap.push(slot, WRITE_WEIGHT);
    this.counted();
  }

  touchRead(slot: number): void {
    this.heap.bump(slot, READ_WEIGHT);
    this.counted();
  }

  touchWrite(slot: number): void {
    this.heap.bump(slot, WRITE_WEIGHT);
    this.counted();
  }

  remove(slot: number): void {
    this.heap.remove(slot);
  }

  victim(): number {
    return this.heap.top();
  }

  clear(): void {
    this.heap.clear();
    this.accesses = 0;
  }

  score(slot: number): number {
    return this.heap.score(slot);
  }

  private counted(): void {
    if (++this.accesses >= this.agingWindow) {
      this.accesses = 0;
      this.agings++;
      this.heap.rescale((s) => s / 2);
    }
  }
}
