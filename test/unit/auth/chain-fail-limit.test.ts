// The chain with its failure limiter: failed authentications per client address past the limit
// are 429, and Basic requests that would start a bcrypt check from an address with no failure
// left are refused before the check runs.
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { BasicVerifier, type PasswordCompare } from "../../../src/auth/basic-auth.js";
import { buildChain } from "../../../src/auth/chain.js";
import { CertIdentityTable } from "../../../src/auth/client-cert.js";
import { AuthFailLimiter } from "../../../src/auth/fail-limiter.js";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { basicHeader, resolve } from "./chain-helpers.js";

const LIMIT = 3;

function setup(compare?: PasswordCompare, ipv6PrefixBits?: number) {
  const clock = new ManualClock();
  const checks: string[] = [];
  const counting: PasswordCompare =
    compare ??
    (async (password) => {
      checks.push(password);
      return password === "right";
    });
  const auth = buildChain({
    tokens: new StaticTokenTable([{ id: "t", token: "good-token", scopes: ["read"] }]),
    basic: new BasicVerifier([{ username: "alice", passwordHash: "$2b$04$unused", scopes: ["read"] }], { clock, compare: counting }),
    certs: new CertIdentityTable([]),
    oidc: undefined,
    allowAnonymous: false,
    allowBasicWithoutTls: true,
    limiter: new AuthFailLimiter({ clock, limitPerS: LIMIT, ipv6PrefixBits }),
  });
  return { auth, clock, checks };
}

const from = (address: string, authorization?: string) =>
  ({ headers: authorization === undefined ? {} : { authorization }, socket: { remoteAddress: address } }) as unknown as IncomingMessage;

