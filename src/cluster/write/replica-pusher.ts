// Pushes versioned records to other owners through per-peer batchers (values in Set calls,
// tombstones in Remove calls). A push that fails is queued as a hint for replay. A conditional
// write's record carries the primary's owner list, which the receiver checks record by record,
// so conditional and plain pushes to a peer share its batches (one lane per owner list sent
// conditional pushes in more, smaller calls).
import type { Timers } from "../../core/clock.js";
import { PEER_BATCHING } from "../../core/limits.js";
import { byteSize } from "../record-size.js";
import { batchOptions, PeerBatcher } from "./batcher.js";
import type { HintQueue } from "../hints/hint-queue.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import type { VersionedRecord } from "../../store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport } from "../../transport/index.js";

/** One record to push, and the owner list the receiver checks it against (conditional writes). */
interface Push {
  readonly record: VersionedRecord;
  readonly owners: readonly string[] | undefined;
}

/** The records of a batch, and their owner checks (none when no record has one). */
function split(items: readonly Push[]): [VersionedRecord[], Array<readonly string[] | undefined> | undefined] {
  const records = items.map((p) => p.record);
  return [records, items.some((p) => p.owners !== undefined) ? items.map((p) => p.owners) : undefined];
}

export class ReplicaPusher {
  private readonly sets: PeerBatcher<Push, ApplyOutcome>;
  private readonly removes: PeerBatcher<Push, ApplyOutcome>;

  constructor(private readonly deps: { transport: PeerTransport; selfId: string; hints: HintQueue; timers: Timers; metrics: Metrics }) {
    const opts = batchOptions<Push>(PEER_BATCHING.push, (p) => byteSize(p.record), deps.timers, () => deps.metrics.inc("dist.peer.queue_overflow"));
    this.sets = new PeerBatcher((peer, items) => deps.transport.set(peer, deps.selfId, ...split(items)), opts);
    this.removes = new PeerBatcher((peer, items) => deps.transport.remove(peer, deps.selfId, ...split(items)), opts);
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
      outcome = await (record.tombstone ? this.removes : this.sets).enqueue(peer, { record, owners: expectedOwners?.ids });
    } catch {
      outcome = undefined;
    }
    if (outcome === undefined || outcome.kind === "refused") this.deps.hints.add(peer, record);
    return outcome;
  }
}
