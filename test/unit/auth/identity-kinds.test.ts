// Identities of different kinds must not merge: the policy file refuses one id shared by a token,
// a Basic user or a certificate entry (and the reserved id "anonymous"); the rate limiter keys its
// buckets by kind and id, so an OIDC subject equal to a static token's id cannot drain that
// token's budget; and an OIDC token with sub "anonymous" never becomes the anonymous identity.
import { expect } from "chai";
import bcrypt from "bcryptjs";
import { BasicVerifier } from "../../../src/auth/basic-auth.js";
import { createOidcVerifier, type OidcVerifier } from "../../../src/auth/oidc-verifier.js";
import { parsePolicy, PolicyFileError } from "../../../src/auth/policy-file.js";
import { RateLimiter } from "../../../src/auth/rate-limiter.js";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { inProcessFetch, startOidcIssuer, type OidcIssuer } from "../../helpers/oidc-issuer.js";

const HASH = bcrypt.hashSync("pw", 4);

function policyError(text: string): string {
  try {
    parsePolicy(text, "auth.yaml");
  } catch (err) {
    expect(err).to.be.instanceOf(PolicyFileError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${text}`);
}

/** Requests admitted out of `n` at once (rate 1/s, burst 2). */
function admitted(l: RateLimiter, who: Parameters<RateLimiter["admit"]>[0], n: number, address = "10.0.0.1"): number {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    try {
      l.admit(who, address);
      ok++;
    } catch (err) {
      if (!(err instanceof CacheError)) throw err;
    }
  }
  return ok;
}

describe("auth: identities of different kinds stay apart", () => {
  describe("the policy file refuses one id across tokens, users and cert_identities", () => {
    const cases = [
      ["a token id and a user name", `tokens: [{id: reader, token: t1, scopes: [read]}]\nusers: [{username: reader, password_hash: "${HASH}", scopes: [admin]}]`],
      ["a token id and a certificate CN", "tokens: [{id: svc, token: t1, scopes: [read]}]\ncert_identities: [{subject_cn: svc, scopes: [admin]}]"],
      ["a user name and a certificate CN", `users: {svc: {password_hash: "${HASH}", scopes: [read]}}\ncert_identities: [{subject_cn: svc, scopes: [admin]}]`],
    ] as const;
    for (const [what, text] of cases) {
      it(`refuses ${what} that are equal, naming the id`, () => {
        expect(policyError(text)).to.match(/auth\.yaml: .*(reader|svc).*already/);
      });
    }

    it('refuses the reserved id "anonymous" as a token id, user name or certificate CN', () => {
      for (const text of [
        "tokens: [{id: anonymous, token: t1, scopes: [read]}]",
        `users: [{username: anonymous, password_hash: "${HASH}", scopes: [read]}]`,
        "cert_identities: [{subject_cn: anonymous, scopes: [read]}]",
      ]) {
        expect(policyError(text), text).to.contain("reserved");
      }
    });

    it("accepts distinct ids across kinds", () => {
      const p = parsePolicy(`tokens: [{id: t, token: t1, scopes: [read]}]\nusers: [{username: u, password_hash: "${HASH}", scopes: [read]}]\ncert_identities: [{subject_cn: c, scopes: [read]}]`, "auth.yaml");
      expect(p.tokens).to.have.length(1);
    });
  });

  describe("rate-limit buckets and OIDC subjects", () => {
    let issuer: OidcIssuer;
    let clock: ManualClock;
    let oidc: OidcVerifier;
    const now = () => Math.floor(clock.nowMs() / 1000);
    before(async () => {
      issuer = await startOidcIssuer({ audience: "cache" });
    });
    after(() => issuer.close());
    beforeEach(async () => {
      clock = new ManualClock();
      oidc = await createOidcVerifier({ issuer: issuer.url, audience: "cache", identityClaim: "sub", scopeClaim: "scope", clock, fetchJson: inProcessFetch(issuer).fetchJson });
    });

    it("an OIDC subject equal to a static token's id does not use up that token's bucket", async () => {
      const l = new RateLimiter({ clock, settings: { ratePerS: 1, burst: 2, scope: "node" }, aliveMembers: () => 1 });
      const ops = new StaticTokenTable([{ id: "ops", token: "tok-ops", scopes: ["admin"] }]).match("tok-ops")!;
      const impostor = await oidc.verify(await issuer.mint({ alg: "RS256", claims: { sub: "ops", scope: "" } }, now()));
      expect(impostor.id).to.equal("ops");
      expect(admitted(l, impostor, 5)).to.equal(2);
      expect(admitted(l, ops, 5), "the static token keeps its own budget").to.equal(2);
    });

    it("a Basic user and a token with the same id (built outside a policy file) have separate buckets", async () => {
      const l = new RateLimiter({ clock, settings: { ratePerS: 1, burst: 2, scope: "node" }, aliveMembers: () => 1 });
      const token = new StaticTokenTable([{ id: "reader", token: "tok", scopes: ["read"] }]).match("tok")!;
      const user = (await new BasicVerifier([{ username: "reader", passwordHash: HASH, scopes: ["read"] }], { clock }).verify("reader", "pw"))!;
      expect(admitted(l, user, 5)).to.equal(2);
      expect(admitted(l, token, 5)).to.equal(2);
    });

    it('refuses an OIDC token whose subject is "anonymous" (401): it never becomes the anonymous identity', async () => {
      const t = await issuer.mint({ alg: "RS256", claims: { sub: "anonymous", scope: "read write admin" } }, now());
      const err = await oidc.verify(t).then(
        (id) => new Error(`accepted ${JSON.stringify(id)}`),
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(CacheError).and.include({ code: "UNAUTHORIZED" });
      expect((err as Error).message).to.contain("anonymous");
    });
  });
});
