// The open connections of a listener, at most `max` at once. A new connection that finds them all
// taken does not simply bounce (Node's `server.maxConnections` closes it at once): an open
// connection that can be spared makes room for it, and only when none can is the new one refused.
// So a client that opens connections and says nothing (1,024 of them locked the management port's
// probes out for the 60 s header timeout) cannot keep others out. (nginx does the same with its
// reusable keep-alive connections when it runs out.)
//
// Which one goes is the caller's `rank`: 0 for a connection that must stay (a request in flight
// whose answer moves, a trusted peer session), higher for one more worth closing. The listeners
// rank an answer that has stopped moving highest, then connections that never had an answer (silent,
// or still in their TLS handshake), then keep-alive connections between requests: a pooled client
// keeps its connection while there are silent ones to close. Among equals the oldest goes.
//
// The search is bounded: at most SCAN_MAX connections from the oldest end are looked at, and those
// that must stay move to the young end, so a flood at a cap held by busy connections costs a fixed
// amount per new connection (not a walk over 16,384), and the next search looks at others. Pure.

/** What the cap did to make room: closed a spare connection, or refused the new one. */
export type CapOutcome = "evicted" | "refused";

/** Connections looked at per admission at most. */
export const SCAN_MAX = 64;

export class ConnectionSlots<C> {
  /** Open connections, oldest first (a Set keeps insertion order; busy ones rotate to the end). */
  private readonly open = new Set<C>();
  private evicted = 0;
  private refused = 0;

  constructor(
    private readonly max: number,
    /** 0: must stay; higher: closed before lower ranks (ties: the oldest). */
    private readonly rank: (connection: C) => number,
    private readonly scanMax = SCAN_MAX,
  ) {}

  /** Connections open now. */
  get size(): number {
    return this.open.size;
  }

  /** Connections closed to make room, and new connections refused because none could be spared. */
  get counts(): { readonly evicted: number; readonly refused: number } {
    return { evicted: this.evicted, refused: this.refused };
  }

  /**
   * Takes `connection` in. Returns the connection the caller must close: undefined when there was
   * room, a spared one to make room, or `connection` itself when none of those looked at could go.
   */
  admit(connection: C): C | undefined {
    if (this.open.size < this.max) {
      this.open.add(connection);
      return undefined;
    }
    const victim = this.pick();
    if (victim === undefined) {
      this.refused++;
      return connection;
    }
    this.open.delete(victim);
    this.open.add(connection);
    this.evicted++;
    return victim;
  }

  /** The open connections, oldest first. */
  connections(): IterableIterator<C> {
    return this.open.values();
  }

  /** True while every slot is taken. */
  get full(): boolean {
    return this.open.size >= this.max;
  }

  /** Forgets a connection that closed (a no-op for one evicted or refused). */
  release(connection: C): void {
    this.open.delete(connection);
  }

  /** The best-ranked of the oldest `scanMax` connections; the ones that must stay move to the end. */
  private pick(): C | undefined {
    let best: C | undefined;
    let bestRank = 0;
    const staying: C[] = [];
    let looked = 0;
    for (const c of this.open) {
      if (looked++ >= this.scanMax) break;
      const r = this.rank(c);
      if (r === 0) staying.push(c);
      else if (r > bestRank) {
        best = c;
        bestRank = r;
      }
    }
    for (const c of staying) {
      this.open.delete(c);
      this.open.add(c);
    }
    return best;
  }
}

/** Closes the connection `admit` returned for `incoming` (if any) and tells `onCapped` what it was. */
export function closeForCap<C extends { destroy(): void }>(closing: C | undefined, incoming: C, onCapped: ((outcome: CapOutcome) => void) | undefined): void {
  if (closing === undefined) return;
  closing.destroy();
  onCapped?.(closing === incoming ? "refused" : "evicted");
}
