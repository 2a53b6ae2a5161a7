// The OpenTelemetry mirror of a Metrics registry: Prometheus text served by servePrometheus over
// a real node:http server holds every counter (name with underscores, `_total`) and gauge with
// the registry's current value; and with otlpEndpoint + otlpIntervalMs it POSTs OTLP/HTTP
// metrics to <endpoint>/v1/metrics of a tiny local collector on that interval.
import http from "node:http";
import type net from "node:net";
import { expect } from "chai";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { COUNTERS, GAUGES, METRIC_HELP, Metrics, createOtelMirror, prometheusName, type OtelMirror } from "../../../src/observability/index.js";
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


/** The exporter main.ts loads when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
const otlpExporter = (url: string) => new OTLPMetricExporter({ url });

describe("observability/otel-mirror", function () {
  this.timeout(10_000);

  it("prometheusName replaces every dot with an underscore", () => {
    expect(prometheusName("dist.heartbeat.indirect_probe.success")).to.equal("dist_heartbeat_indirect_probe_success");
    expect(prometheusName("eviction_loop_count")).to.equal("eviction_loop_count");
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
      mirror = createOtelMirror(metrics, { nodeId: "unit-node", serviceVersion: "9.9.9" });
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

    it("shows every gauge as <name with underscores> of TYPE gauge with the registry's value", async () => {
      const prom = parsePrometheus((await server.scrape()).text);
      GAUGES.forEach((name, i) => {
        const prom_name = prometheusName(name);
        expect(prom.value(prom_name), prom_name).to.equal(5000 + i);
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
      mirror = createOtelMirror(metrics, { nodeId: "otlp-node", serviceVersion: "1.0.0", otlpEndpoint: collector.endpoint, otlpIntervalMs: 200, otlpExporter });
      // Two exports within ~2 intervals plus slack; the 15 s default would send none in this time.
      const posts = await collector.waitForPosts("/v1/metrics", 2, 3000);
      expect(posts[0]?.at as number - started, "first export after about one interval").to.be.lessThan(2000);
      for (const p of posts) {
        expect(p.method).to.equal("POST");
        expect(p.contentType).to.match(/^application\/(x-protobuf|json)/);
        expect(p.body.length).to.be.greaterThan(0);
      }
      // The payload names the instruments (protobuf keeps strings as UTF-8 bytes).
      const payload = posts[0]?.body.toString("latin1") ?? "";
      expect(payload).to.include("dist_drains");
      expect(payload).to.include("otlp-node");
    });

    it("a trailing slash on the endpoint still gives /v1/metrics", async () => {
      mirror = createOtelMirror(new Metrics(), { nodeId: "otlp-node", serviceVersion: "1.0.0", otlpEndpoint: `${collector.endpoint}/`, otlpIntervalMs: 200, otlpExporter });
      const posts = await collector.waitForPosts("/v1/metrics", 1, 3000);
      expect(posts[0]?.path).to.equal("/v1/metrics");
      expect(collector.posts.every((p) => p.path === "/v1/metrics"), JSON.stringify(collector.posts.map((p) => p.path))).to.equal(true);
    });
  });
});
