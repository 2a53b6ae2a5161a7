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

  /**
   * One pass: for every unreachable target of every queue (at once), hands its hints to live
   * nodes batch after batch until none is left or a batch makes no progress (nobody can take it,
   * or a call failed: the next pass tries again).
   */
  async runPass(): Promise<void> {
    const live = this.deps.view.alivePeers().filter((p) => this.deps.reachable(p.id));
    const work: Array<Promise<number>> = [];
    for (const queue of this.deps.queues) {
      for (const target of queue.targetPeers()) if (this.unreachable(queue, target.id)) work.push(this.drainTarget(queue, target, live));
    }
    const ownerless = await Promise.all(work);
    this.ownerless = ownerless.reduce((a, b) => a + b, 0);
  }

  /** Hands the hints of one target off, batch by batch; returns how many nobody could take. */
  private async drainTarget(queue: HintQueue, target: PeerRef, live: readonly PeerRef[]): Promise<number> {
    for (;;) {
      const records = queue.peek(target.id, HINT_HANDOFF_LIMITS.items, HINT_HANDOFF_LIMITS.bytes);
      if (records.length === 0) return 0;
      const byReceiver = this.receivers(records, target.id, live);
      const ownerless = byReceiver.get("")?.length ?? 0;
      byReceiver.delete("");
      const handed = await Promise.all([...byReceiver].map(([id, recs]) => this.handOff(queue, live.find((p) => p.id === id) as PeerRef, target, recs)));
      // No progress (nobody to take them, a cap, or a failed call): stop until the next pass.
      if (handed.reduce((a, b) => a + b, 0) === 0) return ownerless > 0 ? queue.size(target.id) : 0;
    }
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

  /** One hand-off call; returns how many records left the queue. */
  private async handOff(queue: HintQueue, receiver: PeerRef, target: PeerRef, records: VersionedRecord[]): Promise<number> {
    this.sending++;
    try {
      const accepted = await this.deps.transport.handOffHints(receiver, this.deps.selfId, target, records);
      return queue.handedOff(
        target.id,
        records.filter((_, i) => accepted[i] === true),
      );
    } catch (err) {
      this.deps.onError(receiver.id, target.id, err);
      return 0;
    } finally {
      this.sending--;
    }
  }
}
