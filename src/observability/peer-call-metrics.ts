// Peer calls as an operator sees them: dist.peer.call.duration (seconds) and dist.peer.failures,
// per method (the Connect method: Set, Forward, Gossip, ...) and peer (node id). Recorded once per
// call or exchange frame, which carry batches, never once per client request.
import { Histogram, KeyedHistogram } from "./histogram.js";

export class PeerCallMetrics {
  readonly durations = new KeyedHistogram(new Histogram());
  private readonly failuresByKey = new Map<string, { method: string; peer: string; count: number }>();

  /** Records one finished call. */
  record(method: string, peer: string, seconds: number, ok: boolean): void {
    const key = `${method}\u0000${peer}`;
    this.durations.series(key, () => ({ method, peer })).record(seconds);
    if (ok) return;
    const f = this.failuresByKey.get(key);
    if (f) f.count++;
    else this.failuresByKey.set(key, { method, peer, count: 1 });
  }

  /** Failed calls per method and peer. */
  failures(): ReadonlyArray<{ readonly method: string; readonly peer: string; readonly count: number }> {
    return [...this.failuresByKey.values()];
  }
}
