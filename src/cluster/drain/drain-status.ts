// What GET /dist/drain reports, and whether the node may stop (pure). A draining node is safe
// to stop when nothing it holds is pending any more (hints, migrations, keys not yet handed to
// their owners, queued read repairs, writes and hand-off calls under way) and every alive peer
// has shown, in its gossip, that it sees the node as draining (so it no longer routes to it). A
// node that has never known another node (a cluster of one) has nowhere to hand its data and is
// safe to stop at once; so is a node whose every peer is leaving too (the whole cluster stops):
// nobody can take its records, and waiting for the drain timeout would not save them. Records
// waiting for peers that failed (and may come back) keep it unsafe.

/** Why the node is not safe to stop yet. */
export interface DrainBlocker {
  readonly reason:
    | "not_draining"
    | "peers_unconfirmed"
    | "hints_pending"
    | "migrations_pending"
    | "keys_unsent"
    | "no_live_owner"
    | "repairs_queued"
    | "in_flight";
  /** How many items the blocker holds back (absent for peers_unconfirmed and not_draining). */
  readonly count?: number;
  /** The alive peers that have not confirmed yet (peers_unconfirmed only). */
  readonly peers?: string[];
}

/** The body of GET /dist/drain. */
export interface DrainStatus {
  readonly state: "serving" | "draining" | "left";
  /** Replica hints queued on this node. */
  readonly hints_pending: number;
  /** Queued migrations plus keys the hand-off has not sent to their owners yet. */
  readonly migrations_pending: number;
  readonly repairs_queued: number;
  /** Admitted writes under way plus hand-off calls under way. */
  readonly in_flight: number;
  readonly safe_to_stop: boolean;
  readonly blockers: DrainBlocker[];
}

/** The facts drainStatus() decides from. */
export interface DrainFacts {
  readonly draining: boolean;
  readonly left: boolean;
  /** No other node was ever known (a cluster of one): nothing to hand off, nobody to tell. */
  readonly alone: boolean;
  /** Every other known node drains or left: nobody can take the records (the cluster stops). */
  readonly peersLeaving: boolean;
  readonly hintsQueued: number;
  readonly migrationsQueued: number;
  /** Keys the current hand-off pass has not reached yet, or all held keys before it starts. */
  readonly keysUnsent: number;
  /** True once a hand-off pass reached every key. */
  readonly keysPassDone: boolean;
  /** Records and hints the hand-off found no live owner for. */
  readonly noLiveOwner: number;
  readonly repairsQueued: number;
  readonly writesInFlight: number;
  readonly callsInFlight: number;
  /** Alive peers that have not shown this node as draining yet. */
  readonly unconfirmedPeers: readonly string[];
}

export function drainStatus(f: DrainFacts): DrainStatus {
  const blockers: DrainBlocker[] = [];
  const inFlight = f.writesInFlight + f.callsInFlight;
  const add = (reason: DrainBlocker["reason"], count: number) => {
    if (count > 0) blockers.push({ reason, count });
  };
  if (!f.draining) blockers.push({ reason: "not_draining" });
  else if (!f.alone) {
    if (f.unconfirmedPeers.length > 0) blockers.push({ reason: "peers_unconfirmed", peers: [...f.unconfirmedPeers].sort() });
    if (!f.peersLeaving) {
      add("hints_pending", f.hintsQueued);
      add("migrations_pending", f.migrationsQueued);
      add("keys_unsent", f.keysPassDone ? 0 : Math.max(1, f.keysUnsent));
      add("no_live_owner", f.noLiveOwner);
      add("repairs_queued", f.repairsQueued);
    }
  }
  if (f.draining) add("in_flight", inFlight);
  return {
    state: f.left ? "left" : f.draining ? "draining" : "serving",
    hints_pending: f.hintsQueued,
    migrations_pending: f.migrationsQueued + (f.keysPassDone ? 0 : f.keysUnsent),
    repairs_queued: f.repairsQueued,
    in_flight: inFlight,
    safe_to_stop: blockers.length === 0,
    blockers,
  };
}
