// Rate limits per identity, on a ManualClock: the token bucket's refill and burst, the 429 with
// Retry-After and RateLimit-* headers, identities apart from each other, anonymous callers per
// address, a policy entry's own limit (0: unlimited), the cluster scope dividing by the alive
// members, batch debt, the bucket cap, and the authenticator wrapper (limited after
// authentication; unauthenticated requests are never counted).
import type { IncomingMessage } from "node:http";
import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { anonymousIdentity, makeIdentity, openAuthenticator, rateLimited, RateLimiter, type Identity } from "../../../src/auth/index.js";
import { charge, fullBucket, take } from "../../../src/auth/token-bucket.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const alice = makeIdentity("token", "alice", ["read"]);
const bob = makeIdentity("token", "bob", ["read"]);

function limiter(clock: ManualClock, ratePerS: number, burst: number, extra: { scope?: "node" | "cluster"; alive?: () => number; bucketsMax?: number; ipv6PrefixBits?: number } = {}): RateLimiter {
  return new RateLimiter({ clock, settings: { ratePerS, burst, scope: extra.scope ?? "node" }, aliveMembers: extra.alive ?? (() => 1), bucketsMax: extra.bucketsMax, ipv6PrefixBits: extra.ipv6PrefixBits });
}

function refused(fn: () => void): CacheError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CacheError) return err;
    throw err;
  }
  throw new Error("expected a 429");
}

/** Requests admitted out of `n` tries now. */
function admitted(l: RateLimiter, who: Identity, n: number, address = "10.0.0.1"): number {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    try {
      l.admit(who, address);
      ok++;
    } catch {
      // refused
    }
  }
  return ok;
}

describe("auth/token-bucket", () => {
  it("refills at the rate up to the burst, and says how long until a cost fits", () => {
    const b = fullBucket(2, 0);
    expect(take(b, 1, 0, 10, 2)).to.equal(0);
    expect(take(b, 1, 0, 10, 2)).to.equal(0);
    expect(take(b, 1, 0, 10, 2), "empty: 100 ms for one token at 10/s").to.equal(100);
    expect(take(b, 1, 50, 10, 2)).to.equal(50);
    expect(take(b, 1, 100, 10, 2)).to.equal(0);
    expect(take(b, 1, 10_000, 10, 2)).to.equal(0);
    expect(b.tokens, "never above the burst").to.equal(1);
  });

  it("a charge may leave the bucket in debt, which later requests wait out", () => {
    const b = fullBucket(2, 0);
    charge(b, 5, 0, 10, 2);
    expect(b.tokens).to.equal(-3);
    expect(take(b, 1, 0, 10, 2)).to.equal(400);
  });
});

