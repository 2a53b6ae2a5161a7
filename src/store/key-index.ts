// Key -> slot index of one shard: open addressing with linear probing over an Int32Array.
// It costs about 8 bytes per key where a JS Map costs about 30, and it reuses the key hash the
// store computes anyway to pick the shard. Each slot's hash is kept so probes compare numbers
// before strings. The last lookup is remembered until the index changes: a write looks its key
// up for the version it stamps above and again when it applies (sharded-store.ts), and the
// second lookup is then one number and one string comparison.

const EMPTY = 0;
const MAX_LOAD = 0.6;

export class KeyIndex {
  /** slot + 1 per bucket; 0 = empty. */
  private table = new Int32Array(16);
  private mask = 15;
  private shift = 28;
  private count = 0;
  /** The last lookup (key, hash, answer), forgotten by every insert, remove and clear. */
  private lastKey: string | undefined = undefined;
  private lastHash = 0;
  private lastSlot = -1;

  constructor(
    /** True when the key stored in a slot is `key`. */
    private readonly keyIs: (slot: number, key: string) => boolean,
    /** The hash stored for a slot. */
    private readonly hashAt: (slot: number) => number,
  ) {}

  get size(): number {
    return this.count;
  }

  /** Slot of `key` (whose hash is `hash`), or -1. */
  find(key: string, hash: number): number {
    if (hash === this.lastHash && key === this.lastKey) return this.lastSlot;
    const slot = this.probe(key, hash);
    this.lastKey = key;
    this.lastHash = hash;
    this.lastSlot = slot;
    return slot;
  }

  /** Adds a slot whose key is not in the index yet. */
  insert(slot: number, hash: number): void {
    this.lastKey = undefined;
    if ((this.count + 1) / this.table.length > MAX_LOAD) this.rehash(this.table.length * 2);
    this.place(slot, hash);
    this.count++;
  }

  /** Removes a slot (backward-shift deletion keeps probe chains intact without tombstones). */
  remove(slot: number, hash: number): void {
    this.lastKey = undefined;
    const table = this.table;
    const mask = this.mask;
    let i = this.home(hash);
    while ((table[i] as number) !== slot + 1) {
      if ((table[i] as number) === EMPTY) return;
      i = (i + 1) & mask;
    }
    let hole = i;
    for (let j = (hole + 1) & mask; (table[j] as number) !== EMPTY; j = (j + 1) & mask) {
      const s = (table[j] as number) - 1;
      const home = this.home(this.hashAt(s));
      // Move the entry back into the hole unless its home lies cyclically in (hole, j].
      const inRange = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!inRange) {
        table[hole] = table[j] as number;
        hole = j;
      }
    }
    table[hole] = EMPTY;
    this.count--;
  }

  /**
   * The most buckets a lookup of a stored key looks at: its distance from its home bucket, plus
   * one (0 when empty). An inspection for tests of how keys spread: it walks the whole table.
   */
  probeLengthMax(): number {
    let max = 0;
    for (let i = 0; i < this.table.length; i++) {
      const e = this.table[i] as number;
      if (e !== EMPTY) max = Math.max(max, ((i - this.home(this.hashAt(e - 1))) & this.mask) + 1);
    }
    return max;
  }

  clear(): void {
    this.lastKey = undefined;
    this.table = new Int32Array(16);
    this.mask = 15;
    this.shift = 28;
    this.count = 0;
  }

  private probe(key: string, hash: number): number {
    const table = this.table;
    const mask = this.mask;
    for (let i = this.home(hash); ; i = (i + 1) & mask) {
      const e = table[i] as number;
      if (e === EMPTY) return -1;
      const slot = e - 1;
      if (this.hashAt(slot) === hash && this.keyIs(slot, key)) return slot;
    }
  }

  /**
   * Home bucket of a hash: Fibonacci hashing takes the top bits of hash x golden ratio, so the
   * buckets stay uniform even though every key of a shard shares the hash bits that chose it.
   */
  private home(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> this.shift;
  }

  private place(slot: number, hash: number): void {
    const table = this.table;
    const mask = this.mask;
    let i = this.home(hash);
    while ((table[i] as number) !== EMPTY) i = (i + 1) & mask;
    table[i] = slot + 1;
  }

  private rehash(size: number): void {
    const old = this.table;
    this.table = new Int32Array(size);
    this.mask = size - 1;
    this.shift = 32 - Math.log2(size);
    for (let i = 0; i < old.length; i++) {
      const e = old[i] as number;
      if (e !== EMPTY) this.place(e - 1, this.hashAt(e - 1));
    }
  }
}
