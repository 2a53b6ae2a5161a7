// Merkle anti-entropy. Both sides summarize the records (values and tombstones, expired values
// left out) of the keys that they BOTH own in the requester's ring view; the requester compares
// roots, then leaves, then pulls the records of differing leaves and applies them through the
// version gate. Pull only: absence never becomes a delete (tombstones carry deletes).
//
// The auto-sync timer syncs with every alive peer each tick. Adaptive backoff: after each fully
// clean tick the sleep doubles, up to SERVICE_AUTO_SYNC_MAX_FACTOR x the interval; any divergent
// tick resets it to 1x.
import { WorkSlicer, type Clock, type TimerHandle, type Timers, type YieldToLoop } from "../../core/clock.js";
import { badRequest } from "../../core/errors.js";
import { cursorInt, decodeCursor, encodeCursor } from "../../core/cursor.js";
import { LOG, type Logger } from "../../log/index.js";
import type { Metrics } from "../../observability/index.js";
import { Applied, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { MerkleRangePage, MerkleRoot, PeerRef, PeerTransport } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { HashRing } from "../../ring/index.js";
import { differingLeaves, leafCountFor, leafOf, MerkleBuilder, recordDigest, validLeafCount } from "./merkle.js";
import type { VersionClock } from "../write/version-clock.js";
import { PEER_BATCH_BYTES, SCAN_SLICE_RECORDS } from "../../core/limits.js";
import { byteSize } from "../record-size.js";
import { peerRecordProblem } from "../peer-input.js";

/** Records per MerkleRange page (and at most PEER_BATCH_BYTES of them). */
const RANGE_PAGE = 1000;

export interface AntiEntropyDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly view: ClusterView;
  readonly transport: PeerTransport;
  readonly versions: VersionClock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  /** How store scans pause between slices of SCAN_SLICE_RECORDS records. */
  readonly yieldToLoop: YieldToLoop;
  /** 0 disables the timer (syncs can still be run by hand). */
  readonly intervalMs: number;
  readonly maxFactor: number;
  readonly chunkSize: number;
}

/** Next backoff factor after a tick (pure). */
export function nextBackoffFactor(current: number, clean: boolean, maxFactor: number): number {
  return clean ? Math.min(current * 2, Math.max(1, maxFactor)) : 1;
}

export class AntiEntropy {
  private timer: TimerHandle | undefined;
  private running = false;
  private factor = 1;
  private caughtUpFlag = false;
  private catchUpTimer: TimerHandle | undefined;
  private catchUpRunning = false;
  private catchUpRequested = false;

  constructor(private readonly deps: AntiEntropyDeps) {
    deps.metrics.set("dist.auto_sync.backoff_factor", 1);
  }

  get backoffFactor(): number {
    return this.factor;
  }

  start(): void {
    if (this.deps.intervalMs > 0 && !this.timer) this.schedule();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.catchUpTimer?.cancel();
    this.catchUpTimer = undefined;
  }

  /**
   * True once this node has completed a sync with every alive peer since it started or since the
   * ring last changed: until then its copy of the data may be incomplete (a restarted node comes
   * back empty; a new owner may not have every copy yet).
   */
  get caughtUp(): boolean {
    return this.caughtUpFlag;
  }

  /**
   * Starts (or restarts) catch-up: passes of syncs with every alive peer, `retryMs` apart, until
   * one pass reaches every peer. Called at start-up and after every ring change.
   */
  requestCatchUp(retryMs: number): void {
    this.caughtUpFlag = false;
    if (this.catchUpRunning) {
      this.catchUpRequested = true;
      return;
    }
    this.catchUpTimer?.cancel();
    this.catchUpTimer = this.deps.timers.after(0, () => void this.runCatchUpPass(retryMs));
  }

  /** One catch-up pass; schedules the next one unless every alive peer was synced. */
  async runCatchUpPass(retryMs: number): Promise<boolean> {
    if (this.catchUpRunning) return false;
    this.catchUpRunning = true;
    this.catchUpRequested = false;
    let complete = true;
    try {
      // Suspect peers keep their ring positions, so they are co-owners to catch up from too: a
      // pass is complete only once every alive or suspect peer was synced (pruned ones drop out).
      for (const peer of this.deps.view.ringPeers()) {
        const r = await this.syncWith(peer);
        if (r.failed) complete = false;
      }
    } finally {
      this.catchUpRunning = false;
    }
    if (complete && !this.catchUpRequested) {
      if (!this.caughtUpFlag) this.deps.logger.info(LOG.caughtUp, { peers: this.deps.view.ringPeers().length });
      this.caughtUpFlag = true;
    } else {
      this.catchUpTimer = this.deps.timers.after(this.catchUpRequested ? 0 : retryMs, () => void this.runCatchUpPass(retryMs));
    }
    return complete;
  }

