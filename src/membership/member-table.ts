// The membership of one node: who is in the cluster, in which state, at which incarnation.
// Applies the transitions of SPEC.md's peer-membership table with their log records and
// metrics, and tells observers about real changes.
//
// Observer contract: called after a change is committed (once per batch), with the table already
// updated; may read the table, must not change it; must return quickly.
import type { Clock } from "../core/clock.js";
import { GOSSIP_ENTRIES_MAX, MEMBERS_MAX, PRUNED_REMEMBERED_MAX } from "../core/limits.js";
import { isDialable as dialable } from "../core/address.js";
import { isNodeId } from "../core/node-id.js";
import { LOG, type Logger } from "../log/index.js";
import type { Metrics } from "../observability/index.js";
import { MemberChanges, type MembershipObserver } from "./member-changes.js";
import { adoptClaimFields, countStates, freeze, FrozenForms, type Entry } from "./member-entry.js";
import { decideGossip, isDeadBy, type Member, type MemberState } from "./transitions.js";

export type { MembershipObserver } from "./member-changes.js";

export interface MemberTableDeps {
  readonly selfId: string;
  readonly selfAddress: string;
  /** This node's advertised client and management base URLs, gossiped to peers. */
  readonly selfApiUrl?: string | undefined;
  readonly selfMgmtUrl?: string | undefined;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

export class MemberTable {
  private readonly entries = new Map<string, Entry>();
  private readonly frozen = new FrozenForms();
  /** Members pruned as dead, with their last address: hearsay cannot bring them back, but the
   * gossiper keeps knocking on them so a healed partition or a restarted node rejoins. */
  private readonly pruned = new Map<string, string>();
  /** Members removed by hand: only their own claim brings them back. */
  private readonly removed = new Set<string>();
  /** Ids ever seen (pruned ones included); only a manual removal forgets one. */
  private readonly known = new Set<string>();
  private readonly changes = new MemberChanges(() => this.recount());
  /** Peers whose gossip showed this node as draining (while it drains). */
  private readonly drainSeenBy = new Set<string>();
  /** This node announced that it leaves (its claims carry `left`). */
  private selfLeft = false;
  /** A peer answered a probe or gossiped its own claim at least once. */
  private contactedPeer = false;
  /** When a peer last gossiped as alive a member this node pruned (0: never). */
  private prunedHeardAliveMs = 0;
  /** Alive and not-dead members, this node included: recounted on every change (recount()). */
  private aliveMembers = 0;
  private notDeadMembers = 0;

  constructor(private readonly deps: MemberTableDeps) {
    const now = deps.clock.nowMs();
    this.entries.set(deps.selfId, { id: deps.selfId, address: deps.selfAddress, state: "alive", incarnation: 1, lastSeenMs: now, lastProbeOkMs: now, apiUrl: deps.selfApiUrl ?? "", mgmtUrl: deps.selfMgmtUrl ?? "", draining: false });
    this.known.add(deps.selfId);
    this.recount();
  }

  get selfId(): string {
    return this.deps.selfId;
  }

  get selfIncarnation(): number {
    return (this.entries.get(this.deps.selfId) as Entry).incarnation;
  }

  /** Membership version: bumps on every real change. */
  get version(): number {
    return this.changes.version;
  }

  get(id: string): Member | undefined {
    const e = this.entries.get(id);
    return e ? this.frozen.of(e) : undefined;
  }

