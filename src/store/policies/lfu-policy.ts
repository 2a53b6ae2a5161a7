// Least frequently used: every read or write counts one access; the slot with the fewest
// accesses is evicted, the least recently touched one among equals.
import type { EvictionPolicy } from "./policy.js";
import { ScoreHeap } from "./score-heap.js";

export class LfuPolicy implements EvictionPolicy {
  readonly name = "lfu" as const;
  private readonly heap = new ScoreHeap();

  get size(): number {
    return this.heap.size;
  }

  resize(slots: number): void {
    this.heap.resize(slots);
  }

  insert(slot: number): void {
    this.heap.push(slot, 1);
  }

  touchRead(slot: number): void {
    this.heap.bump(slot, 1);
  }

  touchWrite(slot: number): void {
    this.heap.bump(slot, 1);
  }

  remove(slot: number): void {
    this.heap.remove(slot);
  }

  victim(): number {
    return this.heap.top();
  }

  clear(): void {
    this.heap.clear();
  }

  /** Access count of a live slot (for tests and diagnostics). */
  frequency(slot: number): number {
    return this.heap.score(slot);
  }
}
