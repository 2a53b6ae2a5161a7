// A binary min-heap of slots ordered by (score, tick): the lowest score first, the least
// recently touched first among equal scores. Backs the frequency-based policies.
import { growFloat64, growInt32 } from "./policy.js";

export class ScoreHeap {
  private heap = new Int32Array(0);
  private pos = new Int32Array(0);
  private scoreArr = new Float64Array(0);
  private ticks = new Float64Array(0);
  private clock = 0;
  size = 0;

  resize(slots: number): void {
    this.heap = growInt32(this.heap, slots, -1);
    this.pos = growInt32(this.pos, slots, -1);
    this.scoreArr = growFloat64(this.scoreArr, slots);
    this.ticks = growFloat64(this.ticks, slots);
  }

  score(slot: number): number {
    return this.scoreArr[slot] as number;
  }

  contains(slot: number): boolean {
    return (this.pos[slot] as number) >= 0;
  }

  push(slot: number, score: number): void {
    this.scoreArr[slot] = score;
    this.ticks[slot] = ++this.clock;
    const i = this.size++;
    this.heap[i] = slot;
    this.pos[slot] = i;
    this.siftUp(i);
  }

  /** Adds `delta` (>= 0) to the slot's score and marks it most recently touched. */
  bump(slot: number, delta: number): void {
    this.scoreArr[slot] = (this.scoreArr[slot] as number) + delta;
    this.ticks[slot] = ++this.clock;
    this.siftDown(this.pos[slot] as number);
  }

  remove(slot: number): void {
    const i = this.pos[slot] as number;
    if (i < 0) return;
    const last = --this.size;
    this.pos[slot] = -1;
    if (i === last) return;
    const moved = this.heap[last] as number;
    this.heap[i] = moved;
    this.pos[moved] = i;
    this.siftDown(i);
    this.siftUp(this.pos[moved] as number);
  }

  top(): number {
    return this.size > 0 ? (this.heap[0] as number) : -1;
  }

  /** Applies `f` to every score and restores the heap order. */
  rescale(f: (score: number) => number): void {
    for (let i = 0; i < this.size; i++) {
      const s = this.heap[i] as number;
      this.scoreArr[s] = f(this.scoreArr[s] as number);
    }
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  clear(): void {
    this.pos.fill(-1);
    this.size = 0;
  }

  private less(a: number, b: number): boolean {
    const sa = this.scoreArr[a] as number;
    const sb = this.scoreArr[b] as number;
    return sa < sb || (sa === sb && (this.ticks[a] as number) < (this.ticks[b] as number));
  }

  private siftUp(i: number): void {
    const h = this.heap;
    const slot = h[i] as number;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as number;
      if (!this.less(slot, p)) break;
      h[i] = p;
      this.pos[p] = i;
      i = parent;
    }
    h[i] = slot;
    this.pos[slot] = i;
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const n = this.size;
    const slot = h[i] as number;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.less(h[r] as number, h[l] as number) ? r : l;
      const child = h[c] as number;
      if (!this.less(child, slot)) break;
      h[i] = child;
      this.pos[child] = i;
      i = c;
    }
    h[i] = slot;
    this.pos[slot] = i;
  }
}