  private schedule(): void {
    this.timer = this.deps.timers.after(this.deps.intervalMs * this.factor, () => {
      void this.runSyncTick().finally(() => {
        if (this.timer) this.schedule();
      });
    });
  }

  /** One auto-sync tick: syncs with every alive peer and adapts the backoff. */
  async runSyncTick(): Promise<{ pulled: number; clean: boolean }> {
    if (this.running) return { pulled: 0, clean: true };
    this.running = true;
    const started = this.deps.clock.monotonicMs();
    let pulled = 0;
    let clean = true;
    try {
      for (const peer of this.deps.view.alivePeers()) {
        const r = await this.syncWith(peer);
        if (!r.clean) clean = false;
        pulled += r.pulled;
      }
    } finally {
      this.running = false;
    }
    const m = this.deps.metrics;
    m.set("dist.auto_sync.last_ns", Math.round((this.deps.clock.monotonicMs() - started) * 1e6));
    if (clean) m.inc("dist.auto_sync.clean_ticks");
    const next = nextBackoffFactor(this.factor, clean, this.deps.maxFactor);
    if (next !== this.factor) {
      // Backing off is what an idle cluster does (debug); a reset means divergence (info).
      const log = next < this.factor ? this.deps.logger.info : this.deps.logger.debug;
      log(LOG.backoffFactorChanged, { from: this.factor, to: next });
      this.factor = next;
      m.set("dist.auto_sync.backoff_factor", next);
    }
    return { pulled, clean };
  }

  /**
   * Compares with one peer and pulls what differs. `clean` is false on divergence or failure;
   * `failed` tells a failure (the peer could not be compared) apart.
   */
  async syncWith(peer: PeerRef): Promise<{ pulled: number; clean: boolean; failed: boolean }> {
    const { transport, selfId, metrics, clock } = this.deps;
    const started = clock.monotonicMs();
    try {
      const local = await this.build(peer.id, undefined);
      const leafCount = local.leafCount;
      const remoteRoot = await transport.merkleRoot(peer, selfId, leafCount);
      if (remoteRoot.root === local.root()) {
        metrics.set("dist.merkle.last_diff_ns", Math.round((clock.monotonicMs() - started) * 1e6));
        metrics.inc("dist.merkle.syncs");
        return { pulled: 0, clean: true, failed: false };
      }
      const diff = differingLeaves(local.leaves(), await transport.merkleLeaves(peer, selfId, leafCount));
      metrics.set("dist.merkle.last_diff_ns", Math.round((clock.monotonicMs() - started) * 1e6));
      let pulled = 0;
      let cursor = "";
      do {
        const page = await transport.merkleRange(peer, selfId, leafCount, diff, cursor);
        pulled += this.applyPulled(page.records);
        cursor = page.nextCursor;
      } while (cursor !== "");
      metrics.inc("dist.merkle.syncs");
      metrics.inc("dist.merkle.keys_pulled", pulled);
      return { pulled, clean: false, failed: false };
    } catch (err) {
      this.deps.logger.warn(LOG.merkleFetchFailed, { peer: peer.id, error: err instanceof Error ? err.message : String(err) });
      return { pulled: 0, clean: false, failed: true };
    }
  }

  // ---- the answering side -------------------------------------------------------------------

  /** Root over the keys this node and `requester` both own. */
  async root(requester: string, leafCount: number): Promise<MerkleRoot> {
    const b = await this.build(requester, checkLeafCount(leafCount));
    return { root: b.root(), leafCount: b.leafCount, recordCount: b.records };
  }

  async leaves(requester: string, leafCount: number): Promise<string[]> {
    return (await this.build(requester, checkLeafCount(leafCount))).leaves();
  }

