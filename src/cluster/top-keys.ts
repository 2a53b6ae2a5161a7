// Collects the smallest `max` distinct keys in sort order from any number of sources, in bounded
// steps. The kept keys are a max-heap (O(log max) comparisons per key; once `max` are held, a key
// at or above the largest kept one is dropped after one comparison) with a set beside it for
// deduplication, and the final sort is a merge sort run in steps. Every step reports its work in
// WorkSlicer units, a comparison of long keys costing in proportion to their length, so callers
// pause between slices: 50,000 keys of 4 KB that share a long prefix cost about a second of
// comparisons, which must not run in one turn of the event loop.
import type { WorkSlicer } from "../core/clock.js";

/**
 * Characters of the kept keys (UTF-16 code units) one listing holds at most, 4 Mi (8 MiB as
 * strings): a longer selection is cut like `max` (the first keys that fit are kept, truncated is
 * true). With `max` 50,000 keys of 4 KB would hold 200 MB per request; keys of up to 83
 * characters still fill 50,000 and keys of up to 419 characters the default 10,000.
 */
export const KEY_RESULT_CHARS_MAX = 4 * 1024 * 1024;

/**
 * Characters read per work unit. A unit is about one record visit of a scan (SCAN_SLICE_RECORDS
 * of them make a slice of a few milliseconds); comparing two keys that share a 4 KB prefix costs
 * about 1.5 us, some ten visits, so this errs on the side of shorter slices.
 */
const CHARS_PER_UNIT = 256;
/** The fixed part of one comparison, as characters: short keys compare 16 to a unit. */
const COMPARE_BASE_CHARS = 16;
/** Work units a sort step does before it reports them, so the caller may pause. */
const SORT_STEP_UNITS = 256;
/** Keys sorted by insertion before the merge passes. */
const SORT_RUN = 8;

/** Work units of one comparison: it reads at most the shorter key. */
function compareCost(a: string, b: string): number {
  return (COMPARE_BASE_CHARS + Math.min(a.length, b.length)) / CHARS_PER_UNIT;
}

/**
 * Work units of reading one key once beyond the visit itself: decoding it from the store's bytes,
 * or hashing it for a set lookup.
 */
export function keyReadCost(key: string): number {
  return key.length / CHARS_PER_UNIT;
}

export class TopKeys {
  /** The kept keys, a max-heap by compareKeys: buffer[0] is the largest. At most `max`. */
  private readonly buffer: string[] = [];
  private readonly held = new Set<string>();
  private heldChars = 0;
  private cut = false;
  /** Once a key was dropped: the smallest dropped one; a key at or above it can never be kept. */
  private ceiling: string | undefined;

  /** `charsMax`: characters the kept keys may hold (default KEY_RESULT_CHARS_MAX). */
  constructor(
    private readonly max: number,
    private readonly charsMax = KEY_RESULT_CHARS_MAX,
  ) {}

  /** Offers one key; returns the work it took, in WorkSlicer units. */
  add(key: string): number {
    const heap = this.buffer;
    const top = heap[0];
    let work = 0;
    if (this.ceiling !== undefined) {
      work += compareCost(key, this.ceiling);
      if (key >= this.ceiling) return work;
    }
    if (top !== undefined && heap.length >= this.max) {
      work += compareCost(key, top);
      if (key >= top) {
        // Equal: a duplicate of the largest kept key. Above: one more distinct key than fits.
        if (key !== top) this.cut = true;
        return work;
      }
    }
    work += keyReadCost(key);
    if (this.held.has(key)) return work;
    this.held.add(key);
    this.heldChars += key.length;
    heap.push(key);
    work += siftUp(heap, heap.length - 1);
    while (heap.length > this.max || (this.heldChars > this.charsMax && heap.length > 0)) work += this.dropLargest();
    return work;
  }

  /** Offers every key (at once: for small inputs; a listing offers keys one by one and pauses). */
  addAll(keys: Iterable<string>): void {
    for (const k of keys) this.add(k);
  }

