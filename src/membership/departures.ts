// The former members of one node's membership: pruned as dead, removed (by hand, or by their own
// `left` claim after a drain), and the departures gossiped on. A node that restarts forgets who
// left, and its seeds (what `kubectl scale` down leaves in SERVICE_SEEDS) name the departed
// members again: after 4 -> 2, a restarted survivor counted 4 known nodes, 2 alive, and refused
// every QUORUM request (an external review of scale-down). So each node keeps the departures it
// knows (bounded) and gossips them as `left` entries, and a node takes such hearsay for one kind
// of member only: a seed it has not reached since it started. A member it has heard from itself
// is never removed by hearsay, and a former member that announces itself again is forgotten here
// (it came back).
import { PRUNED_REMEMBERED_MAX } from "../core/limits.js";
import type { Member } from "./transitions.js";

/** Departures remembered at most; the oldest is forgotten first. */
export const DEPARTURES_REMEMBERED_MAX = 256;

export class Departures {
  /** Pruned as dead, with the last address: hearsay cannot bring them back, but the gossiper
   * keeps knocking on them so a healed partition or a restarted node rejoins. */
  private readonly prunedIds = new Map<string, string>();
  /** Removed: only their own claim brings them back. */
  private readonly removedIds = new Set<string>();
  /** Removed ones, gossiped as `left` entries. */
  private readonly gone = new Map<string, { readonly address: string; readonly incarnation: number }>();
  /** Configured seeds not heard from since this node started. */
  private readonly unreached = new Set<string>();

  /** A seed from the configuration, not reached yet. */
  seedAdded(id: string): void {
    this.unreached.add(id);
  }

  /** The member answered or sent its own claim: hearsay of its departure no longer applies to it. */
  reached(id: string): void {
    this.unreached.delete(id);
  }

  /** True when a departure another node reports may remove `id` here: a seed never reached. */
  takesHearsay(id: string): boolean {
    return this.unreached.has(id);
  }

  pruned(id: string, address: string): void {
    this.prunedIds.set(id, address);
    if (this.prunedIds.size > PRUNED_REMEMBERED_MAX) this.prunedIds.delete(this.prunedIds.keys().next().value as string);
  }

  isPruned(id: string): boolean {
    return this.prunedIds.has(id);
  }

  isRemoved(id: string): boolean {
    return this.removedIds.has(id);
  }

  /** Pruned members with their last address, to knock on for a rejoin. */
  absent(): Array<{ id: string; address: string }> {
    return [...this.prunedIds].map(([id, address]) => ({ id, address }));
  }

  /** `id` was removed (by hand, by its own `left` claim, or by hearsay taken): remembered as departed. */
  removed(id: string, address: string | undefined, incarnation: number): void {
    this.gone.delete(id);
    this.gone.set(id, { address: address ?? this.prunedIds.get(id) ?? "", incarnation });
    if (this.gone.size > DEPARTURES_REMEMBERED_MAX) this.gone.delete(this.gone.keys().next().value as string);
    this.prunedIds.delete(id);
    this.removedIds.add(id);
    this.unreached.delete(id);
  }

  /** `id` is a member again (its own claim, or a probe, brought it back). */
  rejoined(id: string): void {
    this.prunedIds.delete(id);
    this.removedIds.delete(id);
    this.gone.delete(id);
  }

  /** The departures as gossip entries (`left`, state dead), appended to this node's member list. */
  claims(): Member[] {
    return [...this.gone].map(([id, g]) => ({ id, address: g.address, state: "dead", incarnation: g.incarnation, lastSeenMs: 0, left: true }));
  }
}
