// Where this node's wall clock stands against the cluster's. Versions are wall-clock based
// (version-clock.ts), so a node whose clock runs ahead stamps writes that beat later writes of
// correct nodes: the chaos suite saw an acknowledged write lost to an earlier, failed delete
// stamped on a node 30 s ahead. Every direct probe answer carries the peer's wall clock; this
// estimates each peer's offset (to within half the round trip), takes the median clock of the
// nodes with fresh samples (this node counts as offset 0) and, while this node is further from it
// than CLOCK_LIMITS.offsetMaxMs, refuses to stamp writes: clients get 503 UNAVAILABLE and go to
// another node. With an even count the middle value nearer this node's clock is the median, so
// in a cluster of two neither node is ever refused (nothing says which clock is wrong).
import { CLOCK_LIMITS } from "../../core/limits.js";
import { CacheError } from "../../core/errors.js";
import type { Clock } from "../../core/clock.js";
import type { Metrics } from "../../observability/index.js";

export interface ClockLimits {
  readonly offsetMaxMs: number;
  readonly sampleTtlMs: number;
}

interface Sample {
  /** Peer clock minus this node's clock, ms. */
  readonly offsetMs: number;
  /** Local wall-clock ms at which the sample was taken. */
  readonly atMs: number;
}

export class ClockOffsets {
  private readonly samples = new Map<string, Sample>();
  /** selfOffsetMs() as last computed, and until when it holds (the next sample expiry). */
  private cached: { readonly offsetMs: number; readonly validUntilMs: number } | undefined;

  constructor(private readonly deps: { clock: Clock; metrics: Metrics; limits?: ClockLimits }) {}

  private get limits(): ClockLimits {
    return this.deps.limits ?? CLOCK_LIMITS;
  }

  /**
   * A probe of `peerId` sent at `sentMs` and answered at `answeredMs` (both local wall clock),
   * with the peer's wall clock `peerUnixMs` (0: a peer that does not send it). A sample whose
   * round trip exceeds the offset limit cannot tell a skew from a slow answer, and is dropped.
   */
  sample(peerId: string, sentMs: number, answeredMs: number, peerUnixMs: number): void {
    if (!(peerUnixMs > 0)) return;
    const rtt = answeredMs - sentMs;
    if (rtt < 0 || rtt > this.limits.offsetMaxMs) return;
    this.samples.set(peerId, { offsetMs: peerUnixMs - (sentMs + answeredMs) / 2, atMs: answeredMs });
    this.cached = undefined;
    this.deps.metrics.set("dist.clock.offset_ns", Math.round(this.selfOffsetMs() * 1e6));
  }

  /** Forgets a peer that left or was removed. */
  forget(peerId: string): void {
    if (this.samples.delete(peerId)) this.cached = undefined;
  }

  /** Forgets every peer not in `ids` (called with the members after each membership change). */
  retain(ids: ReadonlySet<string>): void {
    for (const id of [...this.samples.keys()]) if (!ids.has(id)) this.forget(id);
  }

  /**
   * This node's clock minus the cluster's median clock, ms (positive: this node runs ahead).
   * Computed again only after a sample arrives, a peer is forgotten or a sample expires: every
   * coordinated write asks.
   */
  selfOffsetMs(): number {
    const now = this.deps.clock.nowMs();
    if (this.cached !== undefined && now <= this.cached.validUntilMs) return this.cached.offsetMs;
    const clocks = [0];
    let validUntilMs = Infinity;
    for (const [id, s] of this.samples) {
      if (now - s.atMs > this.limits.sampleTtlMs) this.samples.delete(id);
      else {
        clocks.push(s.offsetMs);
        validUntilMs = Math.min(validUntilMs, s.atMs + this.limits.sampleTtlMs);
      }
    }
    clocks.sort((a, b) => a - b);
    const mid = clocks.length >> 1;
    const median = clocks.length % 2 === 1 ? (clocks[mid] as number) : nearerZero(clocks[mid - 1] as number, clocks[mid] as number);
    this.cached = { offsetMs: -median, validUntilMs };
    return -median;
  }

  /** Throws 503 UNAVAILABLE while this node's clock is too far from the cluster's. */
  checkCanStamp(): void {
    const offset = this.selfOffsetMs();
    if (Math.abs(offset) <= this.limits.offsetMaxMs) return;
    this.deps.metrics.inc("dist.clock.refused_writes");
    throw new CacheError(
      "UNAVAILABLE",
      `this node's clock is ${(offset / 1000).toFixed(1)} s ${offset > 0 ? "ahead of" : "behind"} the cluster's median clock (limit ${this.limits.offsetMaxMs} ms): it stamps no writes until its clock is corrected; send the write to another node`,
      { clock_offset_ms: Math.round(offset), limit_ms: this.limits.offsetMaxMs },
    );
  }
}

function nearerZero(a: number, b: number): number {
  return Math.abs(a) <= Math.abs(b) ? a : b;
}
