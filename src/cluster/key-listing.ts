// The cluster-wide key listing behind the key browser, both sides of it: listing the matching
// live keys of this node and of every alive peer (sorted, deduplicated, the first `max` kept),
// and answering a peer's request for one page of this node's keys. Whole-store scans, the
// selection of the first keys (top-keys.ts) and its final sort pause every SCAN_SLICE_RECORDS
// units of work, so requests are served while they run. A node coordinates at most
// KEY_LISTINGS_AT_ONCE_MAX listings at once (one more is 503 with Retry-After); a listing whose
// caller is gone (its signal aborted) stops at its next pause and frees its slot.
import { WorkSlicer, type YieldToLoop } from "../core/clock.js";
import { badRequest, CacheError } from "../core/errors.js";
import { compileKeyFilter, GlobError, type KeyFilter } from "../core/key-filter.js";
import { KEY_LISTINGS_AT_ONCE_MAX, KEY_LISTINGS_RETRY_AFTER_S, SCAN_LIMITS, SCAN_SLICE_RECORDS } from "../core/limits.js";
import type { ShardedStore } from "../store/index.js";
import type { KeysPage, PeerTransport } from "../transport/index.js";
import type { KeyListing } from "./cache-service.js";
import type { ClusterView } from "./cluster-view.js";
import { decodeKeysCursor, encodeKeysCursor } from "./keys-cursor.js";
import { keyReadCost, TopKeys } from "./top-keys.js";

export interface KeyListerDeps {
  readonly store: ShardedStore;
  readonly view: ClusterView;
  readonly transport: PeerTransport;
  /** How the local listing pauses between slices of SCAN_SLICE_RECORDS keys. */
  readonly yieldToLoop: YieldToLoop;
}

export class KeyLister {
  /** Listings this node coordinates now. */
  private running = 0;

  constructor(private readonly deps: KeyListerDeps) {}

  /**
   * Collects the matching live keys of this node and every alive peer, deduplicated, sorted, the
   * first `max` kept. A peer whose listing fails, or that this node suspects (not asked), is
   * reported in partialNodes. Refused with 503 UNAVAILABLE (Retry-After) while
   * KEY_LISTINGS_AT_ONCE_MAX listings run. Rejects at its next pause once `abandoned` aborts.
   */
  async list(q: string, max: number, abandoned?: AbortSignal): Promise<KeyListing> {
    const filter = compileKeyFilter(q);
    if (this.running >= KEY_LISTINGS_AT_ONCE_MAX) {
      throw new CacheError(
        "UNAVAILABLE",
        "this node is running as many key listings as it takes at once; retry later",
        { listings_max: KEY_LISTINGS_AT_ONCE_MAX },
        { retryAfterS: KEY_LISTINGS_RETRY_AFTER_S },
      );
    }
    stopIfAbandoned(abandoned);
    this.running++;
    try {
      return await this.listWith(filter, q, max, abandoned);
    } finally {
      this.running--;
    }
  }

  private async listWith(filter: KeyFilter, q: string, max: number, abandoned: AbortSignal | undefined): Promise<KeyListing> {
    const top = new TopKeys(max);
    const alive = this.deps.view.alivePeers();
    // Ring members this node suspects are not asked (a stopped one would hold the listing for the
    // peer timeout) but named: the keys only they hold may be missing.
    const partialNodes: string[] = this.deps.view.ringPeers().filter((p) => this.deps.view.suspect(p.id)).map((p) => p.id);
    // The local scan (sliced) and the peers' pages fill `top` side by side.
    await Promise.all([
      this.collectLocalKeys(filter, top, abandoned),
      ...alive.map(async (peer) => {
        try {
          let cursor = "";
          do {
            stopIfAbandoned(abandoned);
            const page = await this.deps.transport.keys(peer, cursor, SCAN_LIMITS.keyListingPage, q);
            await this.offerSliced(page.keys, top, abandoned);
            cursor = page.nextCursor;
          } while (cursor !== "");
        } catch {
          partialNodes.push(peer.id);
        }
      }),
    ]);
    const { keys, truncated } = await top.slicedResult(this.slicer(abandoned));
    return { keys, truncated, partialNodes: partialNodes.sort() };
  }

  /** One page of this node's live keys for a peer: the rest of one shard, cut short by `limit` when limit > 0. */
  page(cursor: string, limit: number, q: string): KeysPage {
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

  /** Offers a peer's page of keys to `top`, yielding to the event loop between slices. */
  private async offerSliced(keys: readonly string[], top: TopKeys, abandoned: AbortSignal | undefined): Promise<void> {
    const slicer = this.slicer(abandoned);
    for (const key of keys) {
      if (slicer.spend(top.add(key))) await slicer.pause();
    }
  }

  /** Slices of SCAN_SLICE_RECORDS units; each pause rejects once `abandoned` has aborted. */
  private slicer(abandoned?: AbortSignal): WorkSlicer {
    const pause = abandoned === undefined ? this.deps.yieldToLoop : () => this.deps.yieldToLoop().then(() => stopIfAbandoned(abandoned));
    return new WorkSlicer(pause, SCAN_SLICE_RECORDS);
  }

  /** Adds this node's matching keys to `top`, yielding to the event loop between slices. */
  private async collectLocalKeys(filter: KeyFilter, top: TopKeys, abandoned: AbortSignal | undefined): Promise<void> {
    const { store } = this.deps;
    const slicer = this.slicer(abandoned);
    for (let shard = 0; shard < store.shardCount; shard++) {
      for (let slot = 0; slot >= 0; ) {
        slot = store.scanLiveKeys(shard, slot, (key) => {
          // Each key was just decoded from the store's bytes: that costs in proportion to its length.
          const kept = filter.matches(key) ? top.add(key) : 0;
          return !slicer.spend(filter.cost(key) + keyReadCost(key) + kept);
        });
        await slicer.pause();
      }
    }
  }
}

/** Throws once the listing's caller is gone. */
function stopIfAbandoned(abandoned: AbortSignal | undefined): void {
  if (abandoned?.aborted) throw new CacheError("UNAVAILABLE", "the key listing was abandoned: its client went away");
}
