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
   * now (up to two past the wall clock): for a PUT or DELETE that replaces a counter. A merge of counter copies is stamped one
   * unit above them (counter-merge.ts), so a write stamped one unit above the copies it saw, or in
   * the same millisecond as a copy it did not see, tied with or lost to a merge of older copies,
   * and an acknowledged DELETE lost to them (reviews, sim/counters seeds 4471 and 5102). In a
   * later millisecond it outranks every merge of copies stamped up to now (1000 merges of merges
   * within one millisecond would be needed to reach it). The later millisecond is counted from
   * the wall clock, the key's version and the clock's last version, each capped one past the wall
   * clock, so at most two past it: uncapped, every replacement moved the clock a millisecond
   * ahead, and 30,000 counter resets in 1.2 s left versions, last_updated and TTLs 28.8 s in the
   * future; without the last version, a replacement landed in the millisecond peers had started
   * stamping in after an earlier one, and tied (two reviews). A key whose version is further ahead
   * is only outranked; so, under a sustained run of replacements holding the clock two ahead, a
   * merge can tie again (docs/design.md, counters).
   */
  nextInLaterMs(current: number): number {
    const wallMs = Math.floor(this.clock.nowMs());
    // The latest of the wall clock, the key and the clock's last version (peers stamp in that
    // millisecond once they saw it: a review), capped one past the wall clock.
    const laterMs = Math.min(Math.max(wallMs, Math.floor(current / 1000), Math.floor(this.last / 1000)), wallMs + 1) + 1;
    this.last = Math.max(this.last + 1, laterMs * 1000, current + 1);
    return this.last;
  }

  /** Moves the clock past a version seen from a peer, so local versions stay ahead of it. */
  observe(version: number): void {
    if (version > this.last) this.last = version;
  }
}
