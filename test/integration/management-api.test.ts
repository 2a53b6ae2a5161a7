// The management listener of real nodes over real HTTP on 127.0.0.1: every route with its
// payload and status (health, stats, config, dist metrics, Prometheus text, cluster members and
// manual removal errors, the control routes evict / trigger-expiration / clear, identity routes,
// unknown routes, the OpenAPI document), and OTLP export of a real process to a local collector.
// Nodes run open (the anonymous identity holds every scope); authentication has its own files.
import { expect } from "chai";
import { parse as parseYaml } from "yaml";
import { SETTINGS } from "../../src/config/settings.js";
import { COUNTERS, GAUGES, prometheusName } from "../../src/observability/index.js";
import { call, bearer, type Reply } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { parsePrometheus, sleep, startCollector, type Collector } from "./observability-helpers.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { defaultDataBudget, defaultInflightBudget } from "../helpers/node-process.js";

type Json = Record<string, unknown>;

interface Latency {
  count: number;
  p50_ms: number;
  p99_ms: number;
}

interface Stats {
  node: string;
  items: number;
  bytes: number;
  capacity: number;
  data_bytes: number;
  max_data_bytes: number;
  hits: number;
  misses: number;
  sets: number;
  deletes: number;
  evictions: number;
  expirations: number;
  uptime_s: number;
  latency: { get: Latency; set: Latency; delete: Latency };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PEER_TOKEN = "peer-secret-6f1c2d";
const AUTH_TOKEN = "client-secret-9a8b7c";
const METRIC_NAMES: readonly string[] = [...COUNTERS, ...GAUGES];

/** The error envelope `{error, code, details?}` with this status and code. */
/** A 200 JSON answer, parsed. */
function ok<T = Json>(r: Reply): T {
  expect(r.status, `status; body ${r.body.toString("utf8").slice(0, 300)}`).to.equal(200);
  expect(r.headers["content-type"]).to.match(/^application\/json/);
  return r.json<T>();
}

const api = (n: NodeProcess, method: string, path: string, body?: string) => call(`${n.api}${path}`, { method, body });
const mgmt = (n: NodeProcess, method: string, path: string) => call(`${n.mgmt}${path}`, { method });
const stats = async (n: NodeProcess) => ok<Stats>(await mgmt(n, "GET", "/stats"));
const distMetrics = async (n: NodeProcess) => ok<Record<string, number>>(await mgmt(n, "GET", "/dist/metrics"));

async function put(n: NodeProcess, key: string, value: string, query = ""): Promise<void> {
  const r = await api(n, "PUT", `/v1/cache/${encodeURIComponent(key)}${query}`, value);
  expect(r.status, `PUT ${key}: ${r.body.toString()}`).to.equal(200);
}

describe("management API: every route of one real node, with payloads and statuses", function () {
  this.timeout(30_000);

  let node: NodeProcess;
  /** /dist/metrics right after start-up, before any traffic. */
  let startupMetrics: Reply;

  before(async () => {
    node = await startNode({
      id: "mgmt-api-1",
      env: {
        SERVICE_PEER_TOKEN: PEER_TOKEN,
        SERVICE_REPLICATION: "2",
        // The background expiration loop stays out of the way of POST /trigger-expiration.
        SERVICE_EXPIRATION_INTERVAL: "1h",
      },
    });
    startupMetrics = await mgmt(node, "GET", "/dist/metrics");
  });

  after(async () => {
    await node?.stop("SIGKILL");
  });

  describe("GET /health", () => {
    it("answers 200 {status: ok, node, draining: false} while serving", async () => {
      // A single node has no peer to catch up with: caught up at once.
      expect(ok(await mgmt(node, "GET", "/health"))).to.deep.equal({ status: "ok", node: "mgmt-api-1", draining: false, catching_up: false });
    });
  });

  describe("GET /stats", () => {
    it("has exactly the documented fields with their types, capacity from the config and zero counters before traffic", async () => {
      const s = await stats(node);
      expect(Object.keys(s).sort()).to.deep.equal(
        ["node", "items", "bytes", "capacity", "data_bytes", "max_data_bytes", "hits", "misses", "sets", "deletes", "evictions", "expirations", "uptime_s", "latency"].sort(),
      );
      expect(s).to.include({ node: "mgmt-api-1", items: 0, bytes: 0, capacity: 100000, data_bytes: 0, hits: 0, misses: 0, sets: 0, deletes: 0, evictions: 0, expirations: 0 });
      expect(s.max_data_bytes, "40% of the memory the process may use").to.equal(defaultDataBudget());
      expect(s.uptime_s).to.be.a("number").and.be.greaterThan(0);
      expect(Object.keys(s.latency).sort()).to.deep.equal(["delete", "get", "set"]);
      for (const op of ["get", "set", "delete"] as const) {
        expect(s.latency[op], op).to.deep.equal({ count: 0, p50_ms: 0, p99_ms: 0 });
      }
    });

    /** Client traffic: 3 PUTs (13 bytes), 2 GET hits, 2 GET misses (404), 1 DELETE; /stats before and after. */
    async function traffic(prefix: string): Promise<{ before: Stats; after: Stats }> {
      const before = await stats(node);
      await put(node, `${prefix}:a`, "alpha"); // 5 bytes
      await put(node, `${prefix}:b`, "bravo!!"); // 7 bytes
      await put(node, `${prefix}:c`, "c"); // 1 byte, deleted below
      expect((await api(node, "GET", `/v1/cache/${prefix}%3Aa`)).status).to.equal(200);
      expect((await api(node, "GET", `/v1/cache/${prefix}%3Ab`)).status).to.equal(200);
      expect((await api(node, "GET", `/v1/cache/${prefix}%3Amissing-1`)).status).to.equal(404);
      expect((await api(node, "GET", `/v1/cache/${prefix}%3Amissing-2`)).status).to.equal(404);
      expect((await api(node, "DELETE", `/v1/cache/${prefix}%3Ac`)).status).to.equal(200);
      return { before, after: await stats(node) };
    }

    it("moves with client traffic: sets, hits, misses, deletes, items and bytes", async () => {
      const { before, after } = await traffic("stats1");
      expect({
        sets: after.sets - before.sets,
        hits: after.hits - before.hits,
        misses: after.misses - before.misses,
        deletes: after.deletes - before.deletes,
        items: after.items - before.items,
        bytes: after.bytes - before.bytes,
        evictions: after.evictions - before.evictions,
        expirations: after.expirations - before.expirations,
      }).to.deep.equal({ sets: 3, hits: 2, misses: 2, deletes: 1, items: 2, bytes: 12, evictions: 0, expirations: 0 });
    });

    it("latency summaries count every client operation, GET misses (404) included, with 0 < p50 <= p99", async () => {
      const { before, after } = await traffic("stats2");
      expect({
        set: after.latency.set.count - before.latency.set.count,
        get: after.latency.get.count - before.latency.get.count,
        delete: after.latency.delete.count - before.latency.delete.count,
      }).to.deep.equal({ set: 3, get: 4, delete: 1 });
      for (const op of ["get", "set", "delete"] as const) {
        const l = after.latency[op];
        expect(l.p50_ms, `${op} p50`).to.be.a("number").and.be.greaterThan(0);
        expect(l.p99_ms, `${op} p99 >= p50`).to.be.at.least(l.p50_ms);
        expect(l.p99_ms, `${op} p99 is a plausible loopback latency`).to.be.lessThan(5000);
      }
    });

    it("uptime_s grows with time", async () => {
      const a = await stats(node);
      await sleep(300);
      const b = await stats(node);
      expect(b.uptime_s - a.uptime_s).to.be.within(0.25, 5);
    });
  });

  describe("GET /config", () => {
    /** What this node was started with (startNode adds the node id and the three addresses). */
    const fromEnv = (): Record<string, string> => ({
      SERVICE_NODE_ID: "mgmt-api-1",
      SERVICE_API_ADDR: `127.0.0.1:${node.apiPort}`,
      SERVICE_MGMT_ADDR: `127.0.0.1:${node.mgmtPort}`,
      SERVICE_DIST_ADDR: `127.0.0.1:${node.distPort}`,
      SERVICE_PEER_TOKEN: "[redacted]",
      SERVICE_REPLICATION: "2",
      SERVICE_EXPIRATION_INTERVAL: "1h",
    });

    it("lists every SERVICE_* setting of SETTINGS, no other key, each with its value and source env or default", async () => {
      const body = ok<{ node: string; settings: Record<string, { value: string; source: string }> }>(await mgmt(node, "GET", "/config"));
      expect(Object.keys(body).sort()).to.deep.equal(["node", "settings"]);
      expect(body.node).to.equal("mgmt-api-1");
      expect(Object.keys(body.settings).sort()).to.deep.equal(SETTINGS.map((s) => s.name).sort());
      const env = fromEnv();
      for (const spec of SETTINGS) {
        const shown = body.settings[spec.name];
        expect(shown && Object.keys(shown).sort(), spec.name).to.deep.equal(["source", "value"]);
        if (spec.name in env) {
          expect(shown, spec.name).to.deep.equal({ value: env[spec.name], source: "env" });
        } else if (spec.name === "SERVICE_MAX_DATA_BYTES") {
          // Its default is derived: 40% of the memory the process may use.
          expect(shown, spec.name).to.deep.equal({ value: String(defaultDataBudget()), source: "default" });
        } else if (spec.name === "SERVICE_MAX_INFLIGHT_BYTES") {
          // Derived too: 10% of the memory the process may use.
          expect(shown, spec.name).to.deep.equal({ value: String(defaultInflightBudget()), source: "default" });
        } else if (spec.name === "SERVICE_DEAD_AFTER") {
          // Its default is derived: 6 x SERVICE_HEARTBEAT (1s).
          expect(shown, spec.name).to.deep.equal({ value: "6000ms", source: "default" });
        } else if (spec.name === "SERVICE_API_ADVERTISE_URL" || spec.name === "SERVICE_MGMT_ADVERTISE_URL") {
          // Derived too: the listener's scheme, the dist host and the listener's port.
          expect(shown, spec.name).to.deep.equal({ value: spec.name === "SERVICE_API_ADVERTISE_URL" ? node.api : node.mgmt, source: "default" });
        } else {
          expect(shown, spec.name).to.deep.equal({ value: spec.default, source: "default" });
        }
      }
    });

    it("shows SERVICE_PEER_TOKEN as [redacted] and never the token itself", async () => {
      const r = await mgmt(node, "GET", "/config");
      expect(r.json<{ settings: Record<string, unknown> }>().settings.SERVICE_PEER_TOKEN).to.deep.equal({ value: "[redacted]", source: "env" });
      expect(r.body.toString("utf8")).to.not.include(PEER_TOKEN);
    });

    it("shows SERVICE_AUTH_TOKEN as [redacted] and never the token itself (a node started with it, read with that bearer)", async () => {
      const secured = await startNode({ id: "mgmt-api-auth", env: { SERVICE_AUTH_TOKEN: AUTH_TOKEN } });
      try {
        const r = await call(`${secured.mgmt}/config`, { headers: bearer(AUTH_TOKEN) });
        const settings = ok<{ settings: Record<string, unknown> }>(r).settings;
        expect(settings.SERVICE_AUTH_TOKEN).to.deep.equal({ value: "[redacted]", source: "env" });
        expect(settings.SERVICE_PEER_TOKEN).to.deep.equal({ value: "", source: "default" });
        expect(r.body.toString("utf8")).to.not.include(AUTH_TOKEN);
      } finally {
        await secured.stop("SIGKILL");
      }
    });
  });

  describe("GET /dist/metrics", () => {
    it("holds every COUNTERS and GAUGES name from start-up, as numbers, and nothing else", () => {
      const m = ok<Record<string, unknown>>(startupMetrics);
      expect(Object.keys(m).sort()).to.deep.equal([...METRIC_NAMES].sort());
      for (const name of METRIC_NAMES) expect(m[name], name).to.be.a("number").and.satisfy(Number.isFinite);
      expect(m).to.include({ "dist.drains": 0, "dist.write.attempts": 0, "dist.members.alive": 1, "dist.nodes.suspect": 0, "dist.events.dropped": 0 });
      expect(m["dist.membership.version"]).to.be.at.least(1);
    });

    it("counts client writes in dist.write.attempts", async () => {
      const before = await distMetrics(node);
      await put(node, "metrics:a", "1");
      await put(node, "metrics:b", "2");
      const after = await distMetrics(node);
      expect(after["dist.write.attempts"]! - before["dist.write.attempts"]!).to.equal(2);
    });
  });

  describe("GET /metrics", () => {
    it("is Prometheus text that parses, every sample value numeric", async () => {
      const r = await mgmt(node, "GET", "/metrics");
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.match(/^text\/plain/);
      const prom = parsePrometheus(r.body.toString("utf8"));
      expect(prom.samples.length).to.be.at.least(METRIC_NAMES.length);
      for (const s of prom.samples) expect(Number.isFinite(s.value), `${s.name} = ${s.value}`).to.equal(true);
      // A histogram's samples (_bucket, _sum, _count) belong to the family of its base name.
      const familyOf = (name: string) => prom.families.get(name) ?? prom.families.get(name.replace(/_(bucket|sum|count)$/, ""));
      for (const s of prom.samples) expect(familyOf(s.name)?.type, `# TYPE of ${s.name}`).to.be.a("string");
    });

    it("shows every counter as dist_..._total (TYPE counter) and every gauge by its underscored name (TYPE gauge)", async () => {
      const prom = parsePrometheus((await mgmt(node, "GET", "/metrics")).body.toString("utf8"));
      expect(prom.value("dist_write_attempts_total")).to.be.a("number");
      for (const name of COUNTERS) {
        const p = `${prometheusName(name)}_total`;
        expect(prom.value(p), p).to.be.a("number");
        expect(prom.families.get(p)?.type, p).to.equal("counter");
      }
      for (const name of GAUGES) {
        const p = prometheusName(name);
        expect(prom.value(p), p).to.be.a("number");
        expect(prom.families.get(p)?.type, p).to.equal("gauge");
      }
    });

    it("shows the same values as /dist/metrics", async () => {
      await put(node, "metrics:c", "3");
      const json = await distMetrics(node);
      const prom = parsePrometheus((await mgmt(node, "GET", "/metrics")).body.toString("utf8"));
      // Metrics that do not move on an idle one-node cluster between the two reads.
      const stable = ["dist.write.attempts", "dist.drains", "dist.nodes.dead", "dist.events.dropped", "dist.hinted.queued"] as const;
      for (const name of stable) expect(prom.value(`${prometheusName(name)}_total`), name).to.equal(json[name]);
      for (const name of ["dist.members.alive", "dist.membership.version", "dist.nodes.suspect"] as const) {
        expect(prom.value(prometheusName(name)), name).to.equal(json[name]);
      }
      expect(json["dist.write.attempts"]).to.be.greaterThan(0);
    });
  });

  describe("GET /cluster/members", () => {
    it("answers {node, replication, virtual_nodes: 128, membership_version, members, known_nodes} with the local node alive", async () => {
      const body = ok<{ node: string; replication: number; virtual_nodes: number; membership_version: number; members: Json[]; known_nodes: string[] }>(await mgmt(node, "GET", "/cluster/members"));
      expect(Object.keys(body).sort()).to.deep.equal(["known_nodes", "members", "membership_version", "node", "replication", "virtual_nodes"]);
      expect(body.known_nodes, "a single node knows only itself").to.deep.equal(["mgmt-api-1"]);
      expect(body).to.include({ node: "mgmt-api-1", replication: 2, virtual_nodes: 128 });
      expect(Number.isInteger(body.membership_version) && body.membership_version >= 1, String(body.membership_version)).to.equal(true);
      expect(body.members).to.have.length(1);
      const self = body.members[0] as Json;
      expect(Object.keys(self).sort()).to.deep.equal(["address", "api_url", "draining", "id", "incarnation", "last_seen", "mgmt_url", "state"]);
      expect(self).to.include({ id: "mgmt-api-1", address: `127.0.0.1:${node.distPort}`, state: "alive", api_url: node.api, mgmt_url: node.mgmt });
      expect(Number.isInteger(self.incarnation) && (self.incarnation as number) >= 1).to.equal(true);
      expect(self.last_seen).to.match(ISO);
    });
  });

  describe("DELETE /cluster/members/{id}", () => {
    it("answers 400 BAD_REQUEST for the local node and leaves membership unchanged", async () => {
      const before = ok<{ membership_version: number }>(await mgmt(node, "GET", "/cluster/members"));
      expectEnvelope(await mgmt(node, "DELETE", "/cluster/members/mgmt-api-1"), 400, "BAD_REQUEST");
      const after = ok<{ membership_version: number; members: Json[] }>(await mgmt(node, "GET", "/cluster/members"));
      expect(after.membership_version).to.equal(before.membership_version);
      expect(after.members.map((m) => m.id)).to.deep.equal(["mgmt-api-1"]);
    });

    it("answers 404 NOT_FOUND for an id that is not a member", async () => {
      const before = ok<{ membership_version: number }>(await mgmt(node, "GET", "/cluster/members"));
      expectEnvelope(await mgmt(node, "DELETE", "/cluster/members/no-such-node"), 404, "NOT_FOUND");
      expect(ok<{ membership_version: number }>(await mgmt(node, "GET", "/cluster/members")).membership_version).to.equal(before.membership_version);
      expect(node.logs.filter((r) => r.message === "peer removed from membership")).to.deep.equal([]);
    });
  });

  describe("POST /trigger-expiration", () => {
    it("removes the items whose ttl passed: {expired: n}, /stats items and expirations move, an info 'expiration tick' record", async () => {
      for (let i = 0; i < 5; i++) await put(node, `exp:short-${i}`, "x", "?ttl=200ms");
      await put(node, "exp:long", "kept", "?ttl=1h");
      const before = await stats(node);
      await sleep(400);
      const r = await mgmt(node, "POST", "/trigger-expiration");
      expect(ok(r)).to.deep.equal({ expired: 5 });
      const after = await stats(node);
      expect(before.items - after.items).to.equal(5);
      expect(after.expirations - before.expirations).to.equal(5);
      const record = await node.waitForLog("expiration tick", 3000, (l) => l.expired === 5);
      expect(record.level).to.equal("info");
      expect((await api(node, "GET", "/v1/cache/exp%3Along")).status).to.equal(200);
      // Nothing left to expire: the next pass reports 0.
      expect(ok(await mgmt(node, "POST", "/trigger-expiration"))).to.deep.equal({ expired: 0 });
    });
  });

  describe("POST /clear", () => {
    it("answers {cleared: n, scope: node} with n the items this node held, then /stats shows 0 items and 0 bytes", async () => {
      for (let i = 0; i < 4; i++) await put(node, `clear:${i}`, "value");
      const before = await stats(node);
      expect(before.items).to.be.at.least(4);
      expect(ok(await mgmt(node, "POST", "/clear"))).to.deep.equal({ cleared: before.items, scope: "node" });
      const after = await stats(node);
      expect({ items: after.items, bytes: after.bytes }).to.deep.equal({ items: 0, bytes: 0 });
      expect((await api(node, "GET", "/v1/cache/clear%3A0")).status).to.equal(404);
      expect(ok(await mgmt(node, "POST", "/clear"))).to.deep.equal({ cleared: 0, scope: "node" });
    });
  });

  describe("POST /evict", () => {
    let small: NodeProcess;
    const CAPACITY = 20;

    before(async () => {
      small = await startNode({
        id: "mgmt-evict-1",
        env: { SERVICE_CAPACITY: String(CAPACITY), SERVICE_EVICTION_SHARDS: "1", SERVICE_EVICTION_INTERVAL: "1h", SERVICE_LOG_LEVEL: "debug" },
      });
      for (let i = 0; i < 50; i++) await put(small, `evict:${i}`, `value-${i}`);
    });

    after(async () => {
      await small?.stop("SIGKILL");
    });

    it("runs one eviction pass: {evicted} > 0, /stats items drop to the capacity, an info 'eviction tick' record with the count", async () => {
      const before = await stats(small);
      expect(before.capacity).to.equal(CAPACITY);
      expect(before.items, "precondition: the node holds more items than its capacity").to.be.greaterThan(CAPACITY);
      const metricsBefore = await distMetrics(small);
      const body = ok<{ evicted: number }>(await mgmt(small, "POST", "/evict"));
      expect(Object.keys(body)).to.deep.equal(["evicted"]);
      expect(body.evicted).to.equal(before.items - CAPACITY);
      const after = await stats(small);
      expect(after.items).to.equal(CAPACITY);
      expect(after.evictions - before.evictions).to.equal(body.evicted);
      const metricsAfter = await distMetrics(small);
      expect(metricsAfter.item_evicted_count! - metricsBefore.item_evicted_count!).to.equal(body.evicted);
      expect(metricsAfter.eviction_loop_count! - metricsBefore.eviction_loop_count!).to.equal(1);
      const record = await small.waitForLog("eviction tick", 3000, (l) => l.evicted === body.evicted);
      expect(record.level).to.equal("info");
    });

    it("a pass with nothing to evict answers {evicted: 0} and logs 'eviction tick (idle)' at debug", async () => {
      expect(ok(await mgmt(small, "POST", "/evict"))).to.deep.equal({ evicted: 0 });
      const record = await small.waitForLog("eviction tick (idle)", 3000);
      expect(record.level).to.equal("debug");
      expect((await stats(small)).items).to.equal(CAPACITY);
    });
  });

  describe("identity routes on the management listener", () => {
    it("GET /v1/me answers the anonymous identity with every scope and capability", async () => {
      expect(ok(await mgmt(node, "GET", "/v1/me"))).to.deep.equal({
        id: "anonymous",
        scopes: ["read", "write", "admin"],
        capabilities: ["cache.read", "cache.write", "cache.admin"],
      });
    });

    it("GET /v1/me/can answers {capability, allowed} and 400 BAD_REQUEST for an unknown or missing capability", async () => {
      for (const cap of ["cache.read", "cache.write", "cache.admin"]) {
        expect(ok(await mgmt(node, "GET", `/v1/me/can?capability=${cap}`))).to.deep.equal({ capability: cap, allowed: true });
      }
      expectEnvelope(await mgmt(node, "GET", "/v1/me/can?capability=cache.fly"), 400, "BAD_REQUEST");
      expectEnvelope(await mgmt(node, "GET", "/v1/me/can"), 400, "BAD_REQUEST");
    });
  });

  describe("unknown routes and the OpenAPI document", () => {
    it("an unknown route answers the 404 NOT_FOUND envelope", async () => {
      expectEnvelope(await mgmt(node, "GET", "/no/such/route"), 404, "NOT_FOUND");
      expectEnvelope(await mgmt(node, "POST", "/v1/cache/some-key"), 404, "NOT_FOUND");
    });

    it("GET /v1/openapi.yaml parses as YAML, is OpenAPI 3.1.x and documents every management route", async () => {
      const r = await mgmt(node, "GET", "/v1/openapi.yaml");
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.match(/yaml/);
      const doc = parseYaml(r.body.toString("utf8")) as { openapi: string; paths: Record<string, Record<string, unknown>> };
      expect(doc.openapi).to.match(/^3\.1\.\d+$/);
      const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
      expect(routes).to.include.members([
        "GET /health",
        "GET /stats",
        "GET /config",
        "GET /dist/metrics",
        "GET /metrics",
        "GET /cluster/members",
        "DELETE /cluster/members/{id}",
        "GET /cluster/events",
        "GET /v1/me",
        "GET /v1/me/can",
        "POST /dist/drain",
        "POST /evict",
        "POST /clear",
        "POST /trigger-expiration",
      ]);
    });
  });
});

describe("management API: OTLP metrics export of a real process", function () {
  this.timeout(20_000);
  let collector: Collector;
  let node: NodeProcess | undefined;

  before(async () => {
    collector = await startCollector();
  });

  after(async () => {
    await node?.stop("SIGKILL");
    await collector?.close();
  });

  it("OTEL_EXPORTER_OTLP_ENDPOINT + OTEL_METRIC_EXPORT_INTERVAL=500 make the node POST OTLP metrics to <endpoint>/v1/metrics every ~500 ms", async () => {
    const started = Date.now();
    node = await startNode({ id: "mgmt-otlp-1", env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_METRIC_EXPORT_INTERVAL: "500" } });
    // The default interval is 15 s: three exports within 4 s only happen with the 500 ms setting.
    const posts = await collector.waitForPosts("/v1/metrics", 3, 4000);
    expect(posts[0]!.at - started, "first export").to.be.lessThan(4000);
    for (const p of posts) {
      expect(p.method).to.equal("POST");
      expect(p.body.length).to.be.greaterThan(0);
    }
    // Protobuf keeps strings as UTF-8 bytes: the OpenTelemetry names and the node id are in there.
    const payload = posts[0]!.body.toString("latin1");
    expect(payload).to.include("dist.write.attempts");
    expect(payload).to.include("http.server.request.duration");
    expect(payload).to.include("mgmt-otlp-1");
    expect(collector.posts.every((p) => p.path === "/v1/metrics"), JSON.stringify(collector.posts.map((p) => p.path))).to.equal(true);
  });
});
