// Collects the smallest `max` distinct keys in sort order from any number of sources without
// holding more than a bounded multiple of `max` at once.

export class TopKeys {
  private buffer: string[] = [];
  private cut = false;
  /** Once `max` cut the set: its last kept key; a key at or above it can never be kept. */
  private ceiling: string | undefined;

  constructor(private readonly max: number) {}

  add(key: string): void {
    if (this.ceiling !== undefined && key >= this.ceiling) return;
    this.buffer.push(key);
    if (this.buffer.length >= 2 * this.max + 1024) this.compact();
  }

  addAll(keys: Iterable<string>): void {
    for (const k of keys) this.add(k);
  }

  /** The sorted, deduplicated result and whether `max` cut it. */
  result(): { keys: string[]; truncated: boolean } {
    this.compact();
    return { keys: this.buffer, truncated: this.cut };
  }

  private compact(): void {
    const sorted = [...new Set(this.buffer)].sort(compareKeys);
    if (sorted.length > this.max) {
      sorted.length = this.max;
      this.cut = true;
      this.ceiling = sorted[sorted.length - 1];
    }
    this.buffer = sorted;
  }
}

/** Key sort order: UTF-16 code units, as JavaScript compares strings. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
