export { Metrics } from "./metrics.js";
export { COUNTERS, GAUGES, METRIC_HELP, type CounterName, type GaugeName, type MetricName } from "./metric-names.js";
export { createOtelMirror, prometheusName, type OtelMirror, type OtelMirrorOptions, type OtlpExporterFactory } from "./otel-mirror.js";
export { LatencyWindow, OperationLatencies, type LatencySummary } from "./latency.js";
export { SseHub, formatFrame, type SseSink } from "./sse-hub.js";
