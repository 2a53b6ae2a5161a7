// The management routes (identity, ring, hints, key pages, a key's copies and preview, stats,
// drain, maintenance passes) and the management-only client: typed answers, typed errors, and
// no request to any origin but the management endpoint it was given.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { AllEndpointsFailedError, BadRequestError, ClientConfigError, ForbiddenError, NotFoundError, UnauthorizedError, UnavailableError } from "../../src/errors.js";
import type { ClearAnswer, DrainAnswer, DrainStatus, EvictAnswer, ExpireAnswer, HintsView, KeyBrowserPage, KeyReplicas, ManagementIdentity, NodeStats, RingView, ValuePreview } from "../../src/management-routes.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, type Call } from "./fake-fetch.js";

const M = "http://127.0.0.1:8081";

function pinned(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}, clock = new ManualClock()) {
  return new HypercacheClient({ managementEndpoints: [M], fetch: f.fetch, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

const route = (c: Call | undefined) => (c ? `${c.init.method} ${c.url.slice(M.length)}` : "");

// Answers typed against the management document, so a fixture off the schema fails to compile.
const IDENTITY = { id: "ops", scopes: ["admin"], capabilities: ["cache.admin"] } satisfies ManagementIdentity;
const RING = { node: "n1", membership_version: 3, replication: 2, virtual_nodes: 128, nodes: [{ id: "n1", primary_share: 0.5, owner_share: 1 }, { id: "n2", primary_share: 0.5, owner_share: 1 }] } satisfies RingView;
const NO_HINTS = { targets: [], total_count: 0, total_bytes: 0, oldest_age_ms: 0 };
const HINTS = {
  ...NO_HINTS,
  node: "n1",
  caps: { max_per_node: 10_000, max_bytes: 64 * 1024 * 1024, ttl_ms: 600_000 },
  counters: { queued: 0, replayed: 0, expired: 0, dropped_per_node_cap: 0, dropped_bytes_cap: 0 },
  migrations: NO_HINTS,
} satisfies HintsView;
const PAGE = { node: "n1", keys: ["a", "b"], next_cursor: "c2", partial_nodes: ["n3"], total_matched: 4, truncated: false } satisfies KeyBrowserPage;
const REPLICAS = { key: "k/1", node: "n1", timeout_ms: 1500, owners: ["n1"], divergent: false, replicas: [{ node: "n1", role: "primary", state: "live", present: true, version: 5, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", expires_at: null, bytes: 3, error: null }] } satisfies KeyReplicas;
const PREVIEW = { key: "k/1", node: "n1", version: 5, bytes: 3, truncated: false, preview_base64: "aGkh", expires_at: null } satisfies ValuePreview;
const LATENCY = { count: 0, p50_ms: 0, p99_ms: 0 };
const STATS = {
  node: "n1",
  items: 7,
  bytes: 70,
  capacity: 1000,
  data_bytes: 1200,
  max_data_bytes: 0,
  hits: 3,
  misses: 1,
  sets: 7,
  deletes: 0,
  evictions: 0,
  expirations: 0,
  uptime_s: 12,
  latency: { get: LATENCY, set: LATENCY, delete: LATENCY },
} satisfies NodeStats;
const DRAIN_STATUS = {
  state: "serving",
  hints_pending: 0,
  migrations_pending: 0,
  repairs_queued: 0,
  in_flight: 0,
  safe_to_stop: false,
  blockers: [{ reason: "not_draining" }],
} satisfies DrainStatus;
const DRAIN = { draining: true } satisfies DrainAnswer;
const EVICTED = { evicted: 2 } satisfies EvictAnswer;
const EXPIRED = { expired: 1 } satisfies ExpireAnswer;
const CLEARED = { cleared: 9, scope: "node" } satisfies ClearAnswer;

describe("client management routes", () => {
  it("each method calls its route on the management endpoint and returns the typed answer", async () => {
    const answers: Record<string, unknown> = {
      "GET /me": IDENTITY,
      "GET /cluster/members": { node: "n1", replication: 2, virtual_nodes: 128, membership_version: 3, known_nodes: ["n1"], members: [] },
      "GET /cluster/ring": RING,
      "GET /dist/hints": HINTS,
      "GET /cluster/keys?q=user%3A*&limit=2&cursor=c1": PAGE,
      "GET /cluster/keys/k%2F1/replicas": REPLICAS,
      "GET /cluster/keys/k%2F1/value": PREVIEW,
      "GET /stats": STATS,
      "GET /dist/drain": DRAIN_STATUS,
      "POST /dist/drain": DRAIN,
      "POST /evict": EVICTED,
      "POST /trigger-expiration": EXPIRED,
      "POST /clear": CLEARED,
    };
    const f = new FakeFetch().on(M, (call) => {
      const body = answers[route(call)];
      return body === undefined ? envelope(404, "NOT_FOUND", "no route", { route: "unknown" }) : answer(200, body);
    });
    const c = pinned(f);
    expect(await c.identity()).to.deep.equal(IDENTITY);
    expect((await c.members()).node).to.equal("n1");
    expect(await c.ring()).to.deep.equal(RING);
    expect(await c.hints()).to.deep.equal(HINTS);
    expect(await c.keyPage({ q: "user:*", limit: 2, cursor: "c1" })).to.deep.equal(PAGE);
    expect(await c.replicas("k/1")).to.deep.equal(REPLICAS);
    expect(await c.valuePreview("k/1")).to.deep.equal(PREVIEW);
    expect(await c.stats()).to.deep.equal(STATS);
    expect(await c.drainStatus()).to.deep.equal(DRAIN_STATUS);
    expect(await c.drain()).to.deep.equal(DRAIN);
    expect(await c.evict()).to.deep.equal(EVICTED);
    expect(await c.triggerExpiration()).to.deep.equal(EXPIRED);
    expect(await c.clearNode()).to.deep.equal(CLEARED);
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
