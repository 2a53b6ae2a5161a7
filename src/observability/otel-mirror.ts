// Exports the node's metrics through OpenTelemetry: a MetricProducer turns the catalog (the dist.*
// registry, cache figures, request and peer-call histograms, runtime) into OpenTelemetry metric
// data at collection time, and the SDK's readers export it: a Prometheus reader whose request
// handler serves /metrics (Prometheus names: base units, _total on counters), and an OTLP/HTTP
// exporter when an endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT, read by server.ts), with the
// OpenTelemetry names and units. One MeterProvider per reader and node, never the global one.
// Nothing is recorded through the SDK's instruments, so the hot path pays no attribute hashing.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ValueType, type HrTime } from "@opentelemetry/api";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import {
  AggregationTemporality, DataPointType, MeterProvider, PeriodicExportingMetricReader, type CollectionResult, type MetricData, type MetricProducer, type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import { collectMetrics, type Collected, type MetricSources } from "./catalog.js";

export { prometheusName } from "./catalog.js";

/** Builds the OTLP exporter for a metrics URL. server.ts loads the exporter module only when an
 * endpoint is configured, which keeps it (and its memory) out of nodes that do not export. */
export type OtlpExporterFactory = (url: string) => PushMetricExporter;

export interface OtelMirrorOptions {
  readonly nodeId: string;
  readonly serviceVersion: string;
  /** Wall-clock Unix ms (the start and end times of the points). */
  readonly nowMs: () => number;
  /** OTLP/HTTP base endpoint (http://collector:4318); metrics go to <endpoint>/v1/metrics. */
  readonly otlpEndpoint?: string;
  /** OTLP export interval, ms. */
  readonly otlpIntervalMs?: number;
  /** Required with otlpEndpoint. */
  readonly otlpExporter?: OtlpExporterFactory;
  /** Told of a /metrics collection that failed (the node logs it); the scrape is answered 500. */
  readonly onScrapeError?: (err: unknown) => void;
}

export interface OtelMirror {
  /** Writes the Prometheus text exposition of every metric. */
  /** Answers a scrape; resolves once the answer is written (so the route's duration metric sees its final status). */
  servePrometheus(req: IncomingMessage, res: ServerResponse): Promise<void>;
  shutdown(): Promise<void>;
}

type Naming = "prometheus" | "otel";

function hrTime(ms: number): HrTime {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
}

/** One catalog entry as OpenTelemetry metric data, under the names of `naming`. */
function toMetricData(c: Collected, naming: Naming, startTime: HrTime, endTime: HrTime): MetricData {
  const prom = naming === "prometheus";
  const scale = prom ? (c.promScale ?? 1) : 1;
  const descriptor = { name: prom ? c.prom : c.otel, description: c.description, unit: prom ? (c.promScale ? "s" : c.unit) : c.unit, valueType: ValueType.DOUBLE };
  const base = { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE };
  if (c.kind === "histogram") {
    const boundaries = c.histogram.boundaries;
    const dataPoints = c.histogram.series.map((s) => ({
      startTime,
      endTime,
      attributes: { ...s.attributes },
      value: { buckets: { boundaries: [...boundaries], counts: [...s.counts] }, sum: s.sum, count: s.count, ...(s.count > 0 ? { min: s.min, max: s.max } : {}) },
    }));
    return { ...base, dataPointType: DataPointType.HISTOGRAM, dataPoints };
  }
  const dataPoints = c.points.map((p) => ({ startTime, endTime, attributes: { ...p.attributes }, value: p.value * scale }));
  if (c.kind === "counter") return { ...base, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints };
  return { ...base, dataPointType: DataPointType.GAUGE, dataPoints };
}

function producer(sources: MetricSources, naming: Naming, resource: Resource, opts: OtelMirrorOptions, startMs: number): MetricProducer {
  return {
    collect: async (): Promise<CollectionResult> => {
      const startTime = hrTime(startMs);
      const endTime = hrTime(opts.nowMs());
      const metrics = collectMetrics(sources).map((c) => toMetricData(c, naming, startTime, endTime));
      return { resourceMetrics: { resource, scopeMetrics: [{ scope: { name: "hypercache-server", version: opts.serviceVersion }, metrics }] }, errors: [] };
    },
  };
}

/** The exporter's own serializer settings: no prefix, no timestamps, target_info, no scope labels. */
const SERIALIZER = new PrometheusSerializer("", false, undefined, false, true);

/**
 * Answers a scrape: 200 and the exposition text, or 500 with the error envelope when the
 * collection fails. The exporter's own handler answered 200 with a "# failed" comment line, which
 * Prometheus takes as a good scrape of no series: every series went stale and `up` stayed 1.
 */
function scrape(prometheus: PrometheusExporter, res: ServerResponse, onError: ((err: unknown) => void) | undefined): Promise<void> {
  return prometheus.collect().then(
    ({ resourceMetrics, errors }) => {
      if (errors.length > 0) throw errors[0];
      res.statusCode = 200;
      res.setHeader("content-type", "text/plain");
      res.end(SERIALIZER.serialize(resourceMetrics));
    },
  ).catch((err: unknown) => {
    onError?.(err);
    if (res.headersSent) return void res.destroy();
    res.statusCode = 500;
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.end(JSON.stringify({ error: "metrics collection failed; see the node's log", code: "INTERNAL" }));
  });
}

export function createOtelMirror(sources: MetricSources, opts: OtelMirrorOptions): OtelMirror {
  const resource = resourceFromAttributes({ "service.name": "hypercache-server", "service.version": opts.serviceVersion, "service.instance.id": opts.nodeId });
  const startMs = opts.nowMs();
  const prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true, metricProducers: [producer(sources, "prometheus", resource, opts, startMs)] });
  const providers = [new MeterProvider({ resource, readers: [prometheus] })];
  if (opts.otlpEndpoint && opts.otlpExporter) {
    const url = `${opts.otlpEndpoint.replace(/\/+$/, "")}/v1/metrics`;
    const reader = new PeriodicExportingMetricReader({
      exporter: opts.otlpExporter(url),
      exportIntervalMillis: opts.otlpIntervalMs ?? 15_000,
      metricProducers: [producer(sources, "otel", resource, opts, startMs)],
    });
    providers.push(new MeterProvider({ resource, readers: [reader] }));
  }
  return {
    servePrometheus: (_req, res) => scrape(prometheus, res, opts.onScrapeError),
    shutdown: async () => {
      await Promise.all(providers.map((p) => p.shutdown()));
    },
  };
}
