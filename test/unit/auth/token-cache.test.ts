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
  const cache = new TokenCache({ clock, limits });
  const auth = buildChain({ tokens, basic: new BasicVerifier([], { clock }), certs: new CertIdentityTable([]), oidc: undefined, allowAnonymous: false, allowBasicWithoutTls: false, tokenCache: cache });
  const call = (token: string) => auth.authenticate({ headers: { authorization: `Bearer ${token}` }, socket: {} } as unknown as IncomingMessage);
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
});
