// Least recently used: a doubly linked list through the slots, most recent at the head.
import { growInt32, type EvictionPolicy } from "./policy.js";

const NIL = -1;

export class LruPolicy implements EvictionPolicy {
  readonly name = "lru" as const;
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private head = NIL;
  private tail = NIL;
  private count = 0;

  get size(): number {
    return this.count;
  }

  resize(slots: number): void {
    this.prev = growInt32(this.prev, slots, NIL);
    this.next = growInt32(this.next, slots, NIL);
  }

  insert(slot: number): void {
    this.pushFront(slot);
    this.count++;
  }

  touchRead(slot: number): void {
    if (this.head !== slot) {
      this.unlink(slot);
      this.pushFront(slot);
    }
  }

  touchWrite(slot: number): void {
    this.touchRead(slot);
  }

  remove(slot: number): void {
    this.unlink(slot);
    this.count--;
  }

  victim(): number {
    return this.tail;
  }

  clear(): void {
    this.prev.fill(NIL);
    this.next.fill(NIL);
    this.head = this.tail = NIL;
    this.count = 0;
  }

  private pushFront(slot: number): void {
    this.prev[slot] = NIL;
    this.next[slot] = this.head;
    if (this.head !== NIL) this.prev[this.head] = slot;
    this.head = slot;
    if (this.tail === NIL) this.tail = slot;
  }

  private unlink(slot: number): void {
    const p = this.prev[slot] as number;
    const n = this.next[slot] as number;
    if (p !== NIL) this.next[p] = n;
    else this.head = n;
    if (n !== NIL) this.prev[n] = p;
    else this.tail = p;
    this.prev[slot] = NIL;
    this.next[slot] = NIL;
  }
}