describe("auth/chain with the failure limiter", () => {
  it("wrong Basic passwords: the first LIMIT of a second are 401 after a check, the rest 429 without one", async () => {
    const { auth, checks } = setup();
    const codes = [];
    for (let i = 0; i < 6; i++) codes.push(await resolve(auth, from("10.0.0.1", basicHeader("alice", `wrong-${i}`))));
    expect(codes).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS", "TOO_MANY_REQUESTS", "TOO_MANY_REQUESTS"]);
    expect(checks).to.deep.equal(["wrong-0", "wrong-1", "wrong-2"]);
  });

  it("concurrent wrong passwords start at most LIMIT checks: checks under way count against the limit", async () => {
    const { auth, checks } = setup();
    const codes = await Promise.all(Array.from({ length: 8 }, (_, i) => resolve(auth, from("10.0.0.1", basicHeader("alice", `w${i}`)))));
    expect(checks).to.have.length(LIMIT);
    expect(codes.filter((c) => c === "UNAUTHORIZED")).to.have.length(LIMIT);
    expect(codes.filter((c) => c === "TOO_MANY_REQUESTS")).to.have.length(8 - LIMIT);
  });

  it("the 429 carries Retry-After in seconds until the window ends; a second later the right password is checked and served", async () => {
    const { auth, clock } = setup();
    for (let i = 0; i < LIMIT; i++) await resolve(auth, from("10.0.0.1", basicHeader("alice", "wrong")));
    const refused = await Promise.resolve()
      .then(() => auth.authenticate(from("10.0.0.1", basicHeader("alice", "right"))))
      .catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(CacheError).and.include({ code: "TOO_MANY_REQUESTS", retryAfterS: 1 });
    clock.advance(1000);
    expect(await resolve(auth, from("10.0.0.1", basicHeader("alice", "right")))).to.include({ id: "alice" });
  });

  it("a cached Basic success, a valid token and other addresses still pass while an address is limited", async () => {
    const { auth, checks } = setup();
    expect(await resolve(auth, from("10.0.0.1", basicHeader("alice", "right")))).to.include({ id: "alice" });
    for (let i = 0; i < LIMIT + 2; i++) await resolve(auth, from("10.0.0.1", basicHeader("alice", "wrong")));
    const before = checks.length;
    expect(await resolve(auth, from("10.0.0.1", basicHeader("alice", "right"))), "cached success").to.include({ id: "alice" });
    expect(checks.length, "no new check for the cached credential").to.equal(before);
    expect(await resolve(auth, from("10.0.0.1", "Bearer good-token"))).to.include({ id: "t" });
    expect(await resolve(auth, from("10.0.0.2", basicHeader("alice", "wrong")))).to.equal("UNAUTHORIZED");
  });

  it("wrong bearer tokens and missing credentials count as failures too", async () => {
    const { auth } = setup();
    const codes = [];
    for (let i = 0; i < LIMIT; i++) codes.push(await resolve(auth, from("10.0.0.9", "Bearer nope")));
    codes.push(await resolve(auth, from("10.0.0.9")));
    expect(codes).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
  });

  it("tells the password check whether its client is suspect: a check from an address with another check under way or a recent failure is, a fresh address's is not", async () => {
    const lanes: string[] = [];
    const { auth } = setup(async (password, _hash, suspect) => {
      lanes.push(`${password}:${suspect === true ? "suspect" : "clean"}`);
      return password === "right";
    });
    await Promise.all([resolve(auth, from("10.0.0.1", basicHeader("alice", "w1"))), resolve(auth, from("10.0.0.1", basicHeader("alice", "w2")))]);
    await resolve(auth, from("10.0.0.1", basicHeader("alice", "w3")));
    expect(await resolve(auth, from("10.0.0.2", basicHeader("alice", "right")))).to.include({ id: "alice" });
    expect(lanes).to.deep.equal(["w1:clean", "w2:suspect", "w3:suspect", "right:clean"]);
  });

  it("with SERVICE_AUTH_IPV6_PREFIX=64, IPv6 clients count by their /64: fresh addresses of one /64 share its failures and are suspect together; another /64 is not", async () => {
    const lanes: string[] = [];
    const { auth } = setup(async (password, _hash, suspect) => {
      lanes.push(`${password}:${suspect === true ? "suspect" : "clean"}`);
      return password === "right";
    }, 64);
    const codes = [];
    for (let i = 1; i <= LIMIT + 1; i++) codes.push(await resolve(auth, from(`2001:db8:1:2::${i.toString(16)}`, basicHeader("alice", `w${i}`))));
    expect(codes).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
    expect(lanes.slice(1), "every address after the first one of the /64 is suspect").to.deep.equal(["w2:suspect", "w3:suspect"]);
    expect(await resolve(auth, from("::ffff:10.0.0.7", basicHeader("alice", "right")))).to.include({ id: "alice" });
    expect(await resolve(auth, from("2001:db8:1:3::1", basicHeader("alice", "w9")))).to.equal("UNAUTHORIZED");
    expect(lanes.slice(3)).to.deep.equal(["right:clean", "w9:clean"]);
  });

  it("by default each IPv6 address counts alone: one host's wrong passwords do not lock out its subnet", async () => {
    const { auth } = setup();
    for (let i = 0; i < LIMIT + 1; i++) await resolve(auth, from("2001:db8:1:2::1", basicHeader("alice", `w${i}`)));
    expect(await resolve(auth, from("2001:db8:1:2::1", basicHeader("alice", "right")))).to.equal("TOO_MANY_REQUESTS");
    expect(await resolve(auth, from("2001:db8:1:2::2", basicHeader("alice", "right")))).to.include({ id: "alice" });
  });

  it("a failure is counted against the address the request came from, even when its socket closed during the check (it then reports none)", async () => {
    const { auth } = setup();
    const gone = (authorization: string) => {
      let reads = 0;
      const socket = {
        get remoteAddress() {
          return reads++ === 0 ? "10.0.0.7" : undefined;
        },
      };
      return { headers: { authorization }, socket } as unknown as IncomingMessage;
    };
    for (let i = 0; i < LIMIT; i++) expect(await resolve(auth, gone(basicHeader("alice", `w${i}`)))).to.equal("UNAUTHORIZED");
    expect(await resolve(auth, from("10.0.0.7", basicHeader("alice", "right")))).to.equal("TOO_MANY_REQUESTS");
  });

  it("an IPv4-mapped address counts with the IPv4 address it carries", async () => {
    const { auth } = setup();
    const codes = [];
    for (let i = 0; i < LIMIT; i++) codes.push(await resolve(auth, from("10.0.0.5", "Bearer nope")));
    codes.push(await resolve(auth, from("::ffff:10.0.0.5", "Bearer nope")));
    expect(codes).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
  });

  it("a check refused by a full bcrypt queue is 503 UNAVAILABLE as it is, and not counted as a failure", async () => {
    const busy: PasswordCompare = () => Promise.reject(new CacheError("UNAVAILABLE", "password checks are all busy; retry later", undefined, { retryAfterS: 1 }));
    const { auth } = setup(busy);
    const codes = [];
    for (let i = 0; i < LIMIT + 2; i++) codes.push(await resolve(auth, from("10.0.0.1", basicHeader("alice", "any"))));
    expect(codes).to.deep.equal(Array.from({ length: LIMIT + 2 }, () => "UNAVAILABLE"));
  });
});
