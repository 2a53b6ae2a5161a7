// An eviction policy orders the live slots of one store shard and names the next victim.
// Tombstones are never in a policy: they are compacted by age, not evicted.

/**
 * Contract: the shard calls `insert` when a slot becomes live, `touchRead`/`touchWrite` on a
 * read or an overwrite of a live slot, `remove` when a live slot stops being live (deleted,
 * expired, evicted, released), and `victim` to choose what to evict (-1 when empty).
 * `resize` grows the metadata to at least `slots` entries and never loses state.
 */
export interface EvictionPolicy {
  readonly name: "lru" | "lfu" | "cawolfu";
  resize(slots: number): void;
  insert(slot: number): void;
  touchRead(slot: number): void;
  touchWrite(slot: number): void;
  remove(slot: number): void;
  victim(): number;
  clear(): void;
  /** Live slots the policy tracks. */
  readonly size: number;
}

/** Grows a typed array to `length`, keeping its contents. */
export function growInt32(a: Int32Array<ArrayBuffer>, length: number, fill: number): Int32Array<ArrayBuffer> {
  if (a.length >= length) return a;
  const b = new Int32Array(length).fill(fill);
  b.set(a);
  return b;
}

export function growFloat64(a: Float64Array<ArrayBuffer>, length: number): Float64Array<ArrayBuffer> {
  if (a.length >= length) return a;
  const b = new Float64Array(length);
  b.set(a);
  return b;
}
