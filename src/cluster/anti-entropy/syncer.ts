// One Merkle sync with one peer, from the requesting side: compare roots, then leaves, then pull
// the records of differing leaves and apply them through the one apply path. Pull only: absence
// never becomes a delete (tombstones carry deletes).
import type { Clock } from "../../core/clock.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import type { VersionedRecord } from "../../store/index.js";
import type { PeerRef, PeerTransport } from "../../transport/index.js";
import type { ReplicaApplier } from "../replica-applier.js";
import { differingLeaves } from "./merkle.js";
import type { MerkleScan } from "./merkle-scan.js";
import type { SyncReceipts } from "./sync-receipts.js";

export interface MerkleSyncerDeps {
  readonly selfId: string;
  readonly scan: MerkleScan;
  readonly transport: PeerTransport;
  readonly applier: ReplicaApplier;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Told of every completed sync, and asked what to report in each root request. */
  readonly receipts: SyncReceipts;
  /**
   * False while this node's copies do not count towards quorum reads (quorum-vote.ts): its ring
   * view may disagree with its peers', so a sync compared keys by a view they do not share, and
   * it keeps no receipt (its peers hold their tombstones for it meanwhile).
   */
  readonly mayReport?: () => boolean;
}

/** The result of one sync: records pulled, whether both sides agreed, whether it failed. */
export interface SyncResult {
  readonly pulled: number;
  /** False on divergence or failure. */
  readonly clean: boolean;
  /** The peer could not be compared. */
  readonly failed: boolean;
}

export class MerkleSyncer {
  constructor(private readonly deps: MerkleSyncerDeps) {}

  /** Compares with one peer and pulls what differs. */
  async syncWith(peer: PeerRef): Promise<SyncResult> {
    const { transport, selfId, metrics, clock } = this.deps;
    const started = clock.monotonicMs();
    const diffDone = () => metrics.set("dist.merkle.last_diff_ns", Math.round((clock.monotonicMs() - started) * 1e6));
    try {
      const local = await this.deps.scan.summarize(peer.id, undefined);
      const leafCount = local.leafCount;
      const remoteRoot = await transport.merkleRoot(peer, selfId, leafCount, this.deps.receipts.pulledThrough(peer.id));
      if (remoteRoot.requesterOnRing === false) {
        // The peer does not know this node yet: it compared none of the keys both own.
        this.deps.logger.debug(LOG.merkleRequesterUnknown, { peer: peer.id });
        return { pulled: 0, clean: false, failed: true };
      }
      if (remoteRoot.root === local.root()) {
        diffDone();
        this.receipt(peer.id, remoteRoot.asOfMs);
        metrics.inc("dist.merkle.syncs");
        return { pulled: 0, clean: true, failed: false };
      }
      const diff = differingLeaves(local.leaves(), await transport.merkleLeaves(peer, selfId, leafCount));
      diffDone();
      const taken = { pulled: 0, tombstonesNotTaken: 0 };
      let cursor = "";
      do {
        const page = await transport.merkleRange(peer, selfId, leafCount, diff, cursor);
        this.applyPulled(page.records, taken);
        cursor = page.nextCursor;
      } while (cursor !== "");
      // A tombstone this node did not take (not an owner in its ring view, before a contact reset,
      // invalid): it does not hold the peer's records, so no receipt for this sync.
      if (taken.tombstonesNotTaken === 0) this.receipt(peer.id, remoteRoot.asOfMs);
      const pulled = taken.pulled;
      metrics.inc("dist.merkle.syncs");
      metrics.inc("dist.merkle.keys_pulled", pulled);
      return { pulled, clean: false, failed: false };
    } catch (err) {
      this.deps.logger.warn(LOG.merkleFetchFailed, { peer: peer.id, error: err instanceof Error ? err.message : String(err) });
      return { pulled: 0, clean: false, failed: true };
    }
  }

  private receipt(peerId: string, asOfMs: number): void {
    if (this.deps.mayReport?.() ?? true) this.deps.receipts.notePulled(peerId, asOfMs);
  }

  private applyPulled(records: readonly VersionedRecord[], taken: { pulled: number; tombstonesNotTaken: number }): void {
    for (const rec of records) {
      const v = this.deps.applier.apply(rec, "anti-entropy");
      if (v.kind === "applied" && v.changed) taken.pulled++;
      else if (rec.tombstone && (v.kind === "refused" || v.kind === "invalid")) taken.tombstonesNotTaken++;
    }
  }
}
