// The node's data path as the client API sees it. Writes go to the key's primary: this node
// coordinates them when it is the primary, and otherwise forwards them and returns the
// primary's real outcome. When the forward fails and this node is a replica owner it promotes
// itself: it coordinates the write, and the old primary gets its copy as a hint.
import type { ByteString } from "../core/byte-string.js";
import { WorkSlicer, type Clock, type YieldToLoop } from "../core/clock.js";
import { CacheError, isErrorCode, toCacheError } from "../core/errors.js";
import { compileKeyFilter, type KeyFilter } from "../core/key-filter.js";
import { PEER_BATCH_BYTES, SCAN_SLICE_RECORDS } from "../core/limits.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import type { Owners } from "../ring/index.js";
import type { ShardedStore, VersionedRecord } from "../store/index.js";
import type { ClientWrite, ForwardRequest, PeerRef, PeerTransport, WriteOutcome } from "../transport/index.js";
import { PeerBatcher } from "./write/batcher.js";
import type { CacheService, KeyListing, ReadResult, SetItem, WriteResult } from "./cache-service.js";
import type { ClusterView } from "./cluster-view.js";
import type { Lifecycle } from "./lifecycle.js";
import type { Reader } from "./read/reader.js";
import { TopKeys } from "./top-keys.js";
import type { WriteCoordinator } from "./write/write-coordinator.js";
import { checkForwardedWrite, versionTooFarAhead } from "./peer-input.js";

/** Forwarded writes per call, and calls under way per primary and consistency level. */
const FORWARD_BATCH_ITEMS = 512;
const FORWARD_BATCH_BYTES = PEER_BATCH_BYTES;
const FORWARD_IN_FLIGHT = 1;
/** Keys per page when listing a peer's keys for the key browser. */
const LISTING_PAGE = 5000;

export interface DistCacheDeps {
  readonly nodeId: string;
  readonly store: ShardedStore;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly lifecycle: Lifecycle;
  readonly view: ClusterView;
  readonly transport: PeerTransport;
  readonly coordinator: WriteCoordinator;
  readonly reader: Reader;
  /** How the local key listing pauses between slices of SCAN_SLICE_RECORDS keys. */
  readonly yieldToLoop: YieldToLoop;
  readonly writeConsistency: ConsistencyLevel;
  readonly readConsistency: ConsistencyLevel;
}

/**
 * Errors of a forward after which a replica owner takes the write over: any failure of the
 * forward or of the primary (unreachable, draining, quorum not reached there, internal). A client
 * error (4xx: a bad key or value) is returned as it is, since every owner would refuse it.
 */
function promotable(err: CacheError): boolean {
  return err.status >= 500;
}

export class DistCache implements CacheService {
  readonly nodeId: string;
  private readonly forwards: PeerBatcher<ClientWrite, WriteOutcome>;

  constructor(private readonly deps: DistCacheDeps) {
    this.nodeId = deps.nodeId;
    this.forwards = new PeerBatcher(
      (peer, writes, lane) => {
        const [level, applies] = lane.split("|");
        return deps.transport.forward(peer, { from: deps.nodeId, consistency: level as ConsistencyLevel, writes, senderApplies: applies === "1" });
      },
      { maxItems: FORWARD_BATCH_ITEMS, maxBytes: FORWARD_BATCH_BYTES, sizeOf: (w) => w.key.length * 3 + w.value.length + 32, maxInFlight: FORWARD_IN_FLIGHT },
    );
  }

  /** Peer calls this node's data path has made (forwards, pushes, reads). */
  get forwardCalls(): number {
    return this.forwards.calls;
  }

  get draining(): boolean {
    return this.deps.lifecycle.draining;
  }

  owners(key: string): Owners {
    return this.deps.view.ring().ownersOf(key);
  }

  get(key: string, consistency?: ConsistencyLevel): Promise<ReadResult> {
    return this.deps.reader.read(key, consistency ?? this.deps.readConsistency);
  }

  set(key: string, value: ByteString, ttlMs: number, consistency?: ConsistencyLevel, admitted = false): Promise<WriteResult> {
    return this.write({ kind: "set", key, value, ttlMs }, consistency ?? this.deps.writeConsistency, admitted);
  }

  remove(key: string, consistency?: ConsistencyLevel, admitted = false): Promise<WriteResult> {
    return this.write({ kind: "remove", key, value: "", ttlMs: 0 }, consistency ?? this.deps.writeConsistency, admitted);
  }

  setMany(items: readonly SetItem[], consistency?: ConsistencyLevel, admitted = false): Promise<Array<WriteResult | CacheError>> {
    return Promise.all(items.map((it) => this.set(it.key, it.value, it.ttlMs, consistency, admitted).catch(toCacheError)));
  }

  getMany(keys: readonly string[], consistency?: ConsistencyLevel): Promise<Array<ReadResult | CacheError>> {
    return Promise.all(keys.map((k) => this.get(k, consistency).catch(toCacheError)));
  }

  removeMany(keys: readonly string[], consistency?: ConsistencyLevel, admitted = false): Promise<Array<WriteResult | CacheError>> {
    return Promise.all(keys.map((k) => this.remove(k, consistency, admitted).catch(toCacheError)));
  }

