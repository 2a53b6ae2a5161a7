// The open connections of a listener, at most `max` at once. A new connection that finds them all
// taken does not simply bounce (Node's `server.maxConnections` closes it at once): the oldest
// connection that is idle now — one that never sent a request, or sits between keep-alive
// requests, or is still in its TLS handshake — makes room for it. Only when every open connection
// has a request in flight is the new one refused. So a client that opens connections and says
// nothing (1,024 of them locked the management port's probes out for the 60 s header timeout)
// cannot keep others out: the newest connection is the last to go, and a caller that wants to
// evict a given connection has to open as many as there are idle ones older than it, within the
// time that connection takes to send its request. (nginx does the same with its reusable
// keep-alive connections when it runs out.) Pure: what "idle" means is the caller's predicate.

export class ConnectionSlots<C> {
  /** Open connections, oldest first (a Set keeps insertion order). */
  private readonly open = new Set<C>();
  private evicted = 0;
  private refused = 0;

  constructor(
    private readonly max: number,
    private readonly idle: (connection: C) => boolean,
  ) {}

  /** Connections open now. */
  get size(): number {
    return this.open.size;
  }

  /** Idle connections closed to make room, and new connections refused because none was idle. */
  get counts(): { readonly evicted: number; readonly refused: number } {
    return { evicted: this.evicted, refused: this.refused };
  }

  /**
   * Takes `connection` in. Returns the connection the caller must close: undefined when there was
   * room, the oldest idle one to make room, or `connection` itself when every slot is busy.
   */
  admit(connection: C): C | undefined {
    if (this.open.size < this.max) {
      this.open.add(connection);
      return undefined;
    }
    for (const c of this.open) {
      if (!this.idle(c)) continue;
      this.open.delete(c);
      this.open.add(connection);
      this.evicted++;
      return c;
    }
    this.refused++;
    return connection;
  }

  /** Forgets a connection that closed (a no-op for one evicted or refused). */
  release(connection: C): void {
    this.open.delete(connection);
  }
}

/** What the cap did to make room: closed an idle connection, or refused the new one. */
export type CapOutcome = "evicted" | "refused";

/** Closes the connection `admit` returned for `incoming` (if any) and tells `onCapped` what it was. */
export function closeForCap<C extends { destroy(): void }>(closing: C | undefined, incoming: C, onCapped: ((outcome: CapOutcome) => void) | undefined): void {
  if (closing === undefined) return;
  closing.destroy();
  onCapped?.(closing === incoming ? "refused" : "evicted");
}
