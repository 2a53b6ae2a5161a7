// Out of contact for longer than the tombstone TTL: a node that saw no majority of the known
// nodes for longer than SERVICE_TOMBSTONE_TTL (partitioned into a minority, isolated, or paused)
// may hold keys that were deleted meanwhile and whose tombstones the others have since compacted.
// If it kept them, anti-entropy would spread them back. So it drops its data (items and
// tombstones) and rejoins as a new node: it catches up from its peers once it sees a majority
// again. Until then it refuses records stamped before it lost contact, so minority peers that
// have not dropped theirs yet cannot hand the old records back. Records written after the
// separation are kept: they are newer than anything deleted before it.
//
// The gap is measured on the monotonic clock, so a paused process (SIGSTOP) counts the pause, and
// the check also runs before this node answers data to a peer, so a node resumed after a long
// pause drops its data before anyone pulls it.
//
// Every look also drives the quorum vote (quorum-vote.ts): it tells it whether the looks stopped
// for longer than PAUSE_INTERVALS intervals (a paused process) and whether this node's view
// disagrees with its peers' (the vote asks itself whether the node sees a majority alive): such a
// node does not count towards quorum reads until it has caught up.
import type { Clock, TimerHandle, Timers } from "../core/clock.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import type { ShardedStore } from "../store/index.js";
import type { ClusterView } from "./cluster-view.js";
import type { QuorumVote } from "./quorum-vote.js";
import { hasMajority } from "./write/quorum.js";

/** Looks this many intervals apart mean the process was paused (or its event loop blocked). */
const PAUSE_INTERVALS = 3;

export interface ContactGuardDeps {
  readonly clock: Clock;
  readonly timers: Timers;
  readonly view: Pick<ClusterView, "notDeadCount" | "knownCount">;
  readonly store: ShardedStore;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly tombstoneTtlMs: number;
  /** How often the guard looks (the heartbeat). */
  readonly intervalMs: number;
  /** Told of every look (whether this node counts towards quorum reads). */
  readonly vote?: QuorumVote;
  /** True while peers keep gossiping as alive members this node pruned (quorum-vote.ts, ViewsDisagreement). */
  readonly viewsDisagree?: () => boolean;
}

export class ContactGuard {
  private timer: TimerHandle | undefined;
  private lastMajorityMonoMs: number;
  private lastMajorityWallMs: number;
  private lastLookMonoMs: number;
  /** Version floor while the node has dropped its data and not yet seen a majority again; 0 = none. */
  private floor = 0;
  private readonly resetListeners: Array<() => void> = [];

  constructor(private readonly deps: ContactGuardDeps) {
    this.lastMajorityMonoMs = deps.clock.monotonicMs();
    this.lastMajorityWallMs = deps.clock.nowMs();
    this.lastLookMonoMs = this.lastMajorityMonoMs;
  }

  start(): void {
    this.lastLookMonoMs = this.deps.clock.monotonicMs();
    this.timer ??= this.deps.timers.every(this.deps.intervalMs, () => this.check());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * Registers an observer of a reset (catch-up starts there). It runs after the data was dropped,
   * must not call back into the guard, and must return quickly.
   */
  onReset(listener: () => void): void {
    this.resetListeners.push(listener);
  }

  /** Records from peers with a version below this are refused (0: no floor). */
  get versionFloor(): number {
    return this.floor;
  }

  /** Looks at the contact this node has now; drops the data once the gap passes the TTL. */
  check(): void {
    const { clock, view } = this.deps;
    const mono = clock.monotonicMs();
    const paused = mono - this.lastLookMonoMs > PAUSE_INTERVALS * this.deps.intervalMs;
    this.lastLookMonoMs = mono;
    if (this.floor === 0 && mono - this.lastMajorityMonoMs > this.deps.tombstoneTtlMs) this.reset(mono);
    const known = view.knownCount();
    if (hasMajority(view.notDeadCount(), known)) {
      this.lastMajorityMonoMs = mono;
      this.lastMajorityWallMs = clock.nowMs();
      this.floor = 0;
    }
    this.deps.vote?.observe({ paused, viewsDisagree: this.deps.viewsDisagree?.() ?? false, monoMs: mono });
  }

  private reset(monoNowMs: number): void {
    const { store, metrics, logger } = this.deps;
    const items = store.items;
    const tombstones = store.tombstones;
    store.clear();
    this.floor = this.lastMajorityWallMs * 1000;
    metrics.inc("dist.contact.resets");
    logger.warn(LOG.contactLost, { out_of_contact_ms: Math.round(monoNowMs - this.lastMajorityMonoMs), items_dropped: items, tombstones_dropped: tombstones });
    for (const l of this.resetListeners) l();
  }
}
