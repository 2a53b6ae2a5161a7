// The store scans behind Merkle anti-entropy, shared by both sides: summarizing the records
// this node and a peer both own into a tree, and reading the records of chosen leaves a page
// at a time. The compared set is the keys both nodes own in this node's ring view, values and
// tombstones, expired values left out, and tombstones past their TTL left out for a peer that has
// pulled them from here since they arrived (offered, below). Scans yield to the event loop every
// SCAN_LIMITS.merkleRecords records; writes landing meanwhile may or may not be counted, which
// the next sync settles.
import { WorkSlicer, type Clock, type YieldToLoop } from "../../core/clock.js";
import { hash32 } from "../../core/hash.js";
import { badRequest } from "../../core/errors.js";
import { cursorInt, decodeCursor, encodeCursor } from "../../core/cursor.js";
import { PEER_BATCH_BYTES, SCAN_LIMITS } from "../../core/limits.js";
import type { HashRing } from "../../ring/index.js";
import { isLiveAt, versionTimeMs, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { MerkleRangePage } from "../../transport/index.js";
import { byteSize } from "../record-size.js";
import { leafCountFor, leafOf, MerkleBuilder, recordDigest } from "./merkle.js";

export interface MerkleScanDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly clock: Clock;
  readonly ring: () => HashRing;
  /** How scans pause between slices of SCAN_LIMITS.merkleRecords records. */
  readonly yieldToLoop: YieldToLoop;
  /** Target records per leaf when this side picks the leaf count. */
  readonly chunkSize: number;
  readonly tombstoneTtlMs: number;
  /** Up to when (this node's monotonic ms) a peer has pulled this node's records (SyncReceipts.reportedBy). */
  readonly reportedBy: (peerId: string) => number;
}

export class MerkleScan {
  constructor(private readonly deps: MerkleScanDeps) {}

  /**
   * Summarizes the records this node and `peerId` both own, into `leafCount` leaves (or as many
   * as the record count asks for at chunkSize records per leaf).
   */
  async summarize(peerId: string, leafCount: number | undefined): Promise<MerkleBuilder> {
    const slicer = new WorkSlicer(this.deps.yieldToLoop, SCAN_LIMITS.merkleRecords);
    if (leafCount !== undefined) {
      // The asking side names the leaf count (every answer): records go straight into the leaves.
      const b = new MerkleBuilder(leafCount);
      await this.eachShared(peerId, slicer, (rec, hash) => b.add(rec, hash));
      return b;
    }
    // Digests, not records, are kept until the leaf count is known: 12 bytes per record in typed
    // arrays, and values overwritten meanwhile are not held on to. (Three number[] of a million
    // entries each, and their unsliced fold into the leaves, held the loop for up to 53 ms when
    // four peers asked at once.)
    const digests = new DigestList();
    await this.eachShared(peerId, slicer, (rec, hash) => {
      const [hi, lo] = recordDigest(rec);
      digests.push(hash, hi, lo);
    });
    const b = new MerkleBuilder(leafCountFor(digests.length, this.deps.chunkSize));
    for (let i = 0; i < digests.length; i++) {
      if (slicer.spend()) await slicer.pause();
      digests.addTo(b, i);
    }
    return b;
  }

  /** Calls `take` for every record in the set shared with `peerId`, with hash32 of its key, pausing between slices. */
  private async eachShared(peerId: string, slicer: WorkSlicer, take: (rec: VersionedRecord, keyHash: number) => void): Promise<void> {
    const { store } = this.deps;
    const now = this.deps.clock.nowMs();
    const ring = this.deps.ring();
    const reported = this.deps.reportedBy(peerId);
    for (let s = 0; s < store.shardCount; s++) {
      let slot = 0;
      for (;;) {
        slot = store.scanRecords(s, slot, (rec) => {
          if (slicer.spend()) return false;
          const hash = hash32(rec.key);
          if (this.shared(ring, rec, hash, peerId, now, reported)) take(rec, hash);
          return true;
        });
        if (slot < 0) break;
        await slicer.pause();
      }
    }
  }

