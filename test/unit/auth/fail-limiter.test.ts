import { expect } from "chai";
import { AuthFailLimiter } from "../../../src/auth/fail-limiter.js";
import { AUTH_SUSPECT_MS } from "../../../src/auth/auth-limits.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const unauthorized = () => new CacheError("UNAUTHORIZED", "invalid username or password");

/** The code each of `n` failures of `address` is answered with. */
function failures(limiter: AuthFailLimiter, address: string, n: number): string[] {
  return Array.from({ length: n }, () => limiter.fail(address, unauthorized()).code);
}

describe("auth/fail-limiter", () => {
  it("answers the first `limit` failures of a second 401 and the rest 429 with Retry-After and details.limit_per_second", () => {
    const clock = new ManualClock();
    const limiter = new AuthFailLimiter({ clock, limitPerS: 3 });
    expect(failures(limiter, "10.0.0.1", 5)).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS", "TOO_MANY_REQUESTS"]);
    clock.advance(400);
    const e = limiter.fail("10.0.0.1", unauthorized());
    expect(e.status).to.equal(429);
    expect(e.retryAfterS, "600 ms left in the window, rounded up").to.equal(1);
    expect(e.details).to.deep.equal({ limit_per_second: 3 });
  });

  it("counts each address on its own", () => {
    const limiter = new AuthFailLimiter({ clock: new ManualClock(), limitPerS: 2 });
    expect(failures(limiter, "a", 3)).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
    expect(failures(limiter, "b", 2)).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED"]);
  });

  it("starts a new window once a second has passed since the window began", () => {
    const clock = new ManualClock();
    const limiter = new AuthFailLimiter({ clock, limitPerS: 2 });
    expect(failures(limiter, "a", 3)).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
    clock.advance(999);
    expect(failures(limiter, "a", 1)).to.deep.equal(["TOO_MANY_REQUESTS"]);
    clock.advance(1);
    expect(failures(limiter, "a", 3)).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
  });

  it("refuses a new password check with 429 once failures and checks under way use up the limit; an ended check frees its place", () => {
    const clock = new ManualClock();
    const limiter = new AuthFailLimiter({ clock, limitPerS: 2 });
    limiter.beginCheck("a");
    limiter.beginCheck("a");
    expect(() => limiter.beginCheck("a")).to.throw(CacheError).with.property("code", "TOO_MANY_REQUESTS");
    limiter.endCheck("a");
    limiter.beginCheck("a");
    limiter.endCheck("a");
    limiter.endCheck("a");
    limiter.fail("a", unauthorized());
    limiter.fail("a", unauthorized());
    expect(() => limiter.beginCheck("a")).to.throw(CacheError).with.property("code", "TOO_MANY_REQUESTS");
    clock.advance(1000);
    expect(() => limiter.beginCheck("a"), "a new window").to.not.throw();
  });

  it("a check under way across a window boundary still counts in the next window", () => {
    const clock = new ManualClock();
    const limiter = new AuthFailLimiter({ clock, limitPerS: 1 });
    limiter.beginCheck("a");
    clock.advance(1500);
    expect(() => limiter.beginCheck("a")).to.throw(CacheError);
    limiter.endCheck("a");
    expect(() => limiter.beginCheck("a")).to.not.throw();
  });

  it("suspect: an address with a password check under way, or a failure in the last AUTH_SUSPECT_MS, across windows", () => {
    const clock = new ManualClock();
    const l = new AuthFailLimiter({ clock, limitPerS: 10 });
    expect(l.suspect("10.0.0.1"), "never seen").to.equal(false);
    l.beginCheck("10.0.0.1");
    expect(l.suspect("10.0.0.1"), "a check under way").to.equal(true);
    expect(l.suspect("10.0.0.2"), "another address").to.equal(false);
    l.endCheck("10.0.0.1");
    expect(l.suspect("10.0.0.1"), "the check ended without a failure").to.equal(false);
    l.fail("10.0.0.1", new CacheError("UNAUTHORIZED", "no"));
    clock.advance(AUTH_SUSPECT_MS - 1);
    expect(l.suspect("10.0.0.1"), "failed within AUTH_SUSPECT_MS").to.equal(true);
    clock.advance(1);
    expect(l.suspect("10.0.0.1"), "the failure is AUTH_SUSPECT_MS old").to.equal(false);
  });

  it("limit 0 turns it off: every failure stays 401 and every check is admitted", () => {
    const limiter = new AuthFailLimiter({ clock: new ManualClock(), limitPerS: 0 });
    expect(failures(limiter, "a", 50).every((c) => c === "UNAUTHORIZED")).to.equal(true);
    for (let i = 0; i < 50; i++) limiter.beginCheck("a");
    expect(limiter.size).to.equal(0);
  });

  it("tracks at most addressesMax addresses, dropping the least recently used first", () => {
    const limiter = new AuthFailLimiter({ clock: new ManualClock(), limitPerS: 1, addressesMax: 3 });
    for (const a of ["a", "b", "c"]) limiter.fail(a, unauthorized());
    limiter.fail("a", unauthorized()); // a is now the most recent (and over its limit)
    limiter.fail("d", unauthorized()); // drops b
    expect(limiter.size).to.equal(3);
    expect(limiter.fail("a", unauthorized()).code, "a is still tracked").to.equal("TOO_MANY_REQUESTS");
    expect(limiter.fail("b", unauthorized()).code, "b was dropped: a fresh window").to.equal("UNAUTHORIZED");
  });
});
