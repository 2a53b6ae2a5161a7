// Pushes versioned records to other owners through per-peer batchers (values in Set calls,
// tombstones in Remove calls). A push that fails is queued as a hint for replay.
import { PEER_BATCH_BYTES } from "../../core/limits.js";
import { byteSize } from "../record-size.js";
import { PeerBatcher } from "./batcher.js";
import type { HintQueue } from "../hints/hint-queue.js";
import type { VersionedRecord } from "../../store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport } from "../../transport/index.js";

/** Records per peer call and bytes per call (well under the 16 MiB peer body cap). */
export const PUSH_BATCH_ITEMS = 512;
export const PUSH_BATCH_BYTES = PEER_BATCH_BYTES;
const PUSH_IN_FLIGHT = 1;

export class ReplicaPusher {
  private readonly sets: PeerBatcher<VersionedRecord, ApplyOutcome>;
  private readonly removes: PeerBatcher<VersionedRecord, ApplyOutcome>;

  constructor(private readonly deps: { transport: PeerTransport; selfId: string; hints: HintQueue }) {
    const opts = { maxItems: PUSH_BATCH_ITEMS, maxBytes: PUSH_BATCH_BYTES, sizeOf: byteSize, maxInFlight: PUSH_IN_FLIGHT };
    this.sets = new PeerBatcher((peer, recs) => deps.transport.set(peer, deps.selfId, recs), opts);
    this.removes = new PeerBatcher((peer, recs) => deps.transport.remove(peer, deps.selfId, recs), opts);
  }

  /** Peer calls made so far. */
  get calls(): number {
    return this.sets.calls + this.removes.calls;
  }

  /**
   * Sends `record` to `peer`. Resolves true on acknowledgement ("refused" by the ownership guard
   * counts as acknowledged), false after a failure, which queues a hint.
   */
  async push(peer: PeerRef, record: VersionedRecord): Promise<boolean> {
    try {
      await (record.tombstone ? this.removes : this.sets).enqueue(peer, record);
      return true;
    } catch {
      this.deps.hints.add(peer, record);
      return false;
    }
  }
}
