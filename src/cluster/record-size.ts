// Approximate wire size of a record, for batch byte caps and hint accounting.
import type { VersionedRecord } from "../store/index.js";

/** Bytes of key and value plus a fixed allowance for the other fields. */
export function byteSize(rec: VersionedRecord): number {
  return rec.key.length * 3 + rec.value.length + 48;
}

/**
 * Splits `items` into runs of at most `maxItems` items and about `maxBytes` bytes (an item larger
 * than maxBytes travels alone).
 */
export function chunkBy<T>(items: readonly T[], sizeOf: (item: T) => number, maxItems: number, maxBytes: number): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (run.length > 0 && (run.length >= maxItems || bytes + size > maxBytes)) {
      out.push(run);
      run = [];
      bytes = 0;
    }
    run.push(item);
    bytes += size;
  }
  if (run.length > 0) out.push(run);
  return out;
}
