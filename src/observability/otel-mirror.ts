// Mirrors the node's Metrics registry through the OpenTelemetry metrics API: one MeterProvider
// per node (never the global one), observable instruments that read the registry at collection
// time, a Prometheus reader whose request handler serves /metrics, and an OTLP/HTTP exporter
// when an endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT, read by main.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { COUNTERS, GAUGES, METRIC_HELP, type MetricName } from "./metric-names.js";
import type { Metrics } from "./metrics.js";

/** Builds the OTLP exporter for a metrics URL. main.ts loads the exporter module only when an
 * endpoint is configured, which keeps it (and its memory) out of nodes that do not export. */
export type OtlpExporterFactory = (url: string) => PushMetricExporter;

export interface OtelMirrorOptions {
  readonly nodeId: string;
  readonly serviceVersion: string;
  /** OTLP/HTTP base endpoint (http://collector:4318); metrics go to <endpoint>/v1/metrics. */
  readonly otlpEndpoint?: string;
  /** OTLP export interval, ms. */
  readonly otlpIntervalMs?: number;
  /** Required with otlpEndpoint. */
  readonly otlpExporter?: OtlpExporterFactory;
}

export interface OtelMirror {
  /** Writes the Prometheus text exposition of every instrument. */
  servePrometheus(req: IncomingMessage, res: ServerResponse): void;
  shutdown(): Promise<void>;
}

/** Prometheus names cannot hold dots: "dist.write.attempts" becomes "dist_write_attempts". */
export function prometheusName(name: MetricName): string {
  return name.replace(/\./g, "_");
}

export function createOtelMirror(metrics: Metrics, opts: OtelMirrorOptions): OtelMirror {
  const prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  const readers: MetricReader[] = [prometheus];
  if (opts.otlpEndpoint && opts.otlpExporter) {
    const url = `${opts.otlpEndpoint.replace(/\/+$/, "")}/v1/metrics`;
    readers.push(new PeriodicExportingMetricReader({ exporter: opts.otlpExporter(url), exportIntervalMillis: opts.otlpIntervalMs ?? 15_000 }));
  }
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": "hypercache-server", "service.version": opts.serviceVersion, "service.instance.id": opts.nodeId }),
    readers,
  });
  const meter = provider.getMeter("hypercache-server");
  for (const name of COUNTERS) {
    meter.createObservableCounter(prometheusName(name), { description: METRIC_HELP[name] }).addCallback((r) => r.observe(metrics.get(name)));
  }
  for (const name of GAUGES) {
    meter.createObservableGauge(prometheusName(name), { description: METRIC_HELP[name] }).addCallback((r) => r.observe(metrics.get(name)));
  }
  return {
    servePrometheus: (req, res) => prometheus.getMetricsRequestHandler(req, res),
    shutdown: () => provider.shutdown(),
  };
}