  /** Every member, the local node included, sorted by id (this node's entry carries `left` once it leaves). */
  list(): Member[] {
    return [...this.entries.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((e) => (this.selfLeft && e.id === this.deps.selfId ? { ...freeze(e), left: true } : this.frozen.of(e)));
  }

  /** Peers (not the local node) in a state. */
  peers(...states: MemberState[]): Member[] {
    return this.list().filter((m) => m.id !== this.deps.selfId && (states.length === 0 || states.includes(m.state)));
  }

  /**
   * Members that hold ring positions: alive and suspect ones that are not draining. When every
   * such member drains (a cluster of one draining), they keep their positions, so the writes
   * admitted before the drain still have owners.
   */
  ringMembers(): string[] {
    const live = [...this.entries.values()].filter((e) => e.state !== "dead");
    const serving = live.filter((e) => !e.draining);
    return (serving.length > 0 ? serving : live).map((e) => e.id);
  }

  /** True while this node drains (its own entry says so). */
  get selfDraining(): boolean {
    return (this.entries.get(this.deps.selfId) as Entry).draining;
  }

  /** True once this node announced that it left (leave()). */
  get hasLeft(): boolean {
    return this.selfLeft;
  }

  /** True once a peer answered a probe or sent its own claim (the node joined its cluster). */
  get contacted(): boolean {
    return this.contactedPeer;
  }

  /**
   * When (wall clock) a peer last gossiped as alive a member this node pruned, 0 if never: the
   * views disagree (this node cannot reach a node its peers reach, or has not re-added it yet).
   */
  get prunedHeardAliveAtMs(): number {
    return this.prunedHeardAliveMs;
  }

  /**
   * This node starts draining: its entry says so at a higher incarnation (gossip carries it), and
   * it leaves its own ring. One-way; false when already draining.
   */
  startDraining(): boolean {
    const self = this.entries.get(this.deps.selfId) as Entry;
    if (self.draining) return false;
    self.draining = true;
    self.incarnation++;
    this.drainSeenBy.clear();
    this.changes.changed();
    return true;
  }

  /** True when peer `id` has shown this draining node as draining in its gossip. */
  seesSelfDraining(id: string): boolean {
    return this.drainSeenBy.has(id);
  }

  /**
   * This node leaves for good: from now on its own claim carries `left` (at a higher incarnation),
   * which peers take as a manual removal. Call after the drain, right before stopping.
   */
  leave(): void {
    if (this.selfLeft) return;
    this.selfLeft = true;
    (this.entries.get(this.deps.selfId) as Entry).incarnation++;
  }

  /** Nodes seen in the cluster, pruned ones included (only a manual removal lowers it). */
  knownCount(): number {
    return this.known.size;
  }

  /**
   * Alive members, the local node included. Kept from the last change, not counted per call: the
   * contact guard asks before every answer to a peer.
   */
  aliveCount(): number {
    return this.aliveMembers;
  }

  /** Members not dead, the local node included (kept like aliveCount). */
  notDeadCount(): number {
    return this.notDeadMembers;
  }

  onChange(observer: MembershipObserver): () => void {
    return this.changes.onChange(observer);
  }

  /** Runs `fn`; the changes it makes reach the version and the observers once, when it returns. */
  batch<T>(fn: () => T): T {
    return this.changes.batch(fn);
  }

  /** Adds a peer learned from a seed or from its own claim (it counts towards quorum sizes). */
  addPeer(id: string, address: string, incarnation = 1): boolean {
    return this.insert(id, address, "alive", incarnation, true);
  }

  /** Ids counted towards quorum sizes: configured seeds and nodes reached directly, pruned ones included. */
  knownIds(): string[] {
    return [...this.known].sort();
  }

  /** True for a member removed by hand (not contacted again until it announces itself). */
  isRemoved(id: string): boolean {
    return this.removed.has(id);
  }

  /** Members this node has lost (pruned), to knock on for a rejoin. */
  absentPeers(): Array<{ id: string; address: string }> {
    return [...this.pruned].map(([id, address]) => ({ id, address }));
  }

  /**
   * Adds a member. `reached` says it was configured or heard from directly: only such members
   * count towards quorum sizes, so third-party gossip about unknown ids (a buggy or hostile peer)
   * cannot make quorums unreachable; a gossiped member counts once a probe reaches it.
   */
  private insert(id: string, address: string, state: MemberState, incarnation: number, reached: boolean): boolean {
    // An id that is not a node id (from a buggy or hostile peer) never joins: ids travel in headers.
    if (id === this.deps.selfId || !isNodeId(id)) return false;
    if (!this.entries.has(id) && this.entries.size >= MEMBERS_MAX) return false;
    const existing = this.entries.get(id);
    if (existing) {
      if (existing.address !== address && dialable(address)) existing.address = address;
      return false;
    }
    // Nobody could dial a member known only by an unspecified host: wait for a real address.
    if (!dialable(address)) return false;
    const now = this.deps.clock.nowMs();
    this.entries.set(id, { id, address, state, incarnation, lastSeenMs: now, lastProbeOkMs: now, apiUrl: "", mgmtUrl: "", draining: false });
    this.pruned.delete(id);
    this.removed.delete(id);
    if (reached) this.known.add(id);
    this.deps.logger.info(LOG.peerAdded, { peer: id, address, state });
    this.changes.changed();
    return true;
  }

  /** A direct or indirect probe reached the peer (which reports `incarnation` when known). */
  probeSucceeded(id: string, incarnation?: number): void {
    const e = this.entries.get(id);
    if (!e || id === this.deps.selfId) return;
    const now = this.deps.clock.nowMs();
    e.lastSeenMs = now;
    e.lastProbeOkMs = now;
    this.known.add(id);
    this.contactedPeer = true;
    // Same state: last-seen only (incarnation and version untouched). A real change may take the
    // incarnation the peer reported.
    if (e.state !== "alive") this.transition(e, "alive", incarnation);
  }

  /** The peer failed its probe (direct, and indirect when enabled). */
  markSuspect(id: string): void {
    const e = this.entries.get(id);
    if (!e || id === this.deps.selfId) return;
    e.lastSeenMs = this.deps.clock.nowMs();
    if (e.state === "alive") {
      this.transition(e, "suspect");
      this.deps.logger.warn(LOG.peerSuspect, { peer: id, incarnation: e.incarnation });
    }
  }

  /** Suspect peers past the dead window (no successful probe for `deadAfterMs`). */
  overdueSuspects(deadAfterMs: number): string[] {
    const now = this.deps.clock.nowMs();
    return [...this.entries.values()].filter((e) => e.state === "suspect" && isDeadBy(e.lastProbeOkMs, now, deadAfterMs)).map((e) => e.id);
  }

  /** Declares a suspect peer dead and removes it from membership. */
  prune(id: string): boolean {
    const e = this.entries.get(id);
    if (!e || id === this.deps.selfId) return false;
    e.state = "dead";
    this.deps.metrics.inc("dist.nodes.dead");
    this.deps.logger.warn(LOG.peerPruned, { peer: id, incarnation: e.incarnation });
    this.pruned.set(id, e.address);
    if (this.pruned.size > PRUNED_REMEMBERED_MAX) this.pruned.delete(this.pruned.keys().next().value as string);
    this.removeEntry(e);
    return true;
  }

  /**
   * Manual removal: the peer leaves at once and no longer counts towards quorum sizes. Works for
   * pruned peers too (they still count as known until removed by hand).
   */
  remove(id: string): boolean {
    if (id === this.deps.selfId) return false;
    // An id that was never a member: nothing changes and nothing is recorded.
    if (!this.entries.has(id) && !this.known.has(id) && !this.pruned.has(id)) return false;
    this.known.delete(id);
    this.pruned.delete(id);
    this.removed.add(id);
    const e = this.entries.get(id);
    if (e) {
      this.removeEntry(e);
      return true;
    }
    // Already pruned: the known count (quorum sizes) changes if it counted, and the member is no
    // longer knocked on for a rejoin.
    this.deps.logger.info(LOG.peerRemoved, { peer: id });
    this.changes.changed();
    return true;
  }

  /** Merges gossiped entries sent by `from` (one change for the observers); returns true when anything changed. */
  merge(from: string, claims: readonly Member[]): boolean {
    const before = this.changes.version;
    this.changes.batch(() => this.mergeClaims(from, claims));
    return this.changes.version !== before;
  }

  private mergeClaims(from: string, claims: readonly Member[]): void {
    const now = this.deps.clock.nowMs();
    for (const claim of claims.slice(0, GOSSIP_ENTRIES_MAX)) {
      if (claim.id === from && claim.id !== this.deps.selfId) this.contactedPeer = true;
      if (this.takeLeaveOrDrainNotice(from, claim)) continue;
      const local = this.entries.get(claim.id);
      const blocked = this.pruned.has(claim.id) || this.removed.has(claim.id);
      if (claim.id !== from && claim.state === "alive" && this.pruned.has(claim.id)) this.prunedHeardAliveMs = now;
      const d = decideGossip(this.deps.selfId, this.selfIncarnation, from, claim, local ? freeze(local) : undefined, blocked, this.selfDraining);
      const knownIncarnation = local?.incarnation ?? 0;
      switch (d.kind) {
        case "ignore":
          break;
        case "refresh":
          if (local) {
            local.lastSeenMs = now;
            local.incarnation = d.incarnation;
            if (claim.id === from) {
              this.known.add(claim.id);
              // A node knows its own address best (it may have moved), unless it names no host.
              if (dialable(claim.address)) local.address = claim.address;
            }
          }
          break;
        case "add":
          this.insert(claim.id, d.address, d.state, d.incarnation, claim.id === from);
          break;
        case "change":
          if (local) {
            local.lastSeenMs = now;
            if (claim.id === from) {
              local.lastProbeOkMs = now;
              this.known.add(claim.id);
            }
            if (dialable(d.address)) local.address = d.address;
            this.transition(local, d.state, d.incarnation);
          }
          break;
        case "refute": {
          const self = this.entries.get(this.deps.selfId) as Entry;
          self.incarnation = d.incarnation;
          this.deps.logger.info(LOG.selfRefuted, { from, claimed_state: claim.state, claimed_incarnation: claim.incarnation, incarnation: d.incarnation });
          this.changes.changed();
          break;
        }
      }
      const e = claim.id === this.deps.selfId ? undefined : this.entries.get(claim.id);
      // Changing a URL or the draining flag is a change (version bump, observers).
      if (e && d.kind !== "ignore" && d.kind !== "refute" && adoptClaimFields(e, claim, claim.id === from, knownIncarnation)) this.changes.changed();
    }
  }

  /**
   * Handles what merge() must see before the SWIM decision: a member's own claim that it left (a
   * manual removal: it stops counting towards quorum sizes), and a peer's view of this draining
   * node (recorded as that peer's confirmation). Returns true when the claim is consumed.
   */
  private takeLeaveOrDrainNotice(from: string, claim: Member): boolean {
    if (claim.id === this.deps.selfId) {
      if (claim.draining === true && this.selfDraining && from !== this.deps.selfId) this.drainSeenBy.add(from);
      return false;
    }
    if (claim.left !== true) return false;
    // Only a member's own claim says it left; hearsay of it is ignored.
    if (claim.id === from) this.remove(claim.id);
    return true;
  }

  /**
   * A real state change: the member's incarnation and the membership version bump, observers
   * fire. `incarnation` (from gossip) is taken when it is higher.
   */
  private transition(e: Entry, state: MemberState, incarnation?: number): void {
    e.state = state;
    e.incarnation = Math.max(e.incarnation + 1, incarnation ?? 0);
    this.changes.changed();
  }

  private removeEntry(e: Entry): void {
    this.entries.delete(e.id);
    this.frozen.forget(e.id);
    this.deps.metrics.inc("dist.nodes.removed");
    this.deps.logger.info(LOG.peerRemoved, { peer: e.id });
    this.changes.changed();
  }

  /** Recounts the members by state (what aliveCount and notDeadCount answer) and sets the gauges. */
  private recount(): void {
    const c = countStates(this.entries.values());
    this.aliveMembers = c.alive;
    this.notDeadMembers = c.notDead;
    this.deps.metrics.set("dist.members.alive", c.alive);
    this.deps.metrics.set("dist.nodes.suspect", c.suspect);
    this.deps.metrics.set("dist.membership.version", this.changes.version);
  }
}
