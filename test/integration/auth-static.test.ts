// SERVICE_AUTH_TOKEN alone on a real process: one identity `token` with every scope on the client
// and management listeners, every 401 with the JSON envelope and a WWW-Authenticate challenge,
// the open routes, the peer listener's token, and malformed Authorization headers (fuzz).
import { expect } from "chai";
import { expectAllowed, expectUnauthorized } from "../helpers/auth-expect.js";
import { bearer, basic, call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

// These nodes get hundreds of failed authentications from 127.0.0.1: SERVICE_AUTH_FAIL_LIMIT=0
// keeps every one a 401 here (the limit has its own tests: unit/auth, test/hostile).
const NO_FAIL_LIMIT = { SERVICE_AUTH_FAIL_LIMIT: "0" };

const TOKEN = "shared-secret-token";
const ALL = { id: "token", scopes: ["read", "write", "admin"], capabilities: ["cache.read", "cache.write", "cache.admin"] };

describe("auth: SERVICE_AUTH_TOKEN (static bearer) on a real node", () => {
  let node: NodeProcess;
  before(async () => {
    node = await startNode({ id: "auth-static", env: { SERVICE_AUTH_TOKEN: TOKEN, ...NO_FAIL_LIMIT } });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("logs that authentication is on, not that the API is open, and no peer-token warning", () => {
    expect(node.logs.find((r) => r.message === "authentication enabled")).to.include({ level: "info" }).and.have.deep.property("methods", ["static_token"]);
    expect(node.logs.some((r) => /authentication disabled/.test(r.message))).to.equal(false);
    expect(node.logs.some((r) => r.message === "client authentication is on but the peer transport has no token")).to.equal(false);
  });

  it("serves /healthz, /health and /v1/openapi.yaml without a credential on the client listener", async () => {
    for (const path of ["/healthz", "/health", "/v1/openapi.yaml"]) expect((await call(`${node.api}${path}`)).status, path).to.equal(200);
  });

  it("serves /health and /v1/openapi.yaml without a credential on the management listener", async () => {
    for (const path of ["/health", "/v1/openapi.yaml"]) expect((await call(`${node.mgmt}${path}`)).status, path).to.equal(200);
  });

  it("resolves the token to the identity `token` with every scope on both listeners (/v1/me)", async () => {
    for (const base of [node.api, node.mgmt]) {
      const r = await call(`${base}/v1/me`, { headers: bearer(TOKEN) });
      expect(r.status).to.equal(200);
      expect(r.json()).to.deep.equal(ALL);
    }
  });

  it("answers /v1/me/can on both listeners", async () => {
    for (const base of [node.api, node.mgmt]) {
      const r = await call(`${base}/v1/me/can?capability=cache.admin`, { headers: bearer(TOKEN) });
      expect(r.json()).to.deep.equal({ capability: "cache.admin", allowed: true });
      expect((await call(`${base}/v1/me/can?capability=cache.everything`, { headers: bearer(TOKEN) })).status).to.equal(400);
      expectUnauthorized(await call(`${base}/v1/me/can?capability=cache.read`), `${base} /v1/me/can without credential`);
    }
  });

  it("lets the token use every client route", async () => {
    const h = { ...bearer(TOKEN), "content-type": "application/json" };
    expectAllowed(await call(`${node.api}/v1/cache/k1`, { method: "PUT", headers: h, body: "v" }), "PUT");
    expect((await call(`${node.api}/v1/cache/k1`, { headers: h })).body.toString()).to.equal("v");
    expectAllowed(await call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: h, body: '{"keys":["k1"]}' }), "batch get");
    expectAllowed(await call(`${node.api}/v1/cache/k1`, { method: "DELETE", headers: h }), "DELETE");
  });

  const clientRoutes: Array<[string, string, string?]> = [
    ["GET", "/v1/me"],
    ["GET", "/v1/cache/k1"],
    ["HEAD", "/v1/cache/k1"],
    ["PUT", "/v1/cache/k1", "v"],
    ["DELETE", "/v1/cache/k1"],
    ["GET", "/v1/owners/k1"],
    ["GET", "/v1/cache/keys"],
    ["POST", "/v1/cache/batch/get", '{"keys":["k1"]}'],
    ["POST", "/v1/cache/batch/put", '{"items":[{"key":"k1","value":"v"}]}'],
    ["POST", "/v1/cache/batch/delete", '{"keys":["k1"]}'],
  ];
  const mgmtRoutes: Array<[string, string]> = [
    ["GET", "/v1/me"],
    ["GET", "/stats"],
    ["GET", "/config"],
    ["GET", "/dist/metrics"],
    ["GET", "/metrics"],
    ["GET", "/cluster/members"],
    ["GET", "/cluster/events"],
    ["POST", "/dist/drain"],
    ["POST", "/evict"],
    ["POST", "/clear"],
    ["POST", "/trigger-expiration"],
    ["DELETE", "/cluster/members/ghost"],
  ];
  const badCredentials: Array<[string, Record<string, string>]> = [
    ["no credential", {}],
    ["a wrong token", bearer("wrong-token")],
    ["the token with a suffix", bearer(`${TOKEN}x`)],
    ["the token as a Basic password", basic("token", TOKEN)],
    ["a JWT-shaped token without OIDC", bearer("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")],
  ];

  for (const [what, headers] of badCredentials) {
    it(`answers 401 with the envelope and a challenge to ${what} on every client route`, async () => {
      for (const [method, path, body] of clientRoutes) {
        const r = await call(`${node.api}${path}`, { method, headers: { ...headers, "content-type": "application/json" }, body });
        expectUnauthorized(r, `${method} ${path}`, method === "HEAD");
      }
    });

    it(`answers 401 with the envelope and a challenge to ${what} on every management route but /health`, async () => {
      for (const [method, path] of mgmtRoutes) expectUnauthorized(await call(`${node.mgmt}${path}`, { method, headers }), `${method} ${path}`);
    });
  }

  it("names Bearer in the challenge", async () => {
    expect((await call(`${node.api}/v1/me`)).headers["www-authenticate"]).to.equal('Bearer realm="hypercache"');
  });

  describe("peer listener", () => {
    for (const path of ["/health", "/internal/keys?limit=10"]) {
      it(`refuses GET ${path} without the peer token or with a wrong one (401) and serves it with the right one`, async () => {
        expect((await call(`${node.dist}${path}`)).status).to.equal(401);
        expect((await call(`${node.dist}${path}`, { headers: bearer("wrong") })).status).to.equal(401);
        expect((await call(`${node.dist}${path}`, { headers: basic("peer", TOKEN) })).status).to.equal(401);
        const ok = await call(`${node.dist}${path}`, { headers: bearer(TOKEN) });
        expect(ok.status, ok.body.toString()).to.equal(200);
      });
    }

    it("refuses the other fixed paths and the canonical Connect paths without the token", async () => {
      expect((await call(`${node.dist}/internal/set`, { method: "POST", body: "{}" })).status).to.equal(401);
      expect((await call(`${node.dist}/internal/gossip`, { method: "POST", body: "{}" })).status).to.equal(401);
      expect((await call(`${node.dist}/dist/drain`, { method: "POST", body: "{}", headers: bearer("wrong") })).status).to.equal(401);
      const canonical = await call(`${node.dist}/internal/hypercache.peer.v1.PeerService/Health`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(canonical.status).to.equal(401);
    });
  });

  describe("malformed Authorization headers", () => {
    /** Seeded, so a failure replays. */
    function rng(seed: number): () => number {
      let s = seed >>> 0;
      return () => {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        return s / 4294967296;
      };
    }
    const latin1 = (s: string) => Buffer.from(s, "utf8").toString("latin1");
    const PIECES = ["Bearer", "bearer", "BASIC", "Basic", "Digest", "Negotiate", "AWS4-HMAC-SHA256", " ", "\t", ":", "=", ",", '"', "'", ".", "..", "%", "\\", "a", "Zm9vOmJhcg==", "YWxpY2U", "\u00e9", "\u00ff", latin1("日本"), latin1("🔑"), TOKEN.slice(0, 5), "eyJ", "null", "{}", "Bearer Bearer"];

    it("answers 401 with the envelope to 300 random malformed headers (seed 1234), and the node stays healthy", async () => {
      const seed = 1234;
      const next = rng(seed);
      for (let i = 0; i < 300; i++) {
        const n = 1 + Math.floor(next() * 6);
        let value = "";
        for (let j = 0; j < n; j++) value += PIECES[Math.floor(next() * PIECES.length)];
        const path = next() < 0.5 ? "/v1/me" : "/v1/cache/fuzz";
        const r = await call(`${node.api}${path}`, { headers: { authorization: value } });
        expectUnauthorized(r, `seed=${seed} i=${i} value=${JSON.stringify(value)}`);
      }
      expect((await call(`${node.api}/healthz`)).status).to.equal(200);
    });

    const cases: Array<[string, string]> = [
      ["empty", ""],
      ["spaces only", "    "],
      ["a scheme alone", "Bearer"],
      ["huge (32 KiB)", `Bearer ${"x".repeat(32 * 1024)}`],
      ["huge Basic (32 KiB)", `Basic ${"QUFB".repeat(8 * 1024)}`],
      ["non-ASCII token", latin1("Bearer tökén")],
      ["non-ASCII Basic payload", `Basic ${Buffer.from("ü:ö", "latin1").toString("base64")}`],
      ["bad base64", "Basic ###"],
      ["Basic without a colon", `Basic ${Buffer.from("nocolon").toString("base64")}`],
      ["an odd scheme", "Negotiate YIIB"],
      ["two credentials", `Bearer ${TOKEN}, Basic eDp5`],
      ["the token with a tab inside", `Bearer ${TOKEN.slice(0, 4)}\t${TOKEN.slice(4)}`],
    ];
    for (const [what, value] of cases) {
      it(`answers 401 to an Authorization header that is ${what}, on both listeners`, async () => {
        expectUnauthorized(await call(`${node.api}/v1/me`, { headers: { authorization: value } }), `api ${what}`);
        expectUnauthorized(await call(`${node.mgmt}/stats`, { headers: { authorization: value } }), `mgmt ${what}`);
      });
    }
  });

  it("answers headers past the 64 KiB cap with the 400 envelope (Node's parser refuses them before auth), never a 5xx", async () => {
    for (const base of [node.api, node.mgmt]) {
      const r = await call(`${base}/v1/me`, { headers: { authorization: `Bearer ${"x".repeat(70 * 1024)}` } }).catch((err: Error) => err);
      if (r instanceof Error) continue; // the server may close before the client finished sending
      expect(r.status).to.equal(400);
      expect(r.json()).to.include({ code: "BAD_REQUEST" });
    }
    expect((await call(`${node.api}/healthz`)).status).to.equal(200);
  });

  describe("afterwards", () => {
    it("logged nothing per request for all those refusals", () => {
      const noisy = node.logs.filter((r) => r.level === "error" || (r.level === "warn" && r.message !== "unknown setting ignored"));
      expect(noisy, JSON.stringify(noisy.slice(0, 3))).to.deep.equal([]);
      expect(node.logs.some((r) => /unauthori|forbidden|auth fail/i.test(r.message))).to.equal(false);
    });
  });
});
