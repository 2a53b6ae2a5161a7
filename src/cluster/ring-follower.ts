// The ring follows membership. A membership change only marks the ring stale; the next reader
// rebuilds it, so a burst of changes costs one rebuild, and each member's points are hashed once
// (cached per member). The rebuilt ring replaces the current one only when ownership moved; the
// ring-change observers (catch-up) run then.
import type { Clock } from "../core/clock.js";
import { VIRTUAL_NODES } from "../core/limits.js";
import { HashRing } from "../ring/index.js";

/** What the ring needs of membership: the ids holding ring positions, and change notices. */
export interface RingMembership {
  /** Ids of the members that hold ring positions (alive and suspect), the local node included. */
  ringMembers(): string[];
  /** Registers an observer of membership changes. */
  onChange(listener: () => void): void;
}

export interface RingFollowerDeps {
  readonly members: RingMembership;
  readonly replication: number;
  readonly clock: Clock;
}

export class RingFollower {
  private readonly points = new Map<string, Uint32Array>();
  private ring: HashRing;
  private stale = false;
  private changedAt: number;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly deps: RingFollowerDeps) {
    this.ring = HashRing.build(deps.members.ringMembers(), deps.replication, VIRTUAL_NODES, this.points);
    this.changedAt = deps.clock.nowMs();
    deps.members.onChange(() => {
      this.stale = true;
    });
  }

  /** The current ring, rebuilt first when membership changed since the last call. */
  current(): HashRing {
    if (this.stale) this.rebuild();
    return this.ring;
  }

  /** When ownership last moved (or the node started), Unix ms. */
  get changedAtMs(): number {
    this.current();
    return this.changedAt;
  }

  /**
   * Registers an observer of ownership changes. It runs after the new ring is in place, must not
   * call back into the follower synchronously, and must return quickly.
   */
  onRingChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private rebuild(): void {
    this.stale = false;
    const ids = this.deps.members.ringMembers();
    // Most changes leave the ring's members as they are (a member turning suspect keeps its
    // positions): nothing to build then. A probe round's suspect marks among thousands of
    // members rebuilt the whole ring for each (a review: seconds of one event loop).
    const sorted = [...new Set(ids)].sort();
    if (this.ring.hasNodes(sorted)) return;
    const members = new Set(sorted);
    for (const id of this.points.keys()) if (!members.has(id)) this.points.delete(id);
    this.ring = HashRing.build(sorted, this.deps.replication, VIRTUAL_NODES, this.points);
    this.changedAt = this.deps.clock.nowMs();
    for (const l of this.listeners) l();
  }
}
