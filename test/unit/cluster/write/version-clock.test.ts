import { expect } from "chai";
import type { Clock } from "../../../../src/core/clock.js";
import { VersionClock } from "../../../../src/cluster/write/version-clock.js";
import { ManualClock } from "../../../helpers/manual-clock.js";

/** A wall clock the test can also set backwards (ManualClock only moves forward). */
class SettableClock implements Clock {
  constructor(public now: number) {}
  nowMs(): number {
    return this.now;
  }
  monotonicMs(): number {
    return 0;
  }
}

describe("dist/version-clock", () => {
  it("follows the wall clock: the first version is wall ms x 1000", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    expect(vc.next(0)).to.equal(clock.nowMs() * 1000);
  });

  it("versions strictly increase within the same millisecond (the counter part)", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    const base = clock.nowMs() * 1000;
    const vs = Array.from({ length: 5 }, () => vc.next(0));
    expect(vs).to.deep.equal([base, base + 1, base + 2, base + 3, base + 4]);
  });

  it("jumps to the new wall time once the clock advances", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    vc.next(0);
    vc.next(0);
    clock.advance(5);
    expect(vc.next(0)).to.equal(clock.nowMs() * 1000);
    clock.advance(1_000);
    expect(vc.next(0)).to.equal(clock.nowMs() * 1000);
  });

  it("versions strictly increase over many calls while time moves irregularly", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    let prev = 0;
    for (let i = 0; i < 5_000; i++) {
      if (i % 7 === 0) clock.advance(i % 3);
      const v = vc.next(0);
      expect(v).to.be.greaterThan(prev);
      prev = v;
    }
  });

  it("stays above the key's current version, even one far in the future", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    const future = clock.nowMs() * 1000 + 10_000_000;
    expect(vc.next(future)).to.equal(future + 1);
    // ... and later versions stay above it too, for any key.
    expect(vc.next(0)).to.equal(future + 2);
  });

  it("ignores a current version below the clock", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    expect(vc.next(5)).to.equal(clock.nowMs() * 1000);
  });

  it("never goes backwards when the wall clock jumps back", () => {
    const clock = new SettableClock(1_700_000_000_000);
    const vc = new VersionClock(clock);
    const first = vc.next(0);
    expect(first).to.equal(1_700_000_000_000_000);
    clock.now -= 60_000; // NTP step back by a minute
    const second = vc.next(0);
    expect(second).to.equal(first + 1);
    const third = vc.next(0);
    expect(third).to.equal(first + 2);
    // Once wall time passes the old high-water mark, versions follow it again.
    clock.now += 120_000;
    expect(vc.next(0)).to.equal(clock.now * 1000);
  });

  it("floors a fractional wall time to whole milliseconds before scaling", () => {
    const clock = new SettableClock(1_000.9);
    expect(new VersionClock(clock).next(0)).to.equal(1_000_000);
  });

  it("observe() moves the clock past a version seen from a peer", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    const peer = clock.nowMs() * 1000 + 5_000_000;
    vc.observe(peer);
    expect(vc.next(0)).to.equal(peer + 1);
  });

  it("observe() of an older version changes nothing", () => {
    const clock = new ManualClock();
    const vc = new VersionClock(clock);
    const v1 = vc.next(0);
    vc.observe(v1 - 1_000);
    vc.observe(0);
    expect(vc.next(0)).to.equal(v1 + 1);
  });

  it("two clocks do not share state", () => {
    const clock = new ManualClock();
    const a = new VersionClock(clock);
    const b = new VersionClock(clock);
    a.observe(clock.nowMs() * 1000 + 999_999);
    expect(b.next(0)).to.equal(clock.nowMs() * 1000);
  });

  it("versions stay below 2^53 for realistic wall times (JSON-safe)", () => {
    const clock = new SettableClock(Date.UTC(2200, 0, 1));
    const v = new VersionClock(clock).next(0);
    expect(Number.isSafeInteger(v)).to.equal(true);
  });

  describe("nextInLaterMs (a PUT or DELETE replacing a counter)", () => {
    it("stamps in a later millisecond than the key's version and the wall clock, above every earlier version", () => {
      const clock = new ManualClock();
      const vc = new VersionClock(clock);
      const wall = clock.nowMs() * 1000;
      expect(vc.nextInLaterMs(wall + 5)).to.equal(wall + 1000);
      expect(vc.nextInLaterMs(wall + 7), "a second one in the same ms: a millisecond past the clock's last one (peers stamp in it)").to.equal(wall + 2000);
      expect(vc.nextInLaterMs(wall + 9), "a third: capped two past the wall clock").to.equal(wall + 2001);
      expect(vc.next(0), "later plain versions stay above").to.equal(wall + 2002);
    });

    it("does not run ahead of the wall clock: 30,000 replacements, 25 a millisecond, stay within 2 ms of it (they drifted 28.8 s, a review)", () => {
      const clock = new ManualClock();
      const vc = new VersionClock(clock);
      let worstAheadMs = 0;
      let key = vc.next(0);
      for (let i = 0; i < 30_000; i++) {
        if (i % 25 === 0) clock.advance(1);
        // Each key is a counter just incremented (stamped by next()), then replaced.
        key = vc.next(key);
        const v = vc.nextInLaterMs(key);
        worstAheadMs = Math.max(worstAheadMs, Math.floor(v / 1000) - clock.nowMs());
        key = v;
      }
      expect(worstAheadMs).to.be.at.most(2);
    });

    it("a key stamped further ahead (a peer's clock ahead) is outranked, not jumped past", () => {
      const clock = new ManualClock();
      const vc = new VersionClock(clock);
      const ahead = (clock.nowMs() + 500) * 1000 + 3;
      expect(vc.nextInLaterMs(ahead)).to.equal(ahead + 1);
    });
  });
});
