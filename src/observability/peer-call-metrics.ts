// Peer calls as an operator sees them: dist.peer.call.duration (seconds) and dist.peer.failures,
// per method (the Connect method: Set, Forward, Gossip, ...) and peer (node id). Recorded once per
// call or exchange frame, which carry batches, never once per client request. A peer removed from
// the membership (by hand, or it left) takes its series with it, so /metrics does not keep a set
// per method for every node that ever left.
import { Histogram, KeyedHistogram } from "./histogram.js";

export class PeerCallMetrics {
  readonly durations = new KeyedHistogram(new Histogram());
  private readonly failuresByKey = new Map<string, { method: string; peer: string; count: number }>();
  private departed: (peer: string) => boolean = () => false;

  /** Records one finished call; a call to a departed peer that ends late starts no series. */
  record(method: string, peer: string, seconds: number, ok: boolean): void {
    const key = `${method}\u0000${peer}`;
    const f = this.failuresByKey.get(key);
    if (f === undefined && !this.durations.has(key) && this.departed(peer)) return;
    this.durations.series(key, () => ({ method, peer })).record(seconds);
    if (ok) return;
    if (f) f.count++;
    else this.failuresByKey.set(key, { method, peer, count: 1 });
  }

  /** Failed calls per method and peer. */
  failures(): ReadonlyArray<{ readonly method: string; readonly peer: string; readonly count: number }> {
    return [...this.failuresByKey.values()];
  }

  /**
   * Takes `departed` as the membership's word on which peers left, and forgets their series now;
   * call `forgetDeparted` again whenever the membership changes. A peer that comes back starts new
   * series (its counters reset, as Prometheus expects of a restarted target).
   */
  followDepartures(departed: (peer: string) => boolean): void {
    this.departed = departed;
    this.forgetDeparted();
  }

  /** Forgets every series of a departed peer. */
  forgetDeparted(): void {
    this.durations.removeWhere((a) => this.departed(String(a.peer)));
    for (const [key, f] of this.failuresByKey) if (this.departed(f.peer)) this.failuresByKey.delete(key);
  }
}
