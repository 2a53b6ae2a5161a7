import { expect } from "chai";
import { SignJWT, UnsecuredJWT } from "jose";
import { JWKS_MAX_AGE_MS, JWKS_REFETCH_COOLDOWN_MS, OIDC_CLOCK_SKEW_S } from "../../../src/auth/auth-limits.js";
import { createOidcVerifier, OidcSetupError, type OidcVerifier } from "../../../src/auth/oidc-verifier.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { inProcessFetch, startOidcIssuer, type OidcIssuer } from "../../helpers/oidc-issuer.js";

async function refusal(v: OidcVerifier, token: string): Promise<string> {
  try {
    const id = await v.verify(token);
    return `accepted ${JSON.stringify(id)}`;
  } catch (err) {
    expect(err).to.be.instanceOf(CacheError);
    expect((err as CacheError).code).to.equal("UNAUTHORIZED");
    return (err as Error).message;
  }
}

describe("auth/oidc-verifier", () => {
  let issuer: OidcIssuer;
  let clock: ManualClock;
  let fetch: ReturnType<typeof inProcessFetch>;
  let v: OidcVerifier;
  const now = () => Math.floor(clock.nowMs() / 1000);
  /** When a token whose `exp` is `exp` stops being accepted: exp plus the tolerated skew, in ms. */
  const untilMs = (exp: number) => (exp + OIDC_CLOCK_SKEW_S) * 1000;

  before(async () => {
    issuer = await startOidcIssuer({ audience: "cache" });
  });
  after(() => issuer.close());
  beforeEach(async () => {
    clock = new ManualClock();
    fetch = inProcessFetch(issuer);
    v = await createOidcVerifier({ issuer: issuer.url, audience: "cache", identityClaim: "sub", scopeClaim: "scope", clock, fetchJson: fetch.fetchJson });
  });

  describe("accepted tokens", () => {
    it("an RS256 token with a space-separated scope string", async () => {
      const t = await issuer.mint({ alg: "RS256", claims: { sub: "alice", scope: "read write" } }, now());
      expect(await v.verify(t)).to.deep.equal({ kind: "oidc", id: "alice", scopes: ["read", "write"], expiresAtMs: untilMs(now() + 300) });
    });

    it("an ES256 token with a scope array", async () => {
      const t = await issuer.mint({ alg: "ES256", claims: { sub: "bob", scope: ["admin"] } }, now());
      expect(await v.verify(t)).to.deep.equal({ kind: "oidc", id: "bob", scopes: ["admin"], expiresAtMs: untilMs(now() + 300) });
    });

    it("unknown scope values are dropped silently", async () => {
      const t = await issuer.mint({ claims: { sub: "c", scope: "openid profile read cache:write" } }, now());
      expect(await v.verify(t)).to.deep.equal({ kind: "oidc", id: "c", scopes: ["read"], expiresAtMs: untilMs(now() + 300) });
    });

    it("custom identity and scope claims", async () => {
      const custom = await createOidcVerifier({ issuer: issuer.url, audience: "cache", identityClaim: "email", scopeClaim: "scp", clock, fetchJson: fetch.fetchJson });
      const t = await issuer.mint({ claims: { email: "d@example.com", scp: ["write"], scope: "admin" } }, now());
      expect(await custom.verify(t)).to.deep.equal({ kind: "oidc", id: "d@example.com", scopes: ["write"], expiresAtMs: untilMs(now() + 300) });
    });

    it("an audience list containing ours", async () => {
      const t = await issuer.mint({ claims: { aud: ["other", "cache"] } }, now());
      expect(await v.verify(t)).to.include({ id: "oidc-user" });
    });

    it("an expiry a few seconds past, within the clock-skew tolerance: the identity expires at exp plus the skew", async () => {
      const t = await issuer.mint({ claims: { iat: now() - 300, exp: now() - 10 } }, now());
      expect(await v.verify(t)).to.include({ id: "oidc-user", expiresAtMs: untilMs(now() - 10) });
    });
  });

  describe("refused tokens (401 with the reason)", () => {
    const cases: Array<[string, (n: number) => Parameters<OidcIssuer["mint"]>[0], RegExp]> = [
      ["expired", (n) => ({ claims: { iat: n - 600, exp: n - 120 } }), /expired/],
      ["not yet valid (nbf in the future)", (n) => ({ claims: { nbf: n + 120 } }), /not yet valid/],
      ["issued in the future (iat)", (n) => ({ claims: { iat: n + 120, exp: n + 600 } }), /issued in the future/],
      ["without exp", () => ({ omit: ["exp"] }), /"exp"/],
      ["without iat", () => ({ omit: ["iat"] }), /"iat"/],
      ["for another audience", () => ({ claims: { aud: "someone-else" } }), /"aud"/],
      ["from another issuer", () => ({ claims: { iss: "http://evil.example" } }), /"iss"/],
      ["signed by an unknown key", () => ({ unpublishedKid: "ghost-kid" }), /unknown key/],
      ["without the identity claim", () => ({ omit: ["sub"] }), /"sub"/],
      ["with an empty identity claim", () => ({ claims: { sub: "" } }), /"sub"/],
    ];
    for (const [what, opts, reason] of cases) {
      it(what, async () => {
        const t = await issuer.mint(opts(now()), now());
        expect(await refusal(v, t)).to.match(reason);
      });
    }

    it("with a bad signature", async () => {
      const t = await issuer.mint({}, now());
      const [h, p, s] = t.split(".") as [string, string, string];
      const flipped = `${s.slice(0, 10)}${s[10] === "A" ? "B" : "A"}${s.slice(11)}`;
      expect(await refusal(v, `${h}.${p}.${flipped}`)).to.match(/signature/);
    });

    it("with a payload changed after signing", async () => {
      const t = await issuer.mint({ claims: { scope: "read" } }, now());
      const [h, , s] = t.split(".") as [string, string, string];
      const forged = Buffer.from(JSON.stringify({ iss: issuer.url, aud: "cache", sub: "x", iat: now(), exp: now() + 60, scope: "admin" })).toString("base64url");
      expect(await refusal(v, `${h}.${forged}.${s}`)).to.match(/signature/);
    });

    it("alg none", async () => {
      const t = new UnsecuredJWT({ iss: issuer.url, aud: "cache", sub: "x", iat: now(), exp: now() + 60 }).encode();
      expect(await refusal(v, t)).to.not.match(/^accepted/);
    });

    it("HS256 signed with a guessable secret", async () => {
      const t = await new SignJWT({ iss: issuer.url, aud: "cache", sub: "x", iat: now(), exp: now() + 60 })
        .setProtectedHeader({ alg: "HS256", kid: issuer.jwks().keys[0]?.kid })
        .sign(new TextEncoder().encode("secret-secret-secret-secret-1234"));
      expect(await refusal(v, t)).to.match(/algorithm not allowed/);
    });

    it("garbage", async () => {
      for (const t of ["a.b.c", "....", "eyJ.eyJ.", "x"]) expect(await refusal(v, t)).to.not.match(/^accepted/);
    });
  });

  describe("the key set", () => {
    it("is fetched once at construction", () => {
      expect(fetch.jwks).to.equal(1);
    });

    it("refetches on an unknown kid at most once per cooldown window", async () => {
      const ghost = () => issuer.mint({ unpublishedKid: "ghost" }, now());
      await refusal(v, await ghost());
      expect(fetch.jwks).to.equal(2);
      await refusal(v, await ghost());
      clock.advance(JWKS_REFETCH_COOLDOWN_MS - 1);
      await refusal(v, await ghost());
      expect(fetch.jwks).to.equal(2);
      clock.advance(1);
      await refusal(v, await ghost());
      expect(fetch.jwks).to.equal(3);
    });

    it("accepts tokens signed with rotated keys after one refetch, and refuses the retired keys", async () => {
      const old = await issuer.mint({ alg: "ES256" }, now());
      await issuer.rotate();
      try {
        const fresh = await issuer.mint({ alg: "ES256", claims: { sub: "after-rotation" } }, now());
        expect(await v.verify(fresh)).to.include({ id: "after-rotation" });
        expect(fetch.jwks).to.equal(2);
        expect(await refusal(v, old)).to.match(/unknown key/);
      } finally {
        await issuer.rotate();
      }
    });

    it("is refreshed when older than the maximum age, and old keys keep working while the provider is down", async () => {
      clock.advance(JWKS_MAX_AGE_MS);
      const t2 = await issuer.mint({}, now());
      expect(await v.verify(t2)).to.include({ id: "oidc-user" });
      expect(fetch.jwks).to.equal(2);
      fetch.down = true;
      clock.advance(JWKS_MAX_AGE_MS);
      const t3 = await issuer.mint({}, now());
      expect(await v.verify(t3)).to.include({ id: "oidc-user" });
    });
  });

  describe("construction", () => {
    const build = (fetchJson: (u: string) => Promise<unknown>, issuerUrl = issuer.url) =>
      createOidcVerifier({ issuer: issuerUrl, audience: "cache", identityClaim: "sub", scopeClaim: "scope", clock: new ManualClock(), fetchJson });

    async function setupError(p: Promise<unknown>): Promise<string> {
      try {
        await p;
      } catch (err) {
        expect(err).to.be.instanceOf(OidcSetupError);
        return (err as Error).message;
      }
      throw new Error("expected OidcSetupError");
    }

    it("fails when the discovery document cannot be fetched", async () => {
      expect(await setupError(build(() => Promise.reject(new Error("ECONNREFUSED"))))).to.match(/discovery document .* unavailable: ECONNREFUSED/);
    });

    it("fails when the discovery document lacks jwks_uri", async () => {
      expect(await setupError(build(async () => ({ issuer: issuer.url })))).to.match(/jwks_uri/);
    });

    it("fails when the discovery document names another issuer", async () => {
      expect(await setupError(build(async () => ({ issuer: "http://other", jwks_uri: `${issuer.url}/jwks` })))).to.match(/names the issuer/);
    });

    it("fails when the key set cannot be fetched or is not a key set", async () => {
      const discoveryOnly = (jwks: () => Promise<unknown>) => async (u: string) => (u.endsWith("/jwks") ? jwks() : issuer.discovery());
      expect(await setupError(build(discoveryOnly(() => Promise.reject(new Error("503")))))).to.match(/key set .* unavailable/);
      expect(await setupError(build(discoveryOnly(async () => ({ nope: true }))))).to.match(/not a JSON Web Key Set/);
    });

    it("accepts the issuer configured with a trailing slash", async () => {
      const f = inProcessFetch(issuer);
      const fetchJson = (u: string) => f.fetchJson(u.replace(`${issuer.url}//`, `${issuer.url}/`));
      const verifier = await build(fetchJson, `${issuer.url}/`);
      const t = await issuer.mint({}, Math.floor(new ManualClock().nowMs() / 1000));
      expect(await verifier.verify(t)).to.include({ id: "oidc-user" });
    });
  });
});
