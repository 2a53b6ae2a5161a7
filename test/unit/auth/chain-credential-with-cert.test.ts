// A credential in the Authorization header that fails is 401, and counted by the failure limiter,
// whatever client certificate comes with it: a listed certificate never rescues a wrong Basic
// password or a wrong bearer token (else the certificate's 200 would let a caller guess passwords
// without limit, and /v1/me would tell a right guess from a wrong one).
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { BasicVerifier, type PasswordCompare } from "../../../src/auth/basic-auth.js";
import { buildChain, type BearerVerifier } from "../../../src/auth/chain.js";
import { CertIdentityTable } from "../../../src/auth/client-cert.js";
import { AuthFailLimiter } from "../../../src/auth/fail-limiter.js";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { basicHeader, chain, fakeOidc, request, resolve, tlsCert } from "./chain-helpers.js";

const LIMIT = 3;

/** A chain with user alice ("right"), token good-token, cert CN svc-a and a failure limit of LIMIT. */
function limited(oidc?: BearerVerifier) {
  const clock = new ManualClock();
  const checks: string[] = [];
  const compare: PasswordCompare = async (password) => {
    checks.push(password);
    return password === "right";
  };
  const auth = buildChain({
    tokens: new StaticTokenTable([{ id: "t", token: "good-token", scopes: ["read"] }]),
    basic: new BasicVerifier([{ username: "alice", passwordHash: "$2b$04$unused", scopes: ["read"] }], { clock, compare }),
    certs: new CertIdentityTable([{ subjectCn: "svc-a", scopes: ["admin"] }]),
    oidc,
    allowAnonymous: false,
    allowBasicWithoutTls: false,
    limiter: new AuthFailLimiter({ clock, limitPerS: LIMIT }),
  });
  return { auth, checks };
}

/** A request over mutual TLS with the listed certificate svc-a, from one address. */
const withCert = (authorization?: string): IncomingMessage => {
  const req = request(authorization, tlsCert("svc-a"));
  (req.socket as { remoteAddress?: string }).remoteAddress = "10.0.0.7";
  return req;
};

describe("auth/chain: a failed credential with a listed client certificate", () => {
  it("a wrong Basic password is 401, not the certificate's identity", async () => {
    expect(await resolve(chain(), request(basicHeader("alice", "nope"), tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
  });

  it("an unknown Basic user is 401, not the certificate's identity", async () => {
    expect(await resolve(chain(), request(basicHeader("mallory", "x"), tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
  });

  it("a wrong bearer token is 401, with or without OIDC, not the certificate's identity", async () => {
    expect(await resolve(chain(), request("Bearer wrong", tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
    expect(await resolve(chain({ oidc: fakeOidc() }), request("Bearer wrong", tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
    expect(await resolve(chain({ oidc: fakeOidc() }), request("Bearer not.a.jwt", tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
  });

  it("a Basic header to a node without users is 401, not the certificate's identity", async () => {
    expect(await resolve(chain({ users: false }), request(basicHeader("alice", "alice-pw"), tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
  });

  it("the right credential still wins over the certificate, and the certificate alone still resolves", async () => {
    expect(await resolve(chain(), request(basicHeader("alice", "alice-pw"), tlsCert("svc-a")))).to.deep.include({ id: "alice" });
    expect(await resolve(chain(), request("Bearer static-token-1", tlsCert("svc-a")))).to.deep.include({ id: "static-1" });
    expect(await resolve(chain(), request(undefined, tlsCert("svc-a")))).to.deep.include({ id: "svc-a" });
  });

  it("a valid OIDC token with a listed certificate is verified, and the certificate wins (chain order)", async () => {
    const oidc = fakeOidc();
    expect(await resolve(chain({ oidc }), request("Bearer jwt.carol.read", tlsCert("svc-a")))).to.deep.include({ id: "svc-a" });
    expect(oidc.calls).to.equal(1);
  });

  it("wrong Basic passwords with the certificate count as failures: past the limit 429, and no more bcrypt checks", async () => {
    const { auth, checks } = limited();
    const codes = [];
    for (let i = 0; i < LIMIT + 3; i++) codes.push(await resolve(auth, withCert(basicHeader("alice", `guess-${i}`))));
    expect(codes).to.deep.equal([...Array<string>(LIMIT).fill("UNAUTHORIZED"), ...Array<string>(3).fill("TOO_MANY_REQUESTS")]);
    expect(checks).to.have.length(LIMIT);
    // Once limited, the right password is refused too: the answer no longer tells a right guess.
    expect(await resolve(auth, withCert(basicHeader("alice", "right")))).to.equal("TOO_MANY_REQUESTS");
  });

  it("wrong bearer tokens with the certificate count as failures too", async () => {
    const { auth } = limited(fakeOidc());
    const codes = [];
    for (let i = 0; i < LIMIT + 1; i++) codes.push(await resolve(auth, withCert(i % 2 === 0 ? "Bearer wrong" : "Bearer bad.jwt.x")));
    expect(codes).to.deep.equal([...Array<string>(LIMIT).fill("UNAUTHORIZED"), "TOO_MANY_REQUESTS"]);
  });
});