  /**
   * Collects the matching live keys of this node and every alive peer, deduplicated, sorted, the
   * first `max` kept. A peer whose listing fails is reported in partialNodes.
   */
  async listKeys(q: string, max: number): Promise<KeyListing> {
    const filter = compileKeyFilter(q);
    const top = new TopKeys(max);
    const partialNodes: string[] = [];
    // The local scan (sliced) and the peers' pages fill `top` side by side.
    await Promise.all([
      this.collectLocalKeys(filter, top),
      ...this.deps.view.alivePeers().map(async (peer) => {
        try {
          let cursor = "";
          do {
            const page = await this.deps.transport.keys(peer, cursor, LISTING_PAGE, q);
            top.addAll(page.keys);
            cursor = page.nextCursor;
          } while (cursor !== "");
        } catch {
          partialNodes.push(peer.id);
        }
      }),
    ]);
    const { keys, truncated } = top.result();
    return { keys, truncated, partialNodes: partialNodes.sort() };
  }

  /** Adds this node's matching keys to `top`, yielding to the event loop between slices. */
  private async collectLocalKeys(filter: KeyFilter, top: TopKeys): Promise<void> {
    const { store } = this.deps;
    const slicer = new WorkSlicer(this.deps.yieldToLoop, SCAN_SLICE_RECORDS);
    for (let shard = 0; shard < store.shardCount; shard++) {
      for (let slot = 0; slot >= 0; ) {
        slot = store.scanLiveKeys(shard, slot, (key) => {
          if (filter.matches(key)) top.add(key);
          return !slicer.spend(filter.cost(key));
        });
        await slicer.pause();
      }
    }
  }

  /**
   * The receiving side of Forward: coordinates each write whose key this node owns. Writes are
   * started in request order, so later writes of the same key get later versions.
   */
  handleForward(req: ForwardRequest): Promise<WriteOutcome[]> {
    const level = req.consistency ?? this.deps.writeConsistency;
    return Promise.all(
      req.writes.map(async (w): Promise<WriteOutcome> => {
        const owners = this.owners(w.key);
        try {
          this.assertWritable();
          checkForwardedWrite(w);
          if (!owners.ids.includes(this.nodeId)) {
            throw new CacheError("UNAVAILABLE", `node ${this.nodeId} does not own key ${JSON.stringify(w.key)} in its ring view`);
          }
          const r = await this.deps.coordinator.coordinate(w, owners, level, req.senderApplies ? req.from : undefined);
          return {
            key: w.key,
            applied: r.applied,
            bytes: r.bytes,
            owners: r.owners.ids,
            version: r.version,
            origin: r.origin,
            errorCode: "",
            errorMessage: "",
            expiresAtMs: r.expiresAtMs,
          };
        } catch (err) {
          const e = toCacheError(err);
          return { key: w.key, applied: false, bytes: 0, owners: owners.ids, version: 0, origin: "", errorCode: e.code, errorMessage: e.message, expiresAtMs: 0 };
        }
      }),
    );
  }

  private async write(write: ClientWrite, level: ConsistencyLevel, admitted: boolean): Promise<WriteResult> {
    if (!admitted) this.assertWritable();
    this.deps.metrics.inc("dist.write.attempts");
    const owners = this.owners(write.key);
    if (owners.primary === this.nodeId) return this.deps.coordinator.coordinate(write, owners, level);
    const primary = this.deps.view.peer(owners.primary);
    let failure: CacheError;
    /** True when the primary answered (its error is its real outcome, not a transport failure). */
    let reached = false;
    if (primary) {
      // An owner applies the primary's result itself instead of having it pushed back.
      const applies = owners.ids.includes(this.nodeId);
      try {
        const outcome = await this.forwards.enqueue(primary, write, `${level}|${applies ? 1 : 0}`);
        if (outcome.errorCode === "") {
          if (applies) this.applyForwarded(write, outcome);
          return { key: write.key, applied: outcome.applied, bytes: outcome.bytes, owners, version: outcome.version, origin: outcome.origin, expiresAtMs: outcome.expiresAtMs };
        }
        reached = true;
        failure = new CacheError(isErrorCode(outcome.errorCode) ? outcome.errorCode : "INTERNAL", outcome.errorMessage);
      } catch (err) {
        failure = toCacheError(err);
      }
    } else {
      failure = new CacheError("UNAVAILABLE", `primary ${owners.primary} is not a member`);
    }
    if (!promotable(failure) || !owners.ids.includes(this.nodeId)) {
      // Not an owner (or a client error): the primary's real outcome goes back as it is;
      // a transport failure says which primary could not be reached.
      if (failure.code !== "UNAVAILABLE" || reached) throw failure;
      throw new CacheError("UNAVAILABLE", `primary ${owners.primary} of key ${JSON.stringify(write.key)} is unreachable: ${failure.message}`, { owners: [...owners.ids] }, { cause: failure });
    }
    this.deps.metrics.inc("dist.write.forward_promotion");
    this.deps.logger.debug("write promoted: primary unreachable", { key: write.key, primary: owners.primary, error: failure.message });
    return this.deps.coordinator.coordinate(write, owners, level);
  }

  /** Stores the record the primary stamped for a write this node forwarded and owns. */
  private applyForwarded(write: ClientWrite, outcome: WriteOutcome): void {
    const tombstone = write.kind === "remove";
    const rec: VersionedRecord = {
      key: write.key,
      value: tombstone ? "" : write.value,
      version: outcome.version,
      origin: outcome.origin,
      lastUpdatedMs: Math.floor(outcome.version / 1000),
      expiresAtMs: tombstone ? 0 : outcome.expiresAtMs,
      tombstone,
    };
    // The key was checked on arrival and the origin is the primary; a version this node would
    // refuse in a push (the primary's clock far ahead) is left to the primary and the others.
    if (!versionTooFarAhead(rec.version, this.deps.clock.nowMs())) this.deps.store.apply(rec);
  }

  private assertWritable(): void {
    if (this.deps.lifecycle.draining) throw new CacheError("DRAINING", "node is draining: writes go to another node");
  }
}

export type { PeerRef };
