// The tombstones of one store shard in the order they became tombstones here, oldest first: a
// doubly linked list through a pool of nodes in typed arrays, so appending one, removing any one
// and finding the oldest cost O(1) each. A Map used as this queue found its oldest entry with
// keys().next(), which steps over every entry deleted at the Map's front: once the tombstone
// budget was full, each delete cost O(tombstones per shard) (55 µs with one shard, an expiration
// slice of 410 ms; found by a review). A node holds its slot and the local time the slot became a
// tombstone; the shard keeps a tombstone's node where a live record keeps its expiry, so the
// queue costs nothing per live record, only per tombstone (20 bytes a node, grown by doubling).
import { growFloat64, growInt32 } from "./policies/policy.js";

const NIL = -1;
const INITIAL_NODES = 16;

export class TombstoneQueue {
  private slots = new Int32Array(INITIAL_NODES);
  private sinceMs = new Float64Array(INITIAL_NODES);
  private prev = new Int32Array(INITIAL_NODES).fill(NIL);
  private next = new Int32Array(INITIAL_NODES).fill(NIL);
  /** The oldest node, NIL when empty. */
  private head = NIL;
  /** The newest node, NIL when empty. */
  private tail = NIL;
  /** Removed nodes for reuse, linked through `next`. */
  private freeHead = NIL;
  /** Nodes ever handed out since the last clear (the rest of the pool is unused). */
  private highWater = 0;
  private count = 0;
  /**
   * Entries looked at to find the oldest, since the start (a seam for tests): one per `oldest()`
   * call, however many entries were removed before it. The Map this queue replaced stepped over
   * each removed entry at its front there.
   */
  steps = 0;

  get size(): number {
    return this.count;
  }

  /** Nodes the pool holds room for (for tests and sizing: 20 bytes each). */
  get capacity(): number {
    return this.slots.length;
  }

  /** Appends `slot`, a tombstone since `sinceMs`, as the newest; returns its node. */
  push(slot: number, sinceMs: number): number {
    const node = this.allocate();
    this.slots[node] = slot;
    this.sinceMs[node] = sinceMs;
    this.prev[node] = this.tail;
    this.next[node] = NIL;
    if (this.tail !== NIL) this.next[this.tail] = node;
    else this.head = node;
    this.tail = node;
    this.count++;
    return node;
  }

  /** Removes `node` (one `push` returned and not removed since) wherever it is in the queue. */
  remove(node: number): void {
    const p = this.prev[node] as number;
    const n = this.next[node] as number;
    if (p !== NIL) this.next[p] = n;
    else this.head = n;
    if (n !== NIL) this.prev[n] = p;
    else this.tail = p;
    this.prev[node] = NIL;
    this.next[node] = this.freeHead;
    this.freeHead = node;
    this.count--;
  }

  /** The oldest node, or -1 when the queue is empty. */
  oldest(): number {
    this.steps++;
    return this.head;
  }

  /** The slot of `node`. */
  slotOf(node: number): number {
    return this.slots[node] as number;
  }

  /** When `node`'s slot became a tombstone here, local ms. */
  sinceOf(node: number): number {
    return this.sinceMs[node] as number;
  }

  /** Forgets every node and gives the pool's memory back (down to its initial size). */
  clear(): void {
    this.slots = new Int32Array(INITIAL_NODES);
    this.sinceMs = new Float64Array(INITIAL_NODES);
    this.prev = new Int32Array(INITIAL_NODES).fill(NIL);
    this.next = new Int32Array(INITIAL_NODES).fill(NIL);
    this.head = this.tail = this.freeHead = NIL;
    this.highWater = this.count = 0;
  }

  private allocate(): number {
    if (this.freeHead !== NIL) {
      const node = this.freeHead;
      this.freeHead = this.next[node] as number;
      return node;
    }
    if (this.highWater === this.slots.length) this.grow();
    return this.highWater++;
  }

  private grow(): void {
    const n = this.slots.length * 2;
    this.slots = growInt32(this.slots, n, 0);
    this.sinceMs = growFloat64(this.sinceMs, n);
    this.prev = growInt32(this.prev, n, NIL);
    this.next = growInt32(this.next, n, NIL);
  }
}
