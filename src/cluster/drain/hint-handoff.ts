// Hints a draining node cannot deliver, handed to a node that stays. For every target of the
// replica hint queue and of the migration queue that is unreachable (not an alive member, itself
// draining, or its last replay failed), the queued records go to a live owner of each key (the
// first alive owner in the ring other than the target; any alive peer when no owner is), with
// the HandOffHints call: the receiver queues them for the target as its own hints and replays
// them when the target is back. Accepted records leave this node's queue (counted in
// dist.hinted.handed_off and dist.migration.handed_off); records nobody could take stay.
import { PEER_BATCH_BYTES } from "../../core/limits.js";
import type { VersionedRecord } from "../../store/index.js";
import type { PeerRef, PeerTransport } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { HintQueue } from "../hints/hint-queue.js";

/** Records per hand-off call. */
export const HINT_HANDOFF_LIMITS = Object.freeze({ items: 512, bytes: PEER_BATCH_BYTES });

export interface HintHandoffDeps {
  readonly selfId: string;
  readonly view: Pick<ClusterView, "ring" | "alivePeers">;
  readonly transport: PeerTransport;
  /** The replica hint queue and the migration queue. */
  readonly queues: readonly HintQueue[];
  /** True when member `id` is alive and not draining (a target worth replaying to). */
  readonly reachable: (id: string) => boolean;
  /** Reports a failed hand-off call (it is retried on the next tick). */
  readonly onError: (receiver: string, target: string, err: unknown) => void;
}

export class HintHandoff {
  private sending = 0;
  private ownerless = 0;

  constructor(private readonly deps: HintHandoffDeps) {}

  /** Hand-off calls under way. */
  get callsInFlight(): number {
    return this.sending;
  }

  /** Hints the last pass found no live node to hand to. */
  get noLiveOwner(): number {
    return this.ownerless;
  }

  /** True when the hints queued for `target` cannot be replayed from here. */
  unreachable(queue: HintQueue, target: string): boolean {
    return !this.deps.reachable(target) || queue.replayFailed(target);
  }

  /** One pass: hands one batch per unreachable target and queue to live nodes. */
  async runPass(): Promise<void> {
    const live = this.deps.view.alivePeers().filter((p) => this.deps.reachable(p.id));
    let ownerless = 0;
    const calls: Array<Promise<void>> = [];
    for (const queue of this.deps.queues) {
      for (const target of queue.targetPeers()) {
        if (!this.unreachable(queue, target.id)) continue;
        const records = queue.peek(target.id, HINT_HANDOFF_LIMITS.items, HINT_HANDOFF_LIMITS.bytes);
        const byReceiver = this.receivers(records, target.id, live);
        ownerless += byReceiver.get("")?.length ?? 0;
        byReceiver.delete("");
        for (const [id, recs] of byReceiver) calls.push(this.handOff(queue, live.find((p) => p.id === id) as PeerRef, target, recs));
      }
    }
    this.ownerless = ownerless;
    await Promise.all(calls);
  }

  /** Groups records by the live node that takes them ("" for records nobody can take). */
  private receivers(records: readonly VersionedRecord[], targetId: string, live: readonly PeerRef[]): Map<string, VersionedRecord[]> {
    const ring = this.deps.view.ring();
    const liveIds = new Set(live.map((p) => p.id));
    const fallback = live.find((p) => p.id !== targetId)?.id ?? "";
    const out = new Map<string, VersionedRecord[]>();
    for (const rec of records) {
      const owner = ring.ownersOf(rec.key).ids.find((id) => id !== targetId && id !== this.deps.selfId && liveIds.has(id)) ?? fallback;
      const list = out.get(owner);
      if (list) list.push(rec);
      else out.set(owner, [rec]);
    }
    return out;
  }

  private async handOff(queue: HintQueue, receiver: PeerRef, target: PeerRef, records: VersionedRecord[]): Promise<void> {
    this.sending++;
    try {
      const accepted = await this.deps.transport.handOffHints(receiver, this.deps.selfId, target, records);
      queue.handedOff(
        target.id,
        records.filter((_, i) => accepted[i] === true),
      );
    } catch (err) {
      this.deps.onError(receiver.id, target.id, err);
    } finally {
      this.sending--;
    }
  }
}