  /**
   * Records of the requested leaves shared with `requester`, a page at a time (the cursor holds
   * the shard and slot to resume at): at most SCAN_LIMITS.merkleRangePage records and
   * PEER_BATCH_BYTES (a larger record travels alone).
   */
  async range(requester: string, leafCount: number, leaves: readonly number[], cursor: string): Promise<MerkleRangePage> {
    const wanted = new Set(leaves);
    const { store } = this.deps;
    let { shard, slot } = decodeRangeCursor(cursor);
    const records: VersionedRecord[] = [];
    let bytes = 0;
    let full = false;
    const now = this.deps.clock.nowMs();
    const ring = this.deps.ring();
    const reported = this.deps.reportedBy(requester);
    const slicer = new WorkSlicer(this.deps.yieldToLoop, SCAN_LIMITS.merkleRecords);
    while (shard < store.shardCount) {
      const resume = store.scanRecords(shard, slot, (rec) => {
        if (slicer.spend()) return false;
        const hash = hash32(rec.key);
        if (!wanted.has(leafOf(hash, leafCount)) || !this.shared(ring, rec, hash, requester, now, reported)) return true;
        // Checked before the record joins the page: a page passes PEER_BATCH_BYTES only as one
        // record alone; a declined record opens the next page.
        const size = byteSize(rec);
        if (records.length >= SCAN_LIMITS.merkleRangePage || (records.length > 0 && bytes + size > PEER_BATCH_BYTES)) {
          full = true;
          return false;
        }
        records.push(rec);
        bytes += size;
        return true;
      });
      if (full) return { records, nextCursor: encodeCursor({ s: shard, i: resume }) };
      if (resume >= 0) {
        // The slice is used up: let requests run, then go on from the declined record.
        slot = resume;
        await slicer.pause();
        continue;
      }
      shard++;
      slot = 0;
    }
    return { records, nextCursor: "" };
  }

  /** Whether `nodeId` is on this node's ring (the one summaries compute the compared set with). */
  onRing(nodeId: string): boolean {
    return this.deps.ring().nodes.includes(nodeId);
  }

  /**
   * In the compared set: owned by both nodes (in `ring`; `keyHash`: hash32 of its key), and an
   * unexpired value or a tombstone offered to the peer, which has pulled this node's records up
   * to `reported`.
   */
  private shared(ring: HashRing, rec: VersionedRecord, keyHash: number, peerId: string, nowMs: number, reported: number): boolean {
    if (!rec.tombstone && !isLiveAt(rec, nowMs)) return false;
    const owners = ring.ownersAtHash(keyHash).ids;
    return owners.includes(this.deps.selfId) && owners.includes(peerId) && (!rec.tombstone || this.offered(rec, nowMs, reported));
  }

  /**
   * A tombstone within its TTL (counted from its version's time, the same on every node) is
   * compared with every peer. Past it, it is held only for peers that have not pulled it from here
   * since it arrived (sync-receipts.ts), and compared only with those: for the others it is as if
   * compacted, so a node that has compacted it does not pull it back from one that still holds it
   * (two owners that got a tombstone seconds apart handed it back and forth, every TTL, for ever).
   */
  private offered(rec: VersionedRecord, nowMs: number, reported: number): boolean {
    if (versionTimeMs(rec.version) + this.deps.tombstoneTtlMs > nowMs) return true;
    const since = this.deps.store.tombstoneSince(rec.key);
    return since !== undefined && since >= reported;
  }
}

function decodeRangeCursor(cursor: string): { shard: number; slot: number } {
  if (cursor === "") return { shard: 0, slot: 0 };
  const f = decodeCursor(cursor);
  const shard = f && cursorInt(f, "s");
  const slot = f && cursorInt(f, "i");
  if (shard === undefined || slot === undefined) throw badRequest("invalid cursor");
  return { shard, slot };
}

/** Record digests (key hash and the two digest halves) in growing typed arrays. */
class DigestList {
  length = 0;
  private words = new Uint32Array(3 * 1024);

  push(keyHash: number, hi: number, lo: number): void {
    if (3 * this.length === this.words.length) {
      const grown = new Uint32Array(2 * this.words.length);
      grown.set(this.words);
      this.words = grown;
    }
    const at = 3 * this.length++;
    this.words[at] = keyHash;
    this.words[at + 1] = hi;
    this.words[at + 2] = lo;
  }

  addTo(b: MerkleBuilder, i: number): void {
    b.addDigest(this.words[3 * i] as number, this.words[3 * i + 1] as number, this.words[3 * i + 2] as number);
  }
}
