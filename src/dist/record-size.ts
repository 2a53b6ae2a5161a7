// Approximate wire size of a record, for batch byte caps and hint accounting.
import type { VersionedRecord } from "../store/index.js";

/** Bytes of key and value plus a fixed allowance for the other fields. */
export function byteSize(rec: VersionedRecord): number {
  return rec.key.length * 3 + rec.value.length + 48;
}