  /**
   * Records of the requested leaves, a page at a time (cursor: shard and slot to resume at). The
   * scan yields to the event loop every SCAN_SLICE_RECORDS records.
   */
  async range(requester: string, leafCount: number, leaves: readonly number[], cursor: string): Promise<MerkleRangePage> {
    checkLeafCount(leafCount);
    const wanted = new Set(leaves);
    const { store } = this.deps;
    let shard = 0;
    let slot = 0;
    if (cursor !== "") {
      const f = decodeCursor(cursor);
      const s = f && cursorInt(f, "s");
      const i = f && cursorInt(f, "i");
      if (s === undefined || i === undefined) throw badRequest("invalid cursor");
      shard = s;
      slot = i;
    }
    const records: VersionedRecord[] = [];
    let bytes = 0;
    let full = false;
    const now = this.deps.clock.nowMs();
    const ring = this.deps.view.ring();
    const slicer = new WorkSlicer(this.deps.yieldToLoop, SCAN_SLICE_RECORDS);
    while (shard < store.shardCount) {
      const resume = store.scanRecords(shard, slot, (rec, hash) => {
        if (slicer.spend()) return false;
        if (!wanted.has(leafOf(hash, leafCount)) || !this.shared(ring, rec, requester, now)) return true;
        // Checked before the record joins the page: a page passes PEER_BATCH_BYTES only as one
        // record alone; a declined record opens the next page.
        const size = byteSize(rec);
        if (records.length >= RANGE_PAGE || (records.length > 0 && bytes + size > PEER_BATCH_BYTES)) {
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

  /**
   * Summarizes the records this node and `peerId` both own. The scan yields to the event loop every
   * SCAN_SLICE_RECORDS records; writes landing meanwhile may or may not be counted, which the
   * next sync settles.
   */
  private async build(peerId: string, leafCount: number | undefined): Promise<MerkleBuilder> {
    const { store } = this.deps;
    const now = this.deps.clock.nowMs();
    const ring = this.deps.view.ring();
    const slicer = new WorkSlicer(this.deps.yieldToLoop, SCAN_SLICE_RECORDS);
    // Digests, not records, are kept until the leaf count is known: 24 bytes per record, and
    // values overwritten meanwhile are not held on to.
    const hashes: number[] = [];
    const his: number[] = [];
    const los: number[] = [];
    for (let s = 0; s < store.shardCount; s++) {
      let slot = 0;
      for (;;) {
        slot = store.scanRecords(s, slot, (rec, hash) => {
          if (slicer.spend()) return false;
          if (this.shared(ring, rec, peerId, now)) {
            const [hi, lo] = recordDigest(rec);
            hashes.push(hash);
            his.push(hi);
            los.push(lo);
          }
          return true;
        });
        if (slot < 0) break;
        await slicer.pause();
      }
    }
    const b = new MerkleBuilder(leafCount ?? leafCountFor(hashes.length, this.deps.chunkSize));
    for (let i = 0; i < hashes.length; i++) b.addDigest(hashes[i] as number, his[i] as number, los[i] as number);
    return b;
  }

  /** In the compared set: owned by both nodes (in `ring`), and a tombstone or an unexpired value. */
  private shared(ring: HashRing, rec: VersionedRecord, peerId: string, nowMs: number): boolean {
    if (!rec.tombstone && rec.expiresAtMs !== 0 && rec.expiresAtMs <= nowMs) return false;
    const owners = ring.ownersOf(rec.key).ids;
    return owners.includes(this.deps.selfId) && owners.includes(peerId);
  }

  private applyPulled(records: readonly VersionedRecord[]): number {
    let applied = 0;
    const { store } = this.deps;
    const now = this.deps.clock.nowMs();
    for (const rec of records) {
      if (!this.deps.view.ring().isOwner(rec.key, this.deps.selfId)) continue;
      // The checks pushed records get: a version from far in the future (a peer's clock days
      // ahead) would win every later write of the key here and spread from here.
      const problem = peerRecordProblem(rec, now);
      if (problem !== undefined) {
        this.deps.logger.warn(LOG.peerRecordSkipped, { key: rec.key.slice(0, 256), origin: rec.origin, error: problem.message });
        continue;
      }
      // A node at capacity does not pull back keys it does not hold: it may have evicted them,
      // and eviction is local. Newer versions of keys it holds, and tombstones, still come in.
      if (!rec.tombstone && store.items >= store.capacity && store.peek(rec.key) === undefined) continue;
      this.deps.versions.observe(rec.version);
      const r = this.deps.store.apply(rec);
      if (r.applied === Applied.Stored) applied++;
      else if (r.applied === Applied.Older) this.deps.metrics.inc("dist.version.conflicts");
    }
    return applied;
  }
}

function checkLeafCount(n: number): number {
  if (!validLeafCount(n)) throw badRequest(`leaf_count must be a power of two between 1 and 65536; got ${n}`);
  return n;
}
