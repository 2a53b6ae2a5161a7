// The policy file (SERVICE_AUTH_CONFIG) on real processes: identities with limited scopes on
// every client and management route (flat scopes: write does not imply read), /v1/me and
// /v1/me/can on both listeners, SERVICE_AUTH_TOKEN demoted to the peer token, Basic refused over
// plaintext and allowed with allow_basic_without_tls, and allow_anonymous only for requests
// without a credential.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { expectAllowed, expectForbidden, expectUnauthorized } from "../helpers/auth-expect.js";
import { basic, bearer, call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

// These nodes get hundreds of failed authentications from 127.0.0.1: SERVICE_AUTH_FAIL_LIMIT=0
// keeps every one a 401 here (the limit has its own tests: unit/auth, test/hostile).
const NO_FAIL_LIMIT = { SERVICE_AUTH_FAIL_LIMIT: "0" };

const PEER_TOKEN = "peer-only-secret";
const ALICE_HASH = bcrypt.hashSync("alice-password", 4);

const IDENTITIES = {
  reader: { token: "tok-reader", scopes: ["read"] },
  writer: { token: "tok-writer", scopes: ["write"] },
  "admin-only": { token: "tok-admin", scopes: ["admin"] },
  full: { token: "tok-full", scopes: ["read", "write", "admin"] },
  nobody: { token: "tok-none", scopes: [] as string[] },
} as const;
type Name = keyof typeof IDENTITIES;
const NAMES = Object.keys(IDENTITIES) as Name[];

const STRICT_POLICY = [
  "# strict: no anonymous access, Basic only over TLS",
  "tokens:",
  ...NAMES.map((n) => `  - {id: ${n}, token: ${IDENTITIES[n].token}, scopes: [${IDENTITIES[n].scopes.join(", ")}]}`),
  "users:",
  `  - {username: alice, password_hash: "${ALICE_HASH}", scopes: [read]}`,
].join("\n");

const RELAXED_POLICY = JSON.stringify({
  users: { alice: { password_hash: ALICE_HASH, scopes: ["read", "write"] } },
  tokens: [{ id: "reader", token: "tok-reader", scopes: ["read"] }],
  allow_anonymous: true,
  allow_basic_without_tls: true,
});

const json = { "content-type": "application/json" };

/**
 * Client routes and the scope each needs; `also`: a second scope it needs as well (a lease read
 * can give its caller the key's lease, which only a PUT fills).
 */
const CLIENT_ROUTES: Array<{ method: string; path: string; body?: string; scope: "read" | "write"; also?: "write" }> = [
  { method: "GET", path: "/v1/cache/pk", scope: "read" },
  { method: "HEAD", path: "/v1/cache/pk", scope: "read" },
  { method: "GET", path: "/v1/cache/lk?lease=10s", scope: "read", also: "write" },
  { method: "HEAD", path: "/v1/cache/lk?lease=10s&wait=0s", scope: "read", also: "write" },
  { method: "GET", path: "/v1/owners/pk", scope: "read" },
  { method: "POST", path: "/v1/cache/batch/get", body: '{"keys":["pk"]}', scope: "read" },
  { method: "GET", path: "/v1/cache/keys", scope: "read" },
  { method: "GET", path: "/v1/me", scope: "read" },
  { method: "PUT", path: "/v1/cache/pk", body: "value", scope: "write" },
  { method: "DELETE", path: "/v1/cache/pk", scope: "write" },
  { method: "POST", path: "/v1/cache/batch/put", body: '{"items":[{"key":"pk","value":"v"}]}', scope: "write" },
  { method: "POST", path: "/v1/cache/batch/delete", body: '{"keys":["pk"]}', scope: "write" },
  { method: "POST", path: "/v1/cache/ck/incr", body: '{"delta":1}', scope: "write" },
  { method: "POST", path: "/v1/cache/pk/touch", body: '{"ttl":"10m"}', scope: "write" },
];

/** Management routes: "read or better" (read or admin) or admin. */
const MGMT_ROUTES: Array<{ method: string; path: string; needs: "readOrBetter" | "admin"; stream?: boolean }> = [
  { method: "GET", path: "/stats", needs: "readOrBetter" },
  { method: "GET", path: "/config", needs: "readOrBetter" },
  { method: "GET", path: "/cluster/members", needs: "readOrBetter" },
  { method: "GET", path: "/dist/metrics", needs: "readOrBetter" },
  { method: "GET", path: "/metrics", needs: "readOrBetter" },
  { method: "GET", path: "/cluster/events", needs: "readOrBetter", stream: true },
  { method: "GET", path: "/cluster/ring", needs: "readOrBetter" },
  { method: "GET", path: "/dist/hints", needs: "readOrBetter" },
  { method: "GET", path: "/cluster/keys", needs: "readOrBetter" },
  { method: "GET", path: "/cluster/keys/pk/replicas", needs: "readOrBetter" },
  { method: "GET", path: "/cluster/keys/pk/value", needs: "readOrBetter" },
  { method: "POST", path: "/evict", needs: "admin" },
  { method: "POST", path: "/clear", needs: "admin" },
  { method: "POST", path: "/trigger-expiration", needs: "admin" },
  { method: "DELETE", path: "/cluster/members/ghost-node", needs: "admin" },
];

describe("auth: policy file on real nodes", () => {
  let dir: string;
  let strict: NodeProcess;
  let relaxed: NodeProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-policy-"));
    writeFileSync(join(dir, "strict.yaml"), STRICT_POLICY);
    writeFileSync(join(dir, "relaxed.json"), RELAXED_POLICY);
    [strict, relaxed] = await Promise.all([
      startNode({ id: "auth-strict", env: { SERVICE_AUTH_CONFIG: join(dir, "strict.yaml"), SERVICE_AUTH_TOKEN: PEER_TOKEN, ...NO_FAIL_LIMIT } }),
      startNode({ id: "auth-relaxed", env: { SERVICE_AUTH_CONFIG: join(dir, "relaxed.json"), ...NO_FAIL_LIMIT } }),
    ]);
  });
  after(async () => {
    await Promise.all([strict?.stop("SIGKILL"), relaxed?.stop("SIGKILL")]);
    rmSync(dir, { recursive: true, force: true });
  });

  describe("scopes on the client listener (flat: write does not imply read)", () => {
    for (const name of NAMES) {
      const scopes: readonly string[] = IDENTITIES[name].scopes;
      it(`${name} [${scopes.join(", ")}]: allowed exactly on the routes of its scopes, 403 elsewhere`, async () => {
        for (const route of CLIENT_ROUTES) {
          const r = await call(`${strict.api}${route.path}`, { method: route.method, headers: { ...bearer(IDENTITIES[name].token), ...json }, body: route.body });
          const what = `${name} ${route.method} ${route.path}`;
          if (scopes.includes(route.scope) && (route.also === undefined || scopes.includes(route.also))) expectAllowed(r, what);
          else expectForbidden(r, what, route.method === "HEAD");
        }
      });
    }
  });

  describe("scopes on the management listener (read or better; admin)", () => {
    for (const name of NAMES) {
      const scopes: readonly string[] = IDENTITIES[name].scopes;
      it(`${name} [${scopes.join(", ")}]`, async () => {
        for (const route of MGMT_ROUTES) {
          const allowed = route.needs === "admin" ? scopes.includes("admin") : scopes.includes("read") || scopes.includes("admin");
          const r = await call(`${strict.mgmt}${route.path}`, { method: route.method, headers: bearer(IDENTITIES[name].token), headersOnly: route.stream === true && allowed });
          const what = `${name} ${route.method} ${route.path}`;
          if (allowed) expectAllowed(r, what);
          else expectForbidden(r, what);
        }
      });
    }

    it("POST /dist/drain needs read or better (a write-only identity gets 403)", async () => {
      expectForbidden(await call(`${strict.mgmt}/dist/drain`, { method: "POST", headers: bearer("tok-writer") }));
      expectForbidden(await call(`${strict.mgmt}/dist/drain`, { method: "POST", headers: bearer("tok-none") }));
    });

    it("leaves /health and /v1/openapi.yaml open", async () => {
      expect((await call(`${strict.mgmt}/health`)).status).to.equal(200);
      expect((await call(`${strict.mgmt}/v1/openapi.yaml`)).status).to.equal(200);
      expect((await call(`${strict.api}/healthz`)).status).to.equal(200);
      expect((await call(`${strict.api}/v1/openapi.yaml`)).status).to.equal(200);
    });
  });

  describe("/v1/me and /v1/me/can on both listeners", () => {
    it("/v1/me shows each identity's scopes and the capabilities derived 1:1", async () => {
      for (const base of [strict.api, strict.mgmt]) {
        const r = await call(`${base}/v1/me`, { headers: bearer("tok-full") });
        expect(r.json()).to.deep.equal({ id: "full", scopes: ["read", "write", "admin"], capabilities: ["cache.read", "cache.write", "cache.admin"] });
        expect((await call(`${base}/v1/me`, { headers: bearer("tok-reader") })).json()).to.deep.equal({ id: "reader", scopes: ["read"], capabilities: ["cache.read"] });
        expectForbidden(await call(`${base}/v1/me`, { headers: bearer("tok-writer") }), "/v1/me needs read");
      }
    });

    it("/v1/me/can answers any authenticated identity, even one without scopes", async () => {
      for (const base of [strict.api, strict.mgmt]) {
        const can = (token: string, capability: string) => call(`${base}/v1/me/can?capability=${capability}`, { headers: bearer(token) });
        expect((await can("tok-none", "cache.read")).json()).to.deep.equal({ capability: "cache.read", allowed: false });
        expect((await can("tok-writer", "cache.write")).json()).to.deep.equal({ capability: "cache.write", allowed: true });
        expect((await can("tok-writer", "cache.read")).json()).to.deep.equal({ capability: "cache.read", allowed: false });
        expect((await can("tok-admin", "cache.admin")).json()).to.deep.equal({ capability: "cache.admin", allowed: true });
        expect((await can("tok-admin", "admin")).status).to.equal(400);
        expectUnauthorized(await can("tok-unknown", "cache.read"));
      }
    });
  });

  describe("Idempotency-Key per identity", () => {
    it("two identities using one Idempotency-Key on one counter each add theirs and get their own result (the second got the first's value and its +7 was lost)", async () => {
      const incr = (token: string, delta: number) => call(`${strict.api}/v1/cache/idem-scope/incr`, { method: "POST", headers: { ...bearer(token), ...json, "Idempotency-Key": "shared" }, body: JSON.stringify({ delta }) });
      const writer = await incr("tok-writer", 5);
      const full = await incr("tok-full", 7);
      expect([writer.status, full.status]).to.deep.equal([200, 200]);
      expect([writer.json<{ value: number }>().value, full.json<{ value: number }>().value]).to.deep.equal([5, 12]);
      expect((await incr("tok-writer", 5)).json<{ value: number }>().value, "the writer's retry: its own first result").to.equal(5);
    });
  });

  describe("SERVICE_AUTH_TOKEN next to a policy file", () => {
    it("is not a client or management credential", async () => {
      expectUnauthorized(await call(`${strict.api}/v1/me`, { headers: bearer(PEER_TOKEN) }));
      expectUnauthorized(await call(`${strict.mgmt}/stats`, { headers: bearer(PEER_TOKEN) }));
    });

    it("is the peer transport's token", async () => {
      expect((await call(`${strict.dist}/health`, { headers: bearer(PEER_TOKEN) })).status).to.equal(200);
      expect((await call(`${strict.dist}/internal/keys`, { headers: bearer(PEER_TOKEN) })).status).to.equal(200);
      expect((await call(`${strict.dist}/health`, { headers: bearer("tok-full") })).status).to.equal(401);
      expect((await call(`${strict.dist}/internal/keys`)).status).to.equal(401);
    });

    it("so no peer-token warning is logged", () => {
      expect(strict.logs.some((r) => r.message === "client authentication is on but the peer transport has no token")).to.equal(false);
    });
  });

  describe("HTTP Basic", () => {
    it("is refused over plaintext HTTP, even with the right password (401 naming the reason)", async () => {
      const r = await call(`${strict.api}/v1/me`, { headers: basic("alice", "alice-password") });
      expectUnauthorized(r);
      expect(r.json<{ error: string }>().error).to.match(/plaintext/);
      expect(r.headers["www-authenticate"]).to.equal('Bearer realm="hypercache", Basic realm="hypercache", charset="UTF-8"');
    });

    it("is accepted over plaintext with allow_basic_without_tls (users given as a map)", async () => {
      const r = await call(`${relaxed.api}/v1/me`, { headers: basic("alice", "alice-password") });
      expect(r.status).to.equal(200);
      expect(r.json()).to.deep.include({ id: "alice", scopes: ["read", "write"] });
      expectAllowed(await call(`${relaxed.api}/v1/cache/bk`, { method: "PUT", headers: basic("alice", "alice-password"), body: "x" }));
      expect((await call(`${relaxed.mgmt}/stats`, { headers: basic("alice", "alice-password") })).status).to.equal(200);
    });

    it("refuses a wrong password and an unknown user with 401", async () => {
      expectUnauthorized(await call(`${relaxed.api}/v1/me`, { headers: basic("alice", "alice-passwordX") }));
      expectUnauthorized(await call(`${relaxed.api}/v1/me`, { headers: basic("mallory", "alice-password") }));
      expectUnauthorized(await call(`${relaxed.api}/v1/me`, { headers: basic("alice", "") }));
    });

    it("keeps answering repeated Basic requests quickly (successful checks are cached)", async () => {
      const started = Date.now();
      for (let i = 0; i < 40; i++) expect((await call(`${relaxed.api}/v1/me`, { headers: basic("alice", "alice-password") })).status).to.equal(200);
      expect(Date.now() - started).to.be.below(2_000);
    });
  });

  describe("allow_anonymous", () => {
    it("gives a request with no credential the identity anonymous with every scope", async () => {
      const r = await call(`${relaxed.api}/v1/me`);
      expect(r.json()).to.deep.equal({ id: "anonymous", scopes: ["read", "write", "admin"], capabilities: ["cache.read", "cache.write", "cache.admin"] });
      expectAllowed(await call(`${relaxed.api}/v1/cache/anon`, { method: "PUT", body: "x" }));
      expectAllowed(await call(`${relaxed.mgmt}/evict`, { method: "POST" }));
    });

    it("never applies to a request that carries a wrong or malformed credential", async () => {
      for (const headers of [bearer("wrong"), basic("alice", "wrong"), { authorization: "" }, { authorization: "Digest x" }, { authorization: "Basic %%%" }]) {
        expectUnauthorized(await call(`${relaxed.api}/v1/me`, { headers }), JSON.stringify(headers));
        expectUnauthorized(await call(`${relaxed.mgmt}/stats`, { headers }), JSON.stringify(headers));
      }
    });

    it("is off without the flag: no credential is 401", async () => {
      expectUnauthorized(await call(`${strict.api}/v1/me`));
      expectUnauthorized(await call(`${strict.api}/v1/cache/pk`, { method: "HEAD" }), "HEAD", true);
    });
  });

  describe("a short peer token", () => {
    it("logs a warning at start-up naming its length (the dist listener answers every guess); a 16-character one does not", async () => {
      const short = await startNode({ id: "auth-short-peer", env: { SERVICE_PEER_TOKEN: "tiny-token" } });
      try {
        expect(short.logs.find((r) => r.message === "peer token is short: anyone who reaches the peer port can guess it")).to.include({ level: "warn", chars: 10, advised_min_chars: 16 });
      } finally {
        await short.stop("SIGKILL");
      }
      expect(strict.logs.filter((r) => String(r.message).startsWith("peer token is short"))).to.deep.equal([]);
    });
  });

  describe("no peer token", () => {
    it("logs a warning at start-up when client auth is on and the peer transport has no token", () => {
      expect(relaxed.logs.find((r) => r.message === "client authentication is on but the peer transport has no token")).to.include({ level: "warn" });
    });

    it("leaves the peer listener open in that case", async () => {
      expect((await call(`${relaxed.dist}/health`)).status).to.equal(200);
    });
  });
});
