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

  /** Moves the clock past a version seen from a peer, so local versions stay ahead of it. */
  observe(version: number): void {
    if (version > this.last) this.last = version;
  }
}
