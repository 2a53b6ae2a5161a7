// What this node does when a peer asks: the receiving side of the peer protocol, in internal
// types. peer/ adapts it to the Connect service; the in-memory transport calls it directly.
import { badRequest } from "../core/errors.js";
import { compileKeyFilter, GlobError, type KeyFilter } from "../core/key-filter.js";
import type { Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import type { HashRing } from "../ring/index.js";
import { Applied, type ShardedStore, type VersionedRecord } from "../store/index.js";
import { decodeKeysCursor, encodeKeysCursor } from "./keys-cursor.js";
import type { Lifecycle } from "./lifecycle.js";
import type { VersionClock } from "./write/version-clock.js";
import { PEER_BATCH_BYTES, SCAN_SLICE_RECORDS } from "../core/limits.js";
import { byteSize } from "./record-size.js";
import { checkPeerRecord } from "./peer-input.js";
import type { Clock } from "../core/clock.js";

import type { ApplyOutcome, HealthInfo, KeysPage } from "../transport/index.js";

export interface PeerHandlerDeps {
  readonly nodeId: string;
  readonly store: ShardedStore;
  readonly versions: VersionClock;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly lifecycle: Lifecycle;
  readonly ring: () => HashRing;
  readonly incarnation: () => number;
}

export class PeerHandler {
  constructor(private readonly deps: PeerHandlerDeps) {}

  /**
   * Applies pushed records (values or tombstones) through the version gate. A record for a key
   * this node does not own is dropped (ownership guard): reported as "refused", which senders
   * treat as success, and counted in dist.write.apply_refused.
   */
  applySet(_from: string, records: readonly VersionedRecord[]): ApplyOutcome[] {
    return this.applyRecords(records.map((r) => (r.tombstone ? { ...r, tombstone: false } : r)));
  }

  applyRemove(_from: string, tombstones: readonly VersionedRecord[]): ApplyOutcome[] {
    return this.applyRecords(tombstones.map((r) => ({ ...r, value: "", expiresAtMs: 0, tombstone: true })));
  }

  private applyRecords(records: readonly VersionedRecord[]): ApplyOutcome[] {
    const { store, metrics, versions, nodeId } = this.deps;
    const now = this.deps.clock.nowMs();
    for (const rec of records) checkPeerRecord(rec, now);
    const ring = this.deps.ring();
    return records.map((rec) => {
      if (!ring.isOwner(rec.key, nodeId)) {
        metrics.inc("dist.write.apply_refused");
        return "refused";
      }
      versions.observe(rec.version);
      const r = store.apply(rec);
      if (r.applied === Applied.Stored) return "applied";
      if (r.applied === Applied.Older) metrics.inc("dist.version.conflicts");
      return "stale";
    });
  }

  /**
   * Local records (values, expired values or tombstones) of the keys, undefined when none. The
   * answer is a prefix of `keys` when their values would pass PEER_BATCH_BYTES (at least one
   * record): the caller asks again for the rest.
   */
  getRecords(keys: readonly string[]): Array<VersionedRecord | undefined> {
    const out: Array<VersionedRecord | undefined> = [];
    let bytes = 0;
    for (const k of keys) {
      const rec = this.deps.store.peek(k);
      const size = rec ? byteSize(rec) : k.length * 3;
      if (out.length > 0 && bytes + size > PEER_BATCH_BYTES) break;
      out.push(rec);
      bytes += size;
    }
    return out;
  }

  /** One page of live keys: the rest of one shard, cut short by `limit` when limit > 0. */
  keysPage(cursor: string, limit: number, q: string): KeysPage {
    const { store } = this.deps;
    let filter: KeyFilter;
    try {
      filter = compileKeyFilter(q);
    } catch (err) {
      if (err instanceof GlobError) throw badRequest(`malformed glob in q: ${err.message}`);
      throw err;
    }
    const at = decodeKeysCursor(cursor, store.shardCount);
    // A page stops after SCAN_SLICE_RECORDS units of matching work: the caller asks for the
    // next one, and requests are served in between.
    const page = store.keysPage(at.shard, at.slot, limit, filter, SCAN_SLICE_RECORDS);
    return {
      keys: page.keys,
      nextCursor: page.next ? encodeKeysCursor(page.next.shard, page.next.slot) : "",
      truncated: page.truncated,
    };
  }

  drain(): void {
    this.deps.lifecycle.drain("peer request");
  }

  health(): HealthInfo {
    return { node: this.deps.nodeId, draining: this.deps.lifecycle.draining, incarnation: this.deps.incarnation() };
  }
}
