// Pushes versioned records to other owners through per-peer batchers (values in Set calls,
// tombstones in Remove calls). A push that fails is queued as a hint for replay. A conditional
// write's record carries the primary's owner list, which the receiver checks record by record,
// so conditional and plain pushes to a peer share its batches (one lane per owner list sent
// conditional pushes in more, smaller calls).
//
// A touch is pushed to every other owner without its value first (SetRequest.touches, a lane of
// its own): an owner that holds the item touched applies the new version and expiry on top of
// it. One that does not ("base-missing", also every older node) gets the full item in a second
// push. A touch can overtake the Set that created its base (separate lanes); that owner then
// answers base-missing and gets the full item, so the order costs a push, never correctness.
import type { Timers } from "../../core/clock.js";
import { PEER_BATCHING } from "../../core/limits.js";
import { byteSize } from "../record-size.js";
import { batchOptions, PeerBatcher } from "./batcher.js";
import type { HintQueue } from "../hints/hint-queue.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import type { VersionedRecord } from "../../store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport, TouchOutcome, TouchPush } from "../../transport/index.js";

/** One record to push, and the owner list the receiver checks it against (conditional writes). */
interface Push {
  readonly record: VersionedRecord;
  readonly owners: readonly string[] | undefined;
}

/** The item a touch was applied on, by version and origin: what the receiver must hold. */
export interface TouchBase {
  readonly version: number;
  readonly origin: string;
}

/** The records of a batch, and their owner checks (none when no record has one). */
function split(items: readonly Push[]): [VersionedRecord[], Array<readonly string[] | undefined> | undefined] {
  const records = items.map((p) => p.record);
  return [records, items.some((p) => p.owners !== undefined) ? items.map((p) => p.owners) : undefined];
}

/**
 * A touch and what it weighs against a call's byte cap: the full record's size, value included.
 * It is small on the wire, but its receiver copies the value it holds, and a call's work stays
 * within the cap as a Set call's does (the receiver bounds it too: ReplicaApplier.applyTouches).
 */
interface TouchItem {
  readonly touch: TouchPush;
  readonly bytes: number;
}

export class ReplicaPusher {
  private readonly sets: PeerBatcher<Push, ApplyOutcome>;
  private readonly removes: PeerBatcher<Push, ApplyOutcome>;
  private readonly touches: PeerBatcher<TouchItem, TouchOutcome>;

  constructor(private readonly deps: { transport: PeerTransport; selfId: string; hints: HintQueue; timers: Timers; metrics: Metrics }) {
    const overflow = () => deps.metrics.inc("dist.peer.queue_overflow");
    const opts = batchOptions<Push>(PEER_BATCHING.push, (p) => byteSize(p.record), deps.timers, overflow);
    this.sets = new PeerBatcher((peer, items) => deps.transport.set(peer, deps.selfId, ...split(items)), opts);
    this.removes = new PeerBatcher((peer, items) => deps.transport.remove(peer, deps.selfId, ...split(items)), opts);
    this.touches = new PeerBatcher(
      (peer, items) => deps.transport.touch(peer, deps.selfId, items.map((i) => i.touch)),
      batchOptions<TouchItem>(PEER_BATCHING.push, (i) => i.bytes, deps.timers, overflow),
    );
  }

  /** Peer calls made so far. */
  get calls(): number {
    return this.sets.calls + this.removes.calls + this.touches.calls;
  }

  /**
   * Sends `record` to `peer` and resolves with the receiver's outcome, or undefined when the call
   * failed. A failed or refused record is queued as a hint (a receiver that does not own the key
   * yet may own it once its view catches up); a stale one is not (the receiver holds newer).
   * `expectedOwners` (conditional writes): the receiver refuses the record unless its owner list
   * of the key is this one. `touchBase` (a touch's record, with `expectedOwners`): the item the
   * touch was applied on; the value is sent only to a receiver that does not hold that item.
   */
  async push(peer: PeerRef, record: VersionedRecord, expectedOwners?: Owners, touchBase?: TouchBase): Promise<ApplyOutcome | undefined> {
    if (touchBase !== undefined && expectedOwners !== undefined && !record.tombstone) {
      const touched = await this.pushTouch(peer, record, expectedOwners, touchBase);
      if (touched !== "base-missing") return touched;
      this.deps.metrics.inc("dist.write.touch_full_pushes");
    }
    // Awaited here rather than through answerOf: every replica push takes this path, and a helper
    // would add an async frame (a promise) to each.
    let outcome: ApplyOutcome | undefined;
    try {
      outcome = await (record.tombstone ? this.removes : this.sets).enqueue(peer, { record, owners: expectedOwners?.ids });
    } catch {
      outcome = undefined;
    }
    if (outcome === undefined || outcome.kind === "refused") this.deps.hints.add(peer, record);
    return outcome;
  }

  /** A touch without its value: the receiver's outcome, "base-missing", or undefined (failed, hinted in full). */
  private async pushTouch(peer: PeerRef, record: VersionedRecord, owners: Owners, base: TouchBase): Promise<ApplyOutcome | undefined | "base-missing"> {
    this.deps.metrics.inc("dist.write.touch_pushes");
    const touch: TouchPush = {
      key: record.key,
      baseVersion: base.version,
      baseOrigin: base.origin,
      version: record.version,
      origin: record.origin,
      expiresAtMs: record.expiresAtMs,
      lastUpdatedMs: record.lastUpdatedMs,
      owners: owners.ids,
    };
    let outcome: TouchOutcome | undefined;
    try {
      outcome = await this.touches.enqueue(peer, { touch, bytes: byteSize(record) });
    } catch {
      outcome = undefined;
    }
    if (outcome?.kind === "base-missing") return "base-missing";
    if (outcome === undefined || outcome.kind === "refused") this.deps.hints.add(peer, record);
    return outcome;
  }
}
