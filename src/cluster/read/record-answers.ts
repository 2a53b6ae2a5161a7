// The answering side of Get: this node's records of the keys a peer asks for.
import { PEER_BATCH_BYTES } from "../../core/limits.js";
import type { ShardedStore, VersionedRecord } from "../../store/index.js";
import { byteSize } from "../record-size.js";

/**
 * Local records (values, expired values or tombstones) of the keys, undefined when none. The
 * answer is a prefix of `keys` when their values would pass PEER_BATCH_BYTES (at least one
 * record): the caller asks again for the rest.
 */
export function recordsForPeer(store: ShardedStore, keys: readonly string[]): Array<VersionedRecord | undefined> {
  const out: Array<VersionedRecord | undefined> = [];
  let bytes = 0;
  for (const k of keys) {
    const rec = store.peek(k);
    const size = rec ? byteSize(rec) : k.length * 3;
    if (out.length > 0 && bytes + size > PEER_BATCH_BYTES) break;
    out.push(rec);
    bytes += size;
  }
  return out;
}
