// Pushes versioned records to other owners through per-peer batchers (values in Set calls,
// tombstones in Remove calls). A push that fails is queued as a hint for replay.
import type { Timers } from "../../core/clock.js";
import { PEER_BATCHING } from "../../core/limits.js";
import { byteSize } from "../record-size.js";
import { batchOptions, PeerBatcher } from "./batcher.js";
import type { HintQueue } from "../hints/hint-queue.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import type { VersionedRecord } from "../../store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport } from "../../transport/index.js";

export class ReplicaPusher {
  private readonly sets: PeerBatcher<VersionedRecord, ApplyOutcome>;
  private readonly removes: PeerBatcher<VersionedRecord, ApplyOutcome>;

  constructor(private readonly deps: { transport: PeerTransport; selfId: string; hints: HintQueue; timers: Timers; metrics: Metrics }) {
    const opts = batchOptions(PEER_BATCHING.push, byteSize, deps.timers, () => deps.metrics.inc("dist.peer.queue_overflow"));
    // The lane of a conditional write's push is the primary's owner list (node ids hold no
    // comma); plain pushes travel in the "" lane, without the check.
    const owners = (lane: string) => (lane === "" ? undefined : lane.split(","));
    this.sets = new PeerBatcher((peer, recs, lane) => deps.transport.set(peer, deps.selfId, recs, owners(lane)), opts);
    this.removes = new PeerBatcher((peer, recs, lane) => deps.transport.remove(peer, deps.selfId, recs, owners(lane)), opts);
  }

  /** Peer calls made so far. */
  get calls(): number {
    return this.sets.calls + this.removes.calls;
  }

  /**
   * Sends `record` to `peer` and resolves with the receiver's outcome, or undefined when the call
   * failed. A failed or refused record is queued as a hint (a receiver that does not own the key
   * yet may own it once its view catches up); a stale one is not (the receiver holds newer).
   * `expectedOwners` (conditional writes): the receiver refuses the record unless its owner list
   * of the key is this one.
   */
  async push(peer: PeerRef, record: VersionedRecord, expectedOwners?: Owners): Promise<ApplyOutcome | undefined> {
    let outcome: ApplyOutcome | undefined;
    try {
      outcome = await (record.tombstone ? this.removes : this.sets).enqueue(peer, record, expectedOwners?.header ?? "");
    } catch {
      outcome = undefined;
    }
    if (outcome === undefined || outcome.kind === "refused") this.deps.hints.add(peer, record);
    return outcome;
  }
}
