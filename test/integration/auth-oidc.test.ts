// OIDC on real processes against a local issuer on loopback (discovery document and JWKS with
// RS256 and ES256 keys): accepted tokens and their scopes, every refused token (401), the static
// token next to OIDC, custom claims, and key rotation with the refetch cooldown.
import { SignJWT } from "jose";
import { expect } from "chai";
import { expectForbidden, expectUnauthorized } from "../helpers/auth-expect.js";
import { bearer, call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { startOidcIssuer, type MintOptions, type OidcIssuer } from "../helpers/oidc-issuer.js";

// These nodes get hundreds of failed authentications from 127.0.0.1: SERVICE_AUTH_FAIL_LIMIT=0
// keeps every one a 401 here (the limit has its own tests: unit/auth, test/hostile).
const NO_FAIL_LIMIT = { SERVICE_AUTH_FAIL_LIMIT: "0" };

const AUDIENCE = "hypercache";
const STATIC = "static-and-peer-token";
const now = () => Math.floor(Date.now() / 1000);

describe("auth: OIDC on real nodes", () => {
  let issuer: OidcIssuer;
  let node: NodeProcess;
  let custom: NodeProcess;
  const me = async (n: NodeProcess, token: string, base: "api" | "mgmt" = "api") => call(`${n[base]}/v1/me`, { headers: bearer(token) });
  const mint = (o?: MintOptions) => issuer.mint(o);

  before(async () => {
    issuer = await startOidcIssuer({ audience: AUDIENCE });
    const oidc = { SERVICE_OIDC_ISSUER: issuer.url, SERVICE_OIDC_AUDIENCE: AUDIENCE };
    [node, custom] = await Promise.all([
      startNode({ id: "auth-oidc", env: { ...oidc, SERVICE_AUTH_TOKEN: STATIC, ...NO_FAIL_LIMIT } }),
      startNode({ id: "auth-oidc-custom", env: { ...oidc, SERVICE_OIDC_IDENTITY_CLAIM: "email", SERVICE_OIDC_SCOPE_CLAIM: "roles", ...NO_FAIL_LIMIT } }),
    ]);
  });
  after(async () => {
    await Promise.all([node?.stop("SIGKILL"), custom?.stop("SIGKILL")]);
    await issuer?.close();
  });

  it("reports oidc_enabled in the start-up record and the methods of the chain", () => {
    expect(node.logs.find((r) => r.message === "hypercache-server starting")).to.include({ oidc_enabled: true });
    expect(node.logs.find((r) => r.message === "authentication enabled")?.methods).to.deep.equal(["static_token", "oidc"]);
  });

  describe("accepted tokens", () => {
    it("an RS256 token: identity from sub, scopes from a space-separated scope string", async () => {
      const r = await me(node, await mint({ alg: "RS256", claims: { sub: "rs-user", scope: "read write" } }));
      expect(r.status).to.equal(200);
      expect(r.json()).to.deep.equal({ id: "rs-user", scopes: ["read", "write"], capabilities: ["cache.read", "cache.write"] });
    });

    it("an ES256 token with the scope claim as an array", async () => {
      const r = await me(node, await mint({ alg: "ES256", claims: { sub: "es-user", scope: ["read", "admin"] } }));
      expect(r.json()).to.deep.equal({ id: "es-user", scopes: ["read", "admin"], capabilities: ["cache.read", "cache.admin"] });
    });

    it("drops unknown scope values silently", async () => {
      const r = await me(node, await mint({ claims: { sub: "mixed", scope: "openid profile read email cache:write WRITE" } }));
      expect(r.json()).to.deep.equal({ id: "mixed", scopes: ["read"], capabilities: ["cache.read"] });
    });

    it("enforces the token's scopes: read-only gets 403 on PUT, write-only gets 403 on GET", async () => {
      const reader = await mint({ claims: { scope: "read" } });
      const writer = await mint({ claims: { scope: "write" } });
      expectForbidden(await call(`${node.api}/v1/cache/o1`, { method: "PUT", body: "x", headers: bearer(reader) }));
      expect((await call(`${node.api}/v1/cache/o1`, { method: "PUT", body: "x", headers: bearer(writer) })).status).to.equal(200);
      expectForbidden(await call(`${node.api}/v1/cache/o1`, { headers: bearer(writer) }));
      expect((await call(`${node.api}/v1/cache/o1`, { headers: bearer(reader) })).status).to.equal(200);
    });

    it("works on the management listener too", async () => {
      expect((await me(node, await mint({ claims: { scope: "read" } }), "mgmt")).status).to.equal(200);
      expectForbidden(await call(`${node.mgmt}/evict`, { method: "POST", headers: bearer(await mint({ claims: { scope: "read" } })) }));
      expect((await call(`${node.mgmt}/evict`, { method: "POST", headers: bearer(await mint({ claims: { scope: "admin" } })) })).status).to.equal(200);
    });

    it("a token without any of our scopes authenticates but may do nothing but /v1/me/can", async () => {
      const t = await mint({ claims: { scope: "openid" } });
      expectForbidden(await me(node, t));
      expect((await call(`${node.api}/v1/me/can?capability=cache.read`, { headers: bearer(t) })).json()).to.deep.equal({ capability: "cache.read", allowed: false });
    });

    it("uses SERVICE_OIDC_IDENTITY_CLAIM and SERVICE_OIDC_SCOPE_CLAIM", async () => {
      const r = await me(custom, await mint({ claims: { email: "ops@example.com", roles: ["read", "admin"], scope: "write" } }));
      expect(r.json()).to.deep.equal({ id: "ops@example.com", scopes: ["read", "admin"], capabilities: ["cache.read", "cache.admin"] });
      expectUnauthorized(await me(custom, await mint({ claims: { roles: "read" } })), "no email claim");
    });
  });

  describe("the static token next to OIDC", () => {
    it("still resolves to the identity `token` with every scope", async () => {
      expect((await me(node, STATIC)).json()).to.include({ id: "token" });
    });

    it("a bearer that is neither the static token nor a valid JWT is 401", async () => {
      expectUnauthorized(await me(node, "not-the-static-token"));
    });

    it("no credential is 401: anonymous access is off with OIDC", async () => {
      expectUnauthorized(await call(`${node.api}/v1/me`));
      expectUnauthorized(await call(`${custom.api}/v1/me`));
      expect((await call(`${custom.api}/v1/me`)).headers["www-authenticate"]).to.equal('Bearer realm="hypercache"');
    });
  });

  describe("refused tokens: 401 with the envelope and the reason", () => {
    const cases: Array<[string, () => MintOptions, RegExp]> = [
      ["expired", () => ({ claims: { iat: now() - 3600, exp: now() - 600 } }), /expired/],
      ["not yet valid (nbf an hour ahead)", () => ({ claims: { nbf: now() + 3600 } }), /not yet valid/],
      ["issued in the future (iat an hour ahead)", () => ({ claims: { iat: now() + 3600, exp: now() + 7200 } }), /issued in the future/],
      ["without exp", () => ({ omit: ["exp"] }), /"exp"/],
      ["without iat", () => ({ omit: ["iat"] }), /"iat"/],
      ["for another audience", () => ({ claims: { aud: "another-service" } }), /"aud"/],
      ["from another issuer", () => ({ claims: { iss: "http://127.0.0.1:1/other-idp" } }), /"iss"/],
      ["signed with a key the issuer does not publish (unknown kid)", () => ({ alg: "ES256", unpublishedKid: "unknown-kid-1" }), /unknown key/],
      ["carrying a published kid but signed with another key", () => ({ alg: "ES256", unpublishedKid: issuer.jwks().keys.find((k) => k.alg === "ES256")?.kid }), /signature/],
    ];
    for (const [what, opts, reason] of cases) {
      it(what, async () => {
        const r = await me(node, await mint(opts()));
        expectUnauthorized(r, what);
        expect(r.json<{ error: string }>().error).to.match(reason);
      });
    }

    it("with a tampered signature", async () => {
      const t = await mint();
      const [h, p, s] = t.split(".") as [string, string, string];
      const r = await me(node, `${h}.${p}.${s.startsWith("A") ? "B" : "A"}${s.slice(1)}`);
      expectUnauthorized(r);
      expect(r.json<{ error: string }>().error).to.match(/signature/);
    });

    it("with scopes raised after signing", async () => {
      const t = await mint({ claims: { scope: "read" } });
      const [h, , s] = t.split(".") as [string, string, string];
      const forged = Buffer.from(JSON.stringify({ iss: issuer.url, aud: AUDIENCE, sub: "x", iat: now(), exp: now() + 60, scope: "admin" })).toString("base64url");
      expectUnauthorized(await me(node, `${h}.${forged}.${s}`));
    });

    it("signed with HS256 (symmetric algorithms are never accepted)", async () => {
      const t = await new SignJWT({ iss: issuer.url, aud: AUDIENCE, sub: "x", scope: "admin", iat: now(), exp: now() + 60 })
        .setProtectedHeader({ alg: "HS256" })
        .sign(new TextEncoder().encode("0123456789abcdef0123456789abcdef"));
      expectUnauthorized(await me(node, t));
    });

    it("unsigned (alg none)", async () => {
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      expectUnauthorized(await me(node, `${enc({ alg: "none" })}.${enc({ iss: issuer.url, aud: AUDIENCE, sub: "x", iat: now(), exp: now() + 60 })}.`));
    });
  });

  describe("key rotation", () => {
    let rotating: OidcIssuer;
    let n: NodeProcess;
    before(async () => {
      rotating = await startOidcIssuer({ audience: AUDIENCE });
      n = await startNode({ id: "auth-oidc-rotation", env: { SERVICE_OIDC_ISSUER: rotating.url, SERVICE_OIDC_AUDIENCE: AUDIENCE, ...NO_FAIL_LIMIT } });
    });
    after(async () => {
      await n?.stop("SIGKILL");
      await rotating?.close();
    });

    it("accepts tokens of the new keys after the issuer rotates (one refetch), refuses the retired keys, and refetches at most once per 30 s", async () => {
      const before = await rotating.mint({ alg: "ES256", claims: { sub: "before" } });
      expect((await me(n, before)).status).to.equal(200);
      expect(rotating.jwksFetches).to.equal(1);

      await rotating.rotate();
      for (const alg of ["ES256", "RS256"] as const) {
        const after = await rotating.mint({ alg, claims: { sub: `after-${alg}` } });
        const r = await me(n, after);
        expect(r.status, r.body.toString()).to.equal(200);
        expect(r.json()).to.include({ id: `after-${alg}` });
      }
      expect(rotating.jwksFetches).to.equal(2);

      const retired = await me(n, before);
      expectUnauthorized(retired);
      expect(retired.json<{ error: string }>().error).to.match(/unknown key/);

      // Within the cooldown, neither a retired kid nor a made-up one makes the node fetch again.
      for (let i = 0; i < 5; i++) expectUnauthorized(await me(n, await rotating.mint({ alg: "ES256", unpublishedKid: `ghost-${i}` })));
      expect(rotating.jwksFetches).to.equal(2);
    });
  });
});
