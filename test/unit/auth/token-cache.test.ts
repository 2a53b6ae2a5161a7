// The static-token cache in front of the constant-time table walk: a matched token is served by
// digest afterwards, failures are never cached, entries expire and the cache is bounded.
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { BasicVerifier } from "../../../src/auth/basic-auth.js";
import { buildChain } from "../../../src/auth/chain.js";
import { CertIdentityTable } from "../../../src/auth/client-cert.js";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";
import { TokenCache } from "../../../src/auth/token-cache.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";

/** Counts the lookups by digest (the path a request takes when its connection has nothing remembered). */
class CountingCache extends TokenCache {
  byDigest = 0;
  override get(key: string) {
    this.byDigest++;
    return super.get(key);
  }
}

function fixture(limits = { ttlMs: 60_000, entriesMax: 8 }) {
  const clock = new ManualClock();
  const walked = { compares: 0 };
  const tokens = new StaticTokenTable(
    [
      { id: "reader", token: "read-token", scopes: ["read"] },
      { id: "writer", token: "write-token", scopes: ["read", "write"] },
    ],
    (a, b) => (walked.compares++, timingSafeEqual(a, b)),
  );
  const cache = new CountingCache({ clock, limits });
  const auth = buildChain({ tokens, basic: new BasicVerifier([], { clock }), certs: new CertIdentityTable([]), oidc: undefined, allowAnonymous: false, allowBasicWithoutTls: false, tokenCache: cache });
  /** One request; `socket` is the connection it arrives on (a new one each call unless given). */
  const call = (token: string, socket: object = {}) => auth.authenticate({ headers: { authorization: `Bearer ${token}` }, socket } as unknown as IncomingMessage);
  return { clock, walked, cache, call };
}

describe("auth/token-cache TokenCache in the chain", () => {
  it("walks the whole table on the first request of a token and serves the same identity from the cache after", () => {
    const { walked, call } = fixture();
    expect(call("write-token")).to.include({ id: "writer" });
    expect(walked.compares).to.equal(2);
    expect(call("write-token")).to.include({ id: "writer" });
    expect(call("read-token")).to.include({ id: "reader" });
    expect(call("read-token")).to.include({ id: "reader" });
    expect(walked.compares).to.equal(4);
  });

  it("never caches a token that matched nothing: every attempt walks the table and is refused", () => {
    const { walked, cache, call } = fixture();
    for (let i = 0; i < 3; i++) expect(() => call("wrong-token")).to.throw(CacheError).with.property("code", "UNAUTHORIZED");
    expect(walked.compares).to.equal(6);
    expect(cache.size).to.equal(0);
  });

  it("forgets a token after its TTL: the next request walks the table again", () => {
    const { clock, walked, call } = fixture({ ttlMs: 1000, entriesMax: 8 });
    call("read-token");
    clock.advance(999);
    call("read-token");
    expect(walked.compares).to.equal(2);
    clock.advance(1);
    call("read-token");
    expect(walked.compares).to.equal(4);
  });

  it("holds at most entriesMax tokens, dropping the oldest", () => {
    const { walked, cache, call } = fixture({ ttlMs: 60_000, entriesMax: 1 });
    call("read-token");
    call("write-token");
    expect(cache.size).to.equal(1);
    call("write-token");
    expect(walked.compares).to.equal(4);
    call("read-token");
    expect(walked.compares).to.equal(6);
  });

  it("serves a connection that sends the same Authorization header again without a digest, and only that header", () => {
    const { walked, cache, call } = fixture();
    const conn = {};
    expect(call("write-token", conn)).to.include({ id: "writer" });
    expect(cache.byDigest).to.equal(1);
    expect(call("write-token", conn)).to.include({ id: "writer" });
    expect(call("write-token", conn)).to.include({ id: "writer" });
    expect(cache.byDigest).to.equal(1);
    // Another header on the same connection goes the whole way: a wrong token is refused...
    expect(() => call("wrong-token", conn)).to.throw(CacheError).with.property("code", "UNAUTHORIZED");
    // ...and another valid one is that token's identity, never the connection's earlier one.
    expect(call("read-token", conn)).to.include({ id: "reader" });
    expect(call("read-token", conn)).to.include({ id: "reader" });
    expect(call("write-token", conn)).to.include({ id: "writer" });
    // The same token on another connection is found by digest.
    expect(call("write-token", {})).to.include({ id: "writer" });
    expect(cache.byDigest, "another connection has no memo of its own yet").to.equal(5);
    expect(walked.compares).to.equal(6);
  });

  it("lets a connection's remembered token lapse with the cache entry (TTL and eviction)", () => {
    const { clock, walked, call } = fixture({ ttlMs: 1000, entriesMax: 1 });
    const conn = {};
    call("read-token", conn);
    clock.advance(1000);
    call("read-token", conn);
    expect(walked.compares).to.equal(4);
    call("write-token", {});
    call("read-token", conn);
    expect(walked.compares).to.equal(8);
  });
});