describe("auth/rate-limiter", () => {
  it("admits the burst at once, then the rate; the 429 carries Retry-After and RateLimit-* headers", () => {
    const clock = new ManualClock();
    const l = limiter(clock, 2, 4);
    expect(admitted(l, alice, 10)).to.equal(4);
    const e = refused(() => l.admit(alice, "10.0.0.1"));
    expect(e.code).to.equal("TOO_MANY_REQUESTS");
    expect(e.status).to.equal(429);
    expect(e.retryAfterS).to.equal(1);
    expect(e.headers).to.deep.equal({ "RateLimit-Limit": "4", "RateLimit-Remaining": "0", "RateLimit-Reset": "1" });
    expect(e.details).to.deep.equal({ limit_per_second: 2, burst: 4, retry_after_ms: 500 });
    clock.advance(500);
    expect(admitted(l, alice, 10), "one token after 500 ms at 2/s").to.equal(1);
    clock.advance(1000);
    expect(admitted(l, alice, 10)).to.equal(2);
  });

  it("identities have their own buckets; anonymous callers are limited per address", () => {
    const clock = new ManualClock();
    const l = limiter(clock, 1, 2);
    expect(admitted(l, alice, 5)).to.equal(2);
    expect(admitted(l, bob, 5), "bob is unaffected by alice").to.equal(2);
    const anon = anonymousIdentity();
    expect(admitted(l, anon, 5, "10.0.0.7")).to.equal(2);
    expect(admitted(l, anon, 5, "10.0.0.8"), "another address, another bucket").to.equal(2);
    expect(l.size).to.equal(4);
  });

  it("a policy entry's own rate_limit overrides the node-wide one; 0 is unlimited; entries are limited even with SERVICE_RATE_LIMIT off", () => {
    const clock = new ManualClock();
    const l = limiter(clock, 100, 200);
    expect(admitted(l, makeIdentity("token", "slow", ["read"], { ratePerS: 1, burst: 3 }), 10)).to.equal(3);
    expect(admitted(l, makeIdentity("token", "free", ["read"], { ratePerS: 0 }), 1000)).to.equal(1000);
    const off = new RateLimiter({ clock, settings: undefined, aliveMembers: () => 1 });
    expect(admitted(off, alice, 1000), "no limit at all").to.equal(1000);
    expect(admitted(off, makeIdentity("token", "slow", ["read"], { ratePerS: 2 }), 10), "default burst twice the rate").to.equal(4);
    expect(off.size).to.equal(1);
  });

  it("the cluster scope divides the rate and the burst by the alive members", () => {
    const clock = new ManualClock();
    let alive = 4;
    const l = limiter(clock, 8, 16, { scope: "cluster", alive: () => alive });
    expect(admitted(l, alice, 100)).to.equal(4);
    clock.advance(1000);
    expect(admitted(l, alice, 100), "2 per second per node").to.equal(2);
    alive = 1;
    clock.advance(2000);
    expect(admitted(l, alice, 100)).to.equal(16);
  });

  it("chargeMore takes the rest of a batch's cost after the fact, leaving debt", () => {
    const clock = new ManualClock();
    const l = limiter(clock, 10, 10);
    l.admit(alice, undefined);
    l.chargeMore(alice, undefined, 99);
    const e = refused(() => l.admit(alice, undefined));
    expect(e.retryAfterS, "90 tokens of debt plus one at 10/s").to.equal(10);
  });

  it("keeps at most bucketsMax buckets, dropping a full one first", () => {
    const clock = new ManualClock();
    const l = limiter(clock, 1, 1, { bucketsMax: 3 });
    l.admit(makeIdentity("token", "a", []), undefined);
    l.admit(makeIdentity("token", "b", []), undefined);
    clock.advance(5000);
    l.admit(makeIdentity("token", "c", []), undefined);
    l.admit(makeIdentity("token", "d", []), undefined);
    expect(l.size).to.equal(3);
    expect(admitted(l, makeIdentity("token", "c", []), 1), "c's empty bucket was kept (a full one went)").to.equal(0);
  });

  it("rateLimited(): the limit applies after authentication, to the identity it resolved", async () => {
    const clock = new ManualClock();
    const l = limiter(clock, 1, 1);
    const auth = rateLimited(openAuthenticator(), l);
    const req = { socket: { remoteAddress: "10.1.1.1" }, headers: {} } as unknown as IncomingMessage;
    expect(auth.authenticate(req)).to.include({ id: "anonymous" });
    expect(() => auth.authenticate(req)).to.throw(CacheError).with.property("code", "TOO_MANY_REQUESTS");
    const other = { socket: { remoteAddress: "10.1.1.2" }, headers: {} } as unknown as IncomingMessage;
    expect(auth.authenticate(other)).to.include({ id: "anonymous" });
  });

  it("anonymous callers share a budget per IPv4 address, or per IPv6 /64 with SERVICE_AUTH_IPV6_PREFIX=64", () => {
    const clock = new ManualClock();
    const l = limiter(clock, 1, 1, { ipv6PrefixBits: 64 });
    const auth = rateLimited(openAuthenticator(), l);
    const at = (remoteAddress: string) => ({ socket: { remoteAddress }, headers: {} }) as unknown as IncomingMessage;
    expect(auth.authenticate(at("2001:db8:1:2::1"))).to.include({ id: "anonymous" });
    expect(() => auth.authenticate(at("2001:db8:1:2::2")), "same /64").to.throw(CacheError).with.property("code", "TOO_MANY_REQUESTS");
    expect(auth.authenticate(at("2001:db8:1:3::1")), "another /64").to.include({ id: "anonymous" });
    expect(auth.authenticate(at("10.1.1.3"))).to.include({ id: "anonymous" });
    expect(() => auth.authenticate(at("::ffff:10.1.1.3")), "mapped form of the same IPv4 address").to.throw(CacheError).with.property("code", "TOO_MANY_REQUESTS");
    const perAddress = rateLimited(openAuthenticator(), limiter(clock, 1, 1));
    expect(perAddress.authenticate(at("2001:db8:9:9::1"))).to.include({ id: "anonymous" });
    expect(perAddress.authenticate(at("2001:db8:9:9::2")), "by default each IPv6 address has its own").to.include({ id: "anonymous" });
  });
});
