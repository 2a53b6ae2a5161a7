// The management routes (identity, ring, hints, key pages, a key's copies and preview, stats,
// drain, maintenance passes) and the management-only client: typed answers, typed errors, and
// no request to any origin but the management endpoint it was given.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { AllEndpointsFailedError, BadRequestError, ClientConfigError, ForbiddenError, NotFoundError, UnauthorizedError, UnavailableError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, type Call } from "./fake-fetch.js";

const M = "http://127.0.0.1:8081";

function pinned(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}, clock = new ManualClock()) {
  return new HypercacheClient({ managementEndpoints: [M], fetch: f.fetch, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

const route = (c: Call | undefined) => (c ? `${c.init.method} ${c.url.slice(M.length)}` : "");

const IDENTITY = { id: "ops", scopes: ["admin"], capabilities: ["cache.admin"] };
const RING = { node: "n1", membership_version: 3, replication: 2, virtual_nodes: 128, nodes: [{ id: "n1", primary_share: 0.5, owner_share: 1 }, { id: "n2", primary_share: 0.5, owner_share: 1 }] };
const PAGE = { keys: ["a", "b"], next_cursor: "c2", partial_nodes: ["n3"], total_matched: 4, truncated: false };
const REPLICAS = { key: "k/1", owners: ["n1"], divergent: false, replicas: [{ node: "n1", role: "primary", state: "live", present: true, version: 5, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", expires_at: null, bytes: 3, error: null }] };
const PREVIEW = { key: "k/1", bytes: 3, truncated: false, preview_base64: "aGkh", expires_at: null };

describe("client management routes", () => {
  it("each method calls its route on the management endpoint and returns the typed answer", async () => {
    const answers: Record<string, unknown> = {
      "GET /me": IDENTITY,
      "GET /cluster/members": { node: "n1", replication: 2, virtual_nodes: 128, membership_version: 3, known_nodes: ["n1"], members: [] },
      "GET /cluster/ring": RING,
      "GET /dist/hints": { node: "n1", total_count: 0 },
      "GET /cluster/keys?q=user%3A*&limit=2&cursor=c1": PAGE,
      "GET /cluster/keys/k%2F1/replicas": REPLICAS,
      "GET /cluster/keys/k%2F1/value": PREVIEW,
      "GET /stats": { items: 7 },
      "GET /dist/drain": { state: "serving" },
      "POST /dist/drain": { status: "draining" },
      "POST /evict": { evicted: 2 },
      "POST /trigger-expiration": { expired: 1 },
      "POST /clear": { cleared: 9 },
    };
    const f = new FakeFetch().on(M, (call) => {
      const body = answers[route(call)];
      return body === undefined ? envelope(404, "NOT_FOUND", "no route", { route: "unknown" }) : answer(200, body);
    });
    const c = pinned(f);
    expect(await c.identity()).to.deep.equal(IDENTITY);
    expect((await c.members()).node).to.equal("n1");
    expect(await c.ring()).to.deep.equal(RING);
    expect(await c.hints()).to.deep.include({ total_count: 0 });
    expect(await c.keyPage({ q: "user:*", limit: 2, cursor: "c1" })).to.deep.equal(PAGE);
    expect(await c.replicas("k/1")).to.deep.equal(REPLICAS);
    expect(await c.valuePreview("k/1")).to.deep.equal(PREVIEW);
    expect(await c.stats()).to.deep.equal({ items: 7 });
    expect(await c.drainStatus()).to.deep.equal({ state: "serving" });
    expect(await c.drain()).to.deep.equal({ status: "draining" });
    expect(await c.evict()).to.deep.equal({ evicted: 2 });
    expect(await c.triggerExpiration()).to.deep.equal({ expired: 1 });
    expect(await c.clearNode()).to.deep.equal({ cleared: 9 });
    expect(f.calls.map(route)).to.deep.equal(Object.keys(answers));
    expect(new Set(f.order)).to.deep.equal(new Set([M]));
  });

  it("an error answer is its typed error; a key without a value previews as undefined", async () => {
    const f = new FakeFetch().on(M, (call) => {
      const r = route(call);
      if (r === "GET /me") return envelope(401, "UNAUTHORIZED", "missing or invalid credentials");
      if (r === "POST /clear") return envelope(403, "FORBIDDEN", "needs admin");
      if (r.startsWith("GET /cluster/keys?")) return envelope(400, "BAD_REQUEST", "malformed glob");
      if (r === "GET /cluster/keys/gone/value") return envelope(404, "NOT_FOUND", "no live value");
      if (r === "GET /stats") return envelope(503, "UNAVAILABLE", "password checks busy");
      return envelope(404, "NOT_FOUND", "no route", { route: "unknown" });
    });
    const c = pinned(f);
    const err = await c.identity().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnauthorizedError).and.include({ status: 401, code: "UNAUTHORIZED", message: "missing or invalid credentials", endpoint: M });
    expect(await c.clearNode().catch((e: unknown) => e)).to.be.instanceOf(ForbiddenError);
    expect(await c.keyPage({ q: "[" }).catch((e: unknown) => e)).to.be.instanceOf(BadRequestError);
    expect(await c.valuePreview("gone")).to.equal(undefined);
    expect(await c.valuePreview("x").catch((e: unknown) => e), "an unknown route is not a missing key").to.be.instanceOf(NotFoundError);
    const busy = await c.stats().catch((e: unknown) => e);
    expect(busy, "a 5xx of the only endpoint").to.be.instanceOf(AllEndpointsFailedError);
    expect((busy as AllEndpointsFailedError).attempts.map((a) => a.error)).to.satisfy((es: unknown[]) => es.length === 1 && es[0] instanceof UnavailableError);
  });

  it("a management-only client sends nothing anywhere else: no discovery, and the cache API refuses", async () => {
    const f = new FakeFetch().on(M, () => answer(200, IDENTITY));
    const clock = new ManualClock();
    const c = pinned(f, { discovery: { atStart: true, intervalMs: 1000 } }, clock);
    clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 5));
    expect(f.calls, "no discovery call").to.have.length(0);
    expect(() => c.keys()).to.throw(ClientConfigError, /management endpoints only/);
    expect(await c.get("k").catch((e: unknown) => e)).to.be.instanceOf(ClientConfigError);
    expect(await c.refreshEndpoints()).to.equal(false);
    await c.identity();
    expect(f.order).to.deep.equal([M]);
    expect(() => new HypercacheClient({ fetch: f.fetch })).to.throw(ClientConfigError, /no endpoint given/);
  });

  it("Basic over plain http to a management endpoint is refused unless allowInsecureBasic, and sent when allowed", async () => {
    const f = new FakeFetch().on(M, () => answer(200, IDENTITY));
    expect(() => pinned(f, { basic: { username: "ops", password: "pw" } })).to.throw(ClientConfigError, /plain http/);
    const c = pinned(f, { basic: { username: "ops", password: "pw" }, allowInsecureBasic: true });
    await c.identity();
    expect(f.calls[0]?.init.headers.authorization).to.equal(`Basic ${btoa("ops:pw")}`);
  });
});
