// Coordinates a client write on an owner of the key (its primary, or a replica that promoted
// itself): stamps the version, applies locally through the version gate, fans out to the other
// owners in parallel and answers once the write consistency has its acknowledgements.
import { CacheError } from "../../core/errors.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import { Applied, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { ClientWrite } from "../../transport/index.js";
import type { WriteResult } from "../cache-service.js";
import type { ClusterView } from "../cluster-view.js";
import { hasMajority, replicaCount, requiredAcks, waitForQuorum } from "./quorum.js";
import type { ReplicaPusher } from "./replica-pusher.js";
import type { VersionClock } from "./version-clock.js";

export interface CoordinatorDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly versions: VersionClock;
  readonly metrics: Metrics;
  readonly view: ClusterView;
  readonly pusher: ReplicaPusher;
  readonly replication: number;
}

export class WriteCoordinator {
  constructor(private readonly deps: CoordinatorDeps) {}

  /**
   * Coordinates `write` whose owners are `owners` (this node among them). `senderApplies` names
   * a forwarding owner that applies the result itself: it is not pushed to and counts as one
   * acknowledgement (it answers its client only after applying).
   */
  async coordinate(write: ClientWrite, owners: Owners, level: ConsistencyLevel, senderApplies?: string): Promise<WriteResult> {
    const { view, metrics, store, selfId } = this.deps;
    const known = view.knownCount();
    const need = requiredAcks(level, replicaCount(this.deps.replication, known));
    if (level !== "one") {
      const notDead = view.notDeadCount();
      if (!hasMajority(notDead, known)) {
        metrics.inc("dist.write.quorum_failures");
        throw new CacheError("QUORUM_FAILED", `write needs ${level} but this node sees only ${notDead} of ${known} known nodes: it is on the minority side`, {
          consistency: level,
          visible_nodes: notDead,
          known_nodes: known,
        });
      }
    }
    const rec = this.stamp(write);
    const applied = store.apply(rec);
    const result: WriteResult = {
      key: write.key,
      // A stamped version is above the key's, so the store always takes it; the check keeps the
      // answer true to the store if that ever changes.
      applied: applied.applied === Applied.Stored && (rec.tombstone ? applied.previousLive : true),
      bytes: rec.tombstone ? applied.previousBytes : rec.value.length,
      owners,
      version: rec.version,
      origin: rec.origin,
      expiresAtMs: rec.expiresAtMs,
    };
    const sender = senderApplies !== undefined && senderApplies !== selfId && owners.ids.includes(senderApplies) ? senderApplies : undefined;
    const others = owners.ids.filter((id) => id !== selfId && id !== sender);
    const inHand = sender === undefined ? [true] : [true, true];
    const wait = await waitForQuorum(
      others.map((id) => this.pushTo(id, rec)),
      need,
      inHand,
      (ok) => ok,
    );
    if (wait.reached) return result;
    const acks = wait.answers.filter((ok) => ok).length;
    metrics.inc("dist.write.quorum_failures");
    throw new CacheError("QUORUM_FAILED", `write reached ${acks} of the ${need} owners its ${level} consistency needs; it may be applied where it reached`, {
      consistency: level,
      acknowledged: acks,
      required: need,
    });
  }

  private pushTo(id: string, rec: VersionedRecord): Promise<boolean> {
    const peer = this.deps.view.peer(id);
    return peer ? this.deps.pusher.push(peer, rec) : Promise.resolve(false);
  }

  /** The versioned record of a client write. */
  private stamp(write: ClientWrite): VersionedRecord {
    const version = this.deps.versions.next(this.deps.store.versionOf(write.key));
    const tombstone = write.kind === "remove";
    // The write's time is its version's time (the hybrid clock runs a little ahead of the wall
    // clock after a burst of writes): last_updated shows it and the TTL counts from it, so
    // expires_at - last_updated is exactly the TTL asked for.
    const writtenAtMs = Math.floor(version / 1000);
    return {
      key: write.key,
      value: tombstone ? "" : write.value,
      version,
      origin: this.deps.selfId,
      lastUpdatedMs: writtenAtMs,
      expiresAtMs: !tombstone && write.ttlMs > 0 ? writtenAtMs + write.ttlMs : 0,
      tombstone,
    };
  }
}
