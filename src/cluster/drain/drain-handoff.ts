// The drain hand-off: what a draining node does until it is safe to stop. Every tick it
//   1. replays its hints and queued migrations at once (the replay loop's tick, not awaited);
//   2. pushes its member list to the alive peers that have not yet shown it as draining, at most
//      DRAIN_LIMITS.announcePerTick of them, taking turns (their answers carry their view of
//      this node: that is the confirmation);
//   3. hands the hints and migrations of unreachable targets to live owners (HintHandoff);
//   4. once every alive peer confirmed (so owners no longer refuse keys because they still see
//      this node on their ring), runs the key hand-off pass (KeyHandoff), again whenever the
//      ring changed after a pass that found keys without an owner, or once the migration queue
//      emptied after a pass whose records it had no room for (at most every KEY_PASS_RETRY_MS).
// status() is what GET /dist/drain answers and what the shutdown waits for.
import type { TimerHandle, Timers } from "../../core/clock.js";
import { DRAIN_LIMITS } from "../../core/limits.js";
import type { HashRing } from "../../ring/index.js";
import type { PeerRef } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import type { HintQueue } from "../hints/hint-queue.js";
import type { Lifecycle } from "../lifecycle.js";
import { drainStatus, type DrainStatus } from "./drain-status.js";
import type { HintHandoff } from "./hint-handoff.js";
import type { KeyHandoff } from "./key-handoff.js";

/** What the hand-off needs of membership about this node. */
export interface DrainMembership {
  /** True when peer `id` has shown this node as draining in its gossip. */
  seesSelfDraining(id: string): boolean;
  /** True once this node announced that it left. */
  readonly left: boolean;
  /** True when every other known node drains (or left): the whole cluster stops. */
  peersLeaving(): boolean;
}

export interface DrainHandoffDeps {
  readonly view: Pick<ClusterView, "alivePeers" | "knownCount" | "ring">;
  readonly lifecycle: Pick<Lifecycle, "draining" | "inFlightWrites">;
  readonly membership: DrainMembership;
  /** Push-pull gossip with one peer (the Gossiper's pushTo). */
  readonly announce: (peer: PeerRef) => Promise<boolean>;
  readonly hints: HintQueue;
  readonly migrations: HintQueue;
  readonly keys: KeyHandoff;
  readonly hintHandoff: HintHandoff;
  /** One tick of the hint replay loop (both queues). */
  readonly replay: () => Promise<void>;
  /** Read repairs queued for batching. */
  readonly repairsQueued: () => number;
  readonly timers: Timers;
  readonly intervalMs: number;
}

/** A key pass run again for records the migration queue refused waits at least this long. */
export const KEY_PASS_RETRY_MS = 2_000;

export class DrainHandoff {
  private timer: TimerHandle | undefined;
  private ticking = false;
  /** The ring the last key pass ran against. */
  private passRing: HashRing | undefined;
  /** Where the next tick's drain announcements start among the unconfirmed peers. */
  private nextAnnounce = 0;
  /** Ticks since the last key pass started. */
  private ticksSincePass = 0;

  constructor(private readonly deps: DrainHandoffDeps) {}

  /** Starts the hand-off ticks (call when the node starts draining); the first tick runs now. */
  start(): void {
    if (this.timer) return;
    this.timer = this.deps.timers.every(this.deps.intervalMs, () => void this.runDrainTick());
    void this.runDrainTick();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One tick (never overlapping the previous one). */
  async runDrainTick(): Promise<void> {
    if (!this.deps.lifecycle.draining || this.ticking) return;
    this.ticking = true;
    try {
      void this.deps.replay();
      await Promise.all([...this.announceTurn().map((p) => this.deps.announce(p)), this.deps.hintHandoff.runPass()]);
      const { keys } = this.deps;
      const ring = this.deps.view.ring();
      // Again after a ring change, or once the migration queue emptied after a pass whose records
      // it had no room for, at most every KEY_PASS_RETRY_MS (a record over the queue's byte cap
      // would otherwise have every tick scan the whole store).
      this.ticksSincePass++;
      const roomAgain = keys.notQueued > 0 && this.deps.migrations.size() === 0 && this.ticksSincePass * this.deps.intervalMs >= KEY_PASS_RETRY_MS;
      if (this.unconfirmedPeers().length === 0 && !keys.running && !keys.done && (ring !== this.passRing || roomAgain)) {
        this.passRing = ring;
        this.ticksSincePass = 0;
        void keys.run();
      }
    } finally {
      this.ticking = false;
    }
  }

  /** The unconfirmed peers to push to this tick: at most DRAIN_LIMITS.announcePerTick, taking turns. */
  private announceTurn(): PeerRef[] {
    const peers = this.unconfirmedPeers();
    const n = DRAIN_LIMITS.announcePerTick;
    if (peers.length <= n) return peers;
    const start = this.nextAnnounce % peers.length;
    this.nextAnnounce = start + n;
    return [...peers.slice(start, start + n), ...peers.slice(0, Math.max(0, start + n - peers.length))];
  }

  /** Alive peers that have not shown this node as draining yet. */
  private unconfirmedPeers(): PeerRef[] {
    return this.deps.view.alivePeers().filter((p) => !this.deps.membership.seesSelfDraining(p.id));
  }

  /** The answer of GET /dist/drain. */
  status(): DrainStatus {
    const { lifecycle, keys, hintHandoff } = this.deps;
    const draining = lifecycle.draining;
    return drainStatus({
      draining,
      left: this.deps.membership.left,
      alone: this.deps.view.knownCount() <= 1,
      peersLeaving: draining && this.deps.membership.peersLeaving(),
      hintsQueued: this.deps.hints.size(),
      migrationsQueued: this.deps.migrations.size(),
      keysUnsent: keys.remaining,
      keysPassDone: keys.done,
      noLiveOwner: keys.noOwner + keys.notQueued + hintHandoff.noLiveOwner,
      repairsQueued: this.deps.repairsQueued(),
      writesInFlight: lifecycle.inFlightWrites,
      callsInFlight: keys.callsInFlight + hintHandoff.callsInFlight,
      unconfirmedPeers: draining ? this.unconfirmedPeers().map((p) => p.id) : [],
    });
  }
}
