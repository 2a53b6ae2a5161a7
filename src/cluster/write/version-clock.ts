// Versions for last-write-wins: a hybrid clock of wall-clock milliseconds x 1000 plus a
// counter. It never goes backwards, stays ahead of every version it has seen for a key, and
// survives restarts because it follows the wall clock.
import type { Clock } from "../../core/clock.js";

export class VersionClock {
  private last = 0;

  constructor(private readonly clock: Clock) {}

  /** A version above `current` (the key's present version, 0 when none) and above every earlier one. */
  next(current: number): number {
    const wall = Math.floor(this.clock.nowMs()) * 1000;
    this.last = Math.max(this.last + 1, wall, current + 1);
    return this.last;
  }

  /**
   * A version in a later millisecond than `current`, every earlier version and the wall clock's
   * now: for a PUT or DELETE that replaces a counter. A merge of counter copies is stamped one
   * unit above them (counter-merge.ts), so a write stamped one unit above the copies it saw, or in
   * the same millisecond as a copy it did not see, tied with or lost to a merge of older copies,
   * and an acknowledged DELETE lost to them (reviews, sim/counters seeds 4471 and 5102). In a
   * later millisecond it outranks every merge of copies stamped up to now (1000 merges of merges
   * within one millisecond would be needed to reach it). The later millisecond is counted from
   * the wall clock and the key's version, never from the clock's own last version, and at most
   * two past the wall clock: counted from the last version, every replacement moved the clock a
   * millisecond ahead, and 30,000 counter resets in 1.2 s left versions, last_updated and TTLs
   * 28.8 s in the future (a review). A key whose version is further ahead is only outranked.
   */
  nextInLaterMs(current: number): number {
    const wallMs = Math.floor(this.clock.nowMs());
    const laterMs = Math.max(wallMs, Math.min(Math.floor(current / 1000), wallMs + 1)) + 1;
    this.last = Math.max(this.last + 1, laterMs * 1000, current + 1);
    return this.last;
  }

  /** Moves the clock past a version seen from a peer, so local versions stay ahead of it. */
  observe(version: number): void {
    if (version > this.last) this.last = version;
  }
}
