// The OpenTelemetry mirror of a Metrics registry: Prometheus text served by servePrometheus over
// a real node:http server holds every counter (name with underscores, `_total`) and gauge with
// the registry's current value; and with otlpEndpoint + otlpIntervalMs it POSTs OTLP/HTTP
// metrics to <endpoint>/v1/metrics of a tiny local collector on that interval.
import http from "node:http";
import type net from "node:net";
import { expect } from "chai";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import {
  COUNTERS, GAUGES, METRIC_HELP, Metrics, createOtelMirror, prometheusName, HttpServerDurations, PeerCallMetrics, RuntimeMetrics, type CacheFigures, type MetricSources, type OtelMirror,
} from "../../../src/observability/index.js";
import { parsePrometheus, startCollector, type Collector } from "../../integration/observability-helpers.js";

/** Serves the mirror's Prometheus handler on 127.0.0.1 and returns a scrape function. */
async function serve(mirror: OtelMirror): Promise<{ scrape: () => Promise<{ status: number; type: string; text: string }>; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => mirror.servePrometheus(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    scrape: async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}


const CACHE: CacheFigures = {
  hits: 7, misses: 3, sets: 11, deletes: 2, evictions: 5, expirations: 4, items: 9, bytes: 900, capacity: 100, dataBytes: 1000, maxDataBytes: 4000, tombstones: 1, storeMemory: { records: 700, garbage: 60, free: 40, large: 5000 },
  byRole: { primary: { items: 4, bytes: 400 }, replica: { items: 3, bytes: 300 }, none: { items: 2, bytes: 200 } },
};

/** Sources around a registry, with fixed cache figures and empty histograms. */
function sourcesOf(metrics: Metrics, extra: Partial<MetricSources> = {}): MetricSources {
  return { metrics, http: new HttpServerDurations(), peers: new PeerCallMetrics(), runtime: new RuntimeMetrics(), cache: () => CACHE, inflight: { heldBytes: 123, maxBytes: 4567, refused: { answer: 2, body: 1 } }, ...extra };
}

const OPTS = { nowMs: () => Date.now() };

/** A mirror whose collection fails (its cache figures throw). */
function failingMirror(): OtelMirror {
  const cache = (): CacheFigures => {
    throw new Error("figures unavailable");
  };
  return createOtelMirror(sourcesOf(new Metrics(), { cache }), { ...OPTS, nodeId: "n", serviceVersion: "1" });
}

/** The exporter main.ts loads when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
const otlpExporter = (url: string) => new OTLPMetricExporter({ url });

describe("observability/otel-mirror", function () {
  this.timeout(10_000);

  it("prometheusName replaces every dot with an underscore, and names nanosecond gauges in seconds", () => {
    expect(prometheusName("dist.heartbeat.indirect_probe.success")).to.equal("dist_heartbeat_indirect_probe_success");
    expect(prometheusName("eviction_loop_count")).to.equal("eviction_loop_count");
    expect(prometheusName("dist.rebalance.last_ns")).to.equal("dist_rebalance_last_seconds");
    expect(prometheusName("eviction_loop_duration")).to.equal("eviction_loop_duration_seconds");
  });

  describe("Prometheus text from servePrometheus", () => {
    let metrics: Metrics;
    let mirror: OtelMirror;
    let server: Awaited<ReturnType<typeof serve>>;

    before(async () => {
      metrics = new Metrics();
      // A distinct value per metric, so a value shown under the wrong name is caught.
      COUNTERS.forEach((name, i) => metrics.inc(name, 1000 + i));
      GAUGES.forEach((name, i) => metrics.set(name, 5000 + i));
      mirror = createOtelMirror(sourcesOf(metrics), { ...OPTS, nodeId: "unit-node", serviceVersion: "9.9.9" });
      server = await serve(mirror);
    });

    after(async () => {
      await server?.close();
      await mirror?.shutdown();
    });

    it("answers 200 text/plain that parses as the exposition format", async () => {
      const r = await server.scrape();
      expect(r.status).to.equal(200);
      expect(r.type).to.match(/^text\/plain/);
      const prom = parsePrometheus(r.text);
      expect(prom.samples.length).to.be.greaterThan(COUNTERS.length + GAUGES.length - 1);
      for (const s of prom.samples) expect(Number.isNaN(s.value), `${s.name} is numeric`).to.equal(false);
    });

    it("shows every counter as <name with underscores>_total of TYPE counter with the registry's value and help text", async () => {
      const prom = parsePrometheus((await server.scrape()).text);
      COUNTERS.forEach((name, i) => {
        const prom_name = `${prometheusName(name)}_total`;
        expect(prom.value(prom_name), prom_name).to.equal(1000 + i);
        expect(prom.families.get(prom_name)?.type, `# TYPE ${prom_name}`).to.equal("counter");
        expect(prom.families.get(prom_name)?.help, `# HELP ${prom_name}`).to.equal(METRIC_HELP[name]);
      });
    });

    it("shows every gauge as <name with underscores> of TYPE gauge with the registry's value (nanosecond gauges in seconds)", async () => {
      const prom = parsePrometheus((await server.scrape()).text);
      GAUGES.forEach((name, i) => {
        const prom_name = prometheusName(name);
        const seconds = prom_name.endsWith("_seconds");
        expect(prom.value(prom_name), prom_name).to.be.closeTo(seconds ? (5000 + i) / 1e9 : 5000 + i, 1e-15);
        expect(prom.families.get(prom_name)?.type, `# TYPE ${prom_name}`).to.equal("gauge");
      });
    });

    it("no sample name keeps a dot, and the node identity is in target_info", async () => {
      const prom = parsePrometheus((await server.scrape()).text);
      expect(prom.samples.filter((s) => s.name.includes("."))).to.deep.equal([]);
      const info = prom.samples.find((s) => s.name === "target_info");
      expect(info?.labels).to.include({ service_name: "hypercache-server", service_instance_id: "unit-node", service_version: "9.9.9" });
    });

    it("reads the registry at scrape time: a change shows in the next scrape", async () => {
      metrics.inc("dist.write.attempts", 7);
      metrics.set("dist.members.alive", 42);
      const prom = parsePrometheus((await server.scrape()).text);
      expect(prom.value("dist_write_attempts_total")).to.equal(metrics.get("dist.write.attempts"));
      expect(prom.value("dist_members_alive")).to.equal(42);
    });
  });

  it("a collection that fails answers 500 with the error envelope, so the scrape counts as failed (it was 200 with a comment: no series, up = 1)", async () => {
    const mirror = failingMirror();
    const server = await serve(mirror);
    try {
      const r = await server.scrape();
      expect([r.status, r.type]).to.deep.equal([500, "application/json; charset=utf-8"]);
      expect(JSON.parse(r.text)).to.deep.equal({ error: "metrics collection failed; see the node's log", code: "INTERNAL" });
    } finally {
      await server.close();
      await mirror.shutdown();
    }
  });

  it("servePrometheus resolves once the answer is written, so the route records the scrape's final status (a failed one was recorded as 200)", async () => {
    const failing = failingMirror();
    const working = createOtelMirror(sourcesOf(new Metrics()), { ...OPTS, nodeId: "n", serviceVersion: "1" });
    const seen: Array<[number, boolean]> = [];
    for (const mirror of [failing, working]) {
      const server = http.createServer((req, res) => {
        void mirror.servePrometheus(req, res).then(() => seen.push([res.statusCode, res.writableEnded]));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      await (await fetch(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/metrics`)).text();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mirror.shutdown();
    }
    expect(seen).to.deep.equal([
      [500, true],
      [200, true],
    ]);
  });

  describe("operator metrics in Prometheus text", () => {
    it("cache figures: cache_gets_total by result, items and bytes by role, evictions, expirations, tombstones, store memory by part", async () => {
      const mirror = createOtelMirror(sourcesOf(new Metrics()), { ...OPTS, nodeId: "n", serviceVersion: "1" });
      const server = await serve(mirror);
      try {
        const prom = parsePrometheus((await server.scrape()).text);
        const v = (name: string, labels: Record<string, string> = {}) => prom.samples.find((s) => s.name === name && Object.entries(labels).every(([k, x]) => s.labels[k] === x))?.value;
        expect(v("cache_gets_total", { result: "hit" })).to.equal(7);
        expect(v("cache_gets_total", { result: "miss" })).to.equal(3);
        expect(prom.families.get("cache_gets_total")?.type).to.equal("counter");
        expect(v("cache_items", { role: "primary" })).to.equal(4);
        expect(v("cache_items", { role: "replica" })).to.equal(3);
        expect(v("cache_bytes", { role: "none" })).to.equal(200);
        expect(v("cache_evictions_total")).to.equal(5);
        expect(v("cache_expirations_total")).to.equal(4);
        expect(v("cache_tombstones")).to.equal(1);
        expect(v("cache_items_held")).to.equal(9);
        expect(v("cache_store_memory_bytes", { part: "records" })).to.equal(700);
        expect(v("cache_store_memory_bytes", { part: "garbage" })).to.equal(60);
        expect(v("cache_store_memory_bytes", { part: "free" })).to.equal(40);
        expect(v("cache_store_memory_bytes", { part: "large" })).to.equal(5000);
      } finally {
        await server.close();
        await mirror.shutdown();
      }
    });

    it("http_server_request_duration_seconds is a histogram with the semantic-convention labels and cumulative buckets", async () => {
      const http = new HttpServerDurations();
      const route = http.listener("http", 8080).route("/v1/cache/{key}");
      route.record("GET", 200, 0.0003);
      route.record("GET", 200, 0.002);
      route.record("GET", 404, 0.0001);
      http.listener("http", 8081).route("/cluster/members/:id").record("DELETE", 404, 0.001);
      const mirror = createOtelMirror(sourcesOf(new Metrics(), { http }), { ...OPTS, nodeId: "n", serviceVersion: "1" });
      const server = await serve(mirror);
      try {
        const prom = parsePrometheus((await server.scrape()).text);
        expect(prom.families.get("http_server_request_duration_seconds")?.type).to.equal("histogram");
        const ok = { http_route: "/v1/cache/{key}", http_request_method: "GET", http_response_status_code: "200", url_scheme: "http", server_port: "8080" };
        const of = (name: string, labels: Record<string, string>) => prom.samples.find((s) => s.name === name && Object.entries(labels).every(([k, x]) => s.labels[k] === x))?.value;
        expect(of("http_server_request_duration_seconds_count", ok)).to.equal(2);
        expect(of("http_server_request_duration_seconds_sum", ok)).to.be.closeTo(0.0023, 1e-9);
        expect(of("http_server_request_duration_seconds_bucket", { ...ok, le: "0.0005" })).to.equal(1);
        expect(of("http_server_request_duration_seconds_bucket", { ...ok, le: "+Inf" })).to.equal(2);
        expect(of("http_server_request_duration_seconds_count", { http_route: "/cluster/members/{id}", http_request_method: "DELETE" })).to.equal(1);
      } finally {
        await server.close();
        await mirror.shutdown();
      }
    });

    it("peer calls: dist_peer_call_duration_seconds and dist_peer_failures_total by method and peer; runtime gauges in seconds and bytes", async () => {
      const peers = new PeerCallMetrics();
      peers.record("Set", "n2", 0.004, true);
      peers.record("Set", "n2", 5, false);
      const mirror = createOtelMirror(sourcesOf(new Metrics(), { peers }), { ...OPTS, nodeId: "n", serviceVersion: "1" });
      const server = await serve(mirror);
      try {
        const prom = parsePrometheus((await server.scrape()).text);
        const of = (name: string, labels: Record<string, string> = {}) => prom.samples.find((s) => s.name === name && Object.entries(labels).every(([k, x]) => s.labels[k] === x))?.value;
        expect(of("dist_peer_call_duration_seconds_count", { method: "Set", peer: "n2" })).to.equal(2);
        expect(of("dist_peer_failures_total", { method: "Set", peer: "n2" })).to.equal(1);
        expect(of("process_memory_usage_bytes")).to.be.greaterThan(0);
        expect(of("v8js_memory_heap_used_bytes")).to.be.greaterThan(0);
        // The soak reads both (gates.ts retainedBytes); live is 0 before the first full collection.
        expect(of("nodejs_memory_array_buffers_bytes")).to.be.greaterThan(0);
        expect(of("nodejs_memory_array_buffers_live_bytes")).to.be.a("number");
        expect(of("process_cpu_time_seconds_total", { cpu_mode: "user" })).to.be.greaterThan(0);
        expect(prom.families.has("nodejs_eventloop_delay_p99_seconds")).to.equal(true);
      } finally {
        await server.close();
        await mirror.shutdown();
      }
    });
    it("a departed peer's series leave the scrape once forgotten; late calls add none, and a peer back starts fresh", async () => {
      const peers = new PeerCallMetrics();
      peers.record("Set", "n2", 0.004, false);
      peers.record("Gossip", "n2", 0.001, true);
      peers.record("Set", "n3", 0.002, false);
      const mirror = createOtelMirror(sourcesOf(new Metrics(), { peers }), { ...OPTS, nodeId: "n", serviceVersion: "1" });
      const server = await serve(mirror);
      try {
        const peersIn = async (name: string) => [...new Set((parsePrometheus((await server.scrape()).text).samples.filter((s) => s.name === name).map((s) => s.labels.peer)))].sort();
        expect(await peersIn("dist_peer_call_duration_seconds_count")).to.deep.equal(["n2", "n3"]);
        let gone = new Set(["n2"]);
        peers.followDepartures((id) => gone.has(id));
        expect(await peersIn("dist_peer_call_duration_seconds_count")).to.deep.equal(["n3"]);
        expect(await peersIn("dist_peer_failures_total")).to.deep.equal(["n3"]);
        peers.record("Set", "n2", 0.003, false);
        expect(await peersIn("dist_peer_call_duration_seconds_count"), "a late call to a departed peer").to.deep.equal(["n3"]);
        gone = new Set();
        peers.forgetDeparted();
        peers.record("Set", "n2", 0.003, true);
        const prom = parsePrometheus((await server.scrape()).text);
        const count = prom.samples.find((s) => s.name === "dist_peer_call_duration_seconds_count" && s.labels.peer === "n2" && s.labels.method === "Set")?.value;
        expect(count, "a peer that comes back starts a new series").to.equal(1);
        expect(prom.samples.some((s) => s.labels.peer === "n2" && s.labels.method === "Gossip"), "the forgotten Gossip series").to.equal(false);
      } finally {
        await server.close();
        await mirror.shutdown();
      }
    });
  });

  describe("OTLP/HTTP export", () => {
    let collector: Collector;
    let mirror: OtelMirror | undefined;

    beforeEach(async () => {
      collector = await startCollector();
    });

    afterEach(async () => {
      await mirror?.shutdown().catch(() => undefined);
      mirror = undefined;
      await collector.close();
    });

    it("POSTs metrics to <endpoint>/v1/metrics on the configured interval", async () => {
      const metrics = new Metrics();
      metrics.inc("dist.drains", 3);
      const started = Date.now();
      mirror = createOtelMirror(sourcesOf(metrics), { ...OPTS, nodeId: "otlp-node", serviceVersion: "1.0.0", otlpEndpoint: collector.endpoint, otlpIntervalMs: 200, otlpExporter });
      // Two exports within ~2 intervals plus slack; the 15 s default would send none in this time.
      const posts = await collector.waitForPosts("/v1/metrics", 2, 3000);
      expect(posts[0]?.at as number - started, "first export after about one interval").to.be.lessThan(2000);
      for (const p of posts) {
        expect(p.method).to.equal("POST");
        expect(p.contentType).to.match(/^application\/(x-protobuf|json)/);
        expect(p.body.length).to.be.greaterThan(0);
      }
      // The payload names the instruments by their OpenTelemetry names (protobuf keeps strings as UTF-8 bytes).
      const payload = posts[0]?.body.toString("latin1") ?? "";
      expect(payload).to.include("dist.drains");
      expect(payload).to.include("http.server.request.duration");
      expect(payload).to.include("cache.gets");
      expect(payload).to.include("otlp-node");
    });

    it("a trailing slash on the endpoint still gives /v1/metrics", async () => {
      mirror = createOtelMirror(sourcesOf(new Metrics()), { ...OPTS, nodeId: "otlp-node", serviceVersion: "1.0.0", otlpEndpoint: `${collector.endpoint}/`, otlpIntervalMs: 200, otlpExporter });
      const posts = await collector.waitForPosts("/v1/metrics", 1, 3000);
      expect(posts[0]?.path).to.equal("/v1/metrics");
      expect(collector.posts.every((p) => p.path === "/v1/metrics"), JSON.stringify(collector.posts.map((p) => p.path))).to.equal(true);
    });
  });
});
