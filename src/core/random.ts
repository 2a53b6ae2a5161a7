// Randomness is injected so that probe order, relay choice and fault injection replay exactly
// from a seed in tests.

/** A source of uniform random numbers. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
}

/** An integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random.next() * n);
}

/** Shuffles `items` in place (Fisher-Yates) and returns it. */
export function shuffle<T>(random: Random, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    const t = items[i] as T;
    items[i] = items[j] as T;
    items[j] = t;
  }
  return items;
}

/** Picks up to `count` distinct items at random. */
export function sample<T>(random: Random, items: readonly T[], count: number): T[] {
  return shuffle(random, items.slice()).slice(0, Math.max(0, count));
}

/** Below this many items per wanted one, sampleWhere filters and shuffles them all. */
const SAMPLE_SCAN_RATIO = 4;
/** Random draws sampleWhere makes per wanted item before it gives up on a large list. */
const SAMPLE_DRAWS_PER_ITEM = 8;

/**
 * Picks up to `count` distinct items that pass `keep`, at random. A short list is filtered and
 * shuffled whole (as `sample` of the filtered list); from a long one it draws at random, at most
 * SAMPLE_DRAWS_PER_ITEM times per wanted item, so its cost does not grow with the list (it may
 * then return fewer when few items pass).
 */
export function sampleWhere<T>(random: Random, items: readonly T[], count: number, keep: (item: T) => boolean): T[] {
  if (count <= 0) return [];
  if (items.length <= SAMPLE_SCAN_RATIO * count + SAMPLE_SCAN_RATIO) return sample(random, items.filter(keep), count);
  const picked = new Set<number>();
  const out: T[] = [];
  for (let draws = 0; out.length < count && draws < SAMPLE_DRAWS_PER_ITEM * count; draws++) {
    const i = randomInt(random, items.length);
    if (picked.has(i)) continue;
    picked.add(i);
    const item = items[i] as T;
    if (keep(item)) out.push(item);
  }
  return out;
}

/** A seeded generator (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return {
    next(): number {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** The process's random source. */
export const systemRandom: Random = Object.freeze({ next: () => Math.random() });

/** A boot id of 16 hex digits drawn from `random` (for nodes built without one: tests). */
export function bootIdFrom(random: Random): string {
  let id = "";
  for (let i = 0; i < 16; i++) id += randomInt(random, 16).toString(16);
  return id;
}
