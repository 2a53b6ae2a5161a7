// The membership version and the observers of a MemberTable, told of its changes once per batch:
// one gossip message or one probe tick may change thousands of entries (MEMBERS_MAX), and
// telling the observers per entry (a snapshot of every member for each, the event stream's JSON
// of it) made one message cost entries x members in one event-loop turn (a review: 1,023 gossiped
// members held the loop 0.8 s, 5 s with one /cluster/events subscriber). Observers get no
// snapshot: the ones that need the list read it (once per turn: oncePerTurn), where a snapshot
// per change cost every change a sorted copy of the whole table.

/** Told after a change is committed, with the table already updated; must return quickly. */
export type MembershipObserver = () => void;

export class MemberChanges {
  private readonly observers = new Set<MembershipObserver>();
  private counter = 1;
  private depth = 0;
  private pending = false;

  /** `settle` runs on each commit, after the version bump: it updates what derives from the table. */
  constructor(private readonly settle: () => void) {}

  /** Membership version: bumps once per committed change (or batch of changes). */
  get version(): number {
    return this.counter;
  }

  onChange(observer: MembershipObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** A real change: committed now, or once at the end of the batch under way. */
  changed(): void {
    if (this.depth > 0) this.pending = true;
    else this.commit();
  }

  /** Runs `fn` with its changes committed once, when it returns (batches nest). */
  batch<T>(fn: () => T): T {
    this.depth++;
    try {
      return fn();
    } finally {
      this.depth--;
      if (this.depth === 0 && this.pending) {
        this.pending = false;
        this.commit();
      }
    }
  }

  private commit(): void {
    this.counter++;
    this.settle();
    for (const o of this.observers) o();
  }
}