  /** The sorted, deduplicated result and whether `max` cut it, in one go (small inputs). */
  result(): { keys: string[]; truncated: boolean } {
    const steps = this.sortSteps();
    for (;;) {
      const step = steps.next();
      if (step.done === true) return { keys: step.value, truncated: this.cut };
    }
  }

  /** The same result, sorted in slices: `slicer` pauses whenever its budget is spent. */
  async slicedResult(slicer: WorkSlicer): Promise<{ keys: string[]; truncated: boolean }> {
    const steps = this.sortSteps();
    for (;;) {
      const step = steps.next();
      if (step.done === true) return { keys: step.value, truncated: this.cut };
      slicer.spend(step.value);
      await slicer.pause();
    }
  }

  /** Removes the largest kept key (the cut moves below it). */
  private dropLargest(): number {
    const heap = this.buffer;
    const largest = heap[0] as string;
    const last = heap.pop() as string;
    this.held.delete(largest);
    this.heldChars -= largest.length;
    this.cut = true;
    this.ceiling = largest;
    if (heap.length === 0) return 0;
    heap[0] = last;
    return siftDown(heap, 0);
  }

  /** Merge-sorts a copy of the kept keys; yields the work done every SORT_STEP_UNITS or so. */
  private *sortSteps(): Generator<number, string[], void> {
    const n = this.buffer.length;
    let src = this.buffer.slice();
    let dst = new Array<string>(n);
    let work = 0;
    for (let lo = 0; lo < n; lo += SORT_RUN) {
      work += insertionSort(src, lo, Math.min(n, lo + SORT_RUN));
      if (work >= SORT_STEP_UNITS) {
        yield work;
        work = 0;
      }
    }
    for (let width = SORT_RUN; width < n; width *= 2) {
      for (let lo = 0; lo < n; lo += 2 * width) {
        const mid = Math.min(n, lo + width);
        const hi = Math.min(n, lo + 2 * width);
        let i = lo;
        let j = mid;
        let k = lo;
        while (i < mid && j < hi) {
          const a = src[i] as string;
          const b = src[j] as string;
          work += compareCost(a, b);
          if (a < b) {
            dst[k++] = a;
            i++;
          } else {
            dst[k++] = b;
            j++;
          }
          if (work >= SORT_STEP_UNITS) {
            yield work;
            work = 0;
          }
        }
        while (i < mid) dst[k++] = src[i++] as string;
        while (j < hi) dst[k++] = src[j++] as string;
      }
      [src, dst] = [dst, src];
    }
    if (work > 0) yield work;
    return src;
  }
}

/** Moves heap[i] up to its place; returns the work. */
function siftUp(heap: string[], i: number): number {
  const x = heap[i] as string;
  let work = 0;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent] as string;
    work += compareCost(p, x);
    if (p >= x) break;
    heap[i] = p;
    i = parent;
  }
  heap[i] = x;
  return work;
}

/** Moves heap[i] down to its place; returns the work. */
function siftDown(heap: string[], i: number): number {
  const x = heap[i] as string;
  const n = heap.length;
  let work = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= n) break;
    let child = left;
    const l = heap[left] as string;
    if (left + 1 < n) {
      const r = heap[left + 1] as string;
      work += compareCost(l, r);
      if (r > l) child = left + 1;
    }
    const c = heap[child] as string;
    work += compareCost(c, x);
    if (c <= x) break;
    heap[i] = c;
    i = child;
  }
  heap[i] = x;
  return work;
}

/** Sorts keys[lo, hi) in place by insertion; returns the work. */
function insertionSort(keys: string[], lo: number, hi: number): number {
  let work = 0;
  for (let i = lo + 1; i < hi; i++) {
    const x = keys[i] as string;
    let j = i - 1;
    for (; j >= lo; j--) {
      const y = keys[j] as string;
      work += compareCost(x, y);
      if (y <= x) break;
      keys[j + 1] = y;
    }
    keys[j + 1] = x;
  }
  return work;
}

/** Key sort order: UTF-16 code units, as JavaScript compares strings. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
