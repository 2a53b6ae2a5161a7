// Every metric the node exports, read at collection time from where it is kept: the dist.*
// registry (names fixed by SPEC.md), the cache figures, request and peer-call durations and the
// runtime. Each metric has its OpenTelemetry name and unit (OTLP) and its Prometheus name (base
// units: durations in seconds, sizes in bytes; the exporter adds _total to counters), so
// `promtool check metrics` finds nothing to complain about.
import type { Attributes, Histogram } from "./histogram.js";
import type { HttpServerDurations } from "./http-durations.js";
import { COUNTERS, GAUGES, METRIC_HELP, type MetricName } from "./metric-names.js";
import type { Metrics } from "./metrics.js";
import type { PeerCallMetrics } from "./peer-call-metrics.js";
import type { RuntimeMetrics } from "./runtime-metrics.js";

/** Items and bytes held in one ownership role. */
export interface RoleFigures {
  readonly items: number;
  readonly bytes: number;
}

/** The parts of cache.store.memory. */
type StorePart = "records" | "garbage" | "free" | "large";
const STORE_PARTS: readonly StorePart[] = ["records", "garbage", "free", "large"];

/** The cache as an operator reads it (Redis INFO, memcached stats). */
export interface CacheFigures {
  /** Client reads answered by this node (batch get keys included): found, not found. */
  readonly hits: number;
  readonly misses: number;
  readonly sets: number;
  readonly deletes: number;
  readonly evictions: number;
  readonly expirations: number;
  readonly items: number;
  readonly bytes: number;
  readonly capacity: number;
  /** Live key and value bytes held now, and their limit (SERVICE_MAX_DATA_BYTES; 0: none). */
  readonly dataBytes: number;
  readonly maxDataBytes: number;
  readonly tombstones: number;
  /** Bytes of the store's records by where they sit: live in pages, garbage, free page space, large records. */
  readonly storeMemory: Readonly<Record<StorePart, number>>;
  /** Live items by this node's role for the key (the last ownership census), when taken. */
  readonly byRole: { readonly primary: RoleFigures; readonly replica: RoleFigures; readonly none: RoleFigures } | undefined;
}

/** Where the metrics are read from. */
export interface MetricSources {
  readonly metrics: Metrics;
  readonly http: HttpServerDurations;
  readonly peers: PeerCallMetrics;
  readonly runtime: RuntimeMetrics;
  readonly cache: () => CacheFigures;
  /** The client listener's large bodies and answers under way (SERVICE_MAX_INFLIGHT_BYTES). */
  readonly inflight: InflightFigures;
}

/** What ClientBytesBudget shows (http/client-bytes-budget.ts). */
export interface InflightFigures {
  readonly heldBytes: number;
  readonly maxBytes: number;
  readonly refused: { readonly answer: number; readonly body: number };
}

interface Meta {
  /** OpenTelemetry name (OTLP). */
  readonly otel: string;
  /** Prometheus name, without the _total the exporter adds to counters. */
  readonly prom: string;
  /** UCUM unit of the OpenTelemetry value. */
  readonly unit: string;
  readonly description: string;
  /** Factor from the OpenTelemetry value to the Prometheus one (ns gauges shown in seconds). */
  readonly promScale?: number;
}

export interface Point {
  readonly attributes: Attributes;
  readonly value: number;
}

export type Collected = (Meta & { readonly kind: "counter" | "gauge"; readonly points: readonly Point[] }) | (Meta & { readonly kind: "histogram"; readonly histogram: Histogram });

/** Prometheus names cannot hold dots: "dist.write.attempts" becomes "dist_write_attempts". */
export function prometheusName(name: MetricName): string {
  if (name === "eviction_loop_duration") return "eviction_loop_duration_seconds";
  const underscored = name.replace(/\./g, "_");
  return underscored.endsWith("_ns") ? `${underscored.slice(0, -3)}_seconds` : underscored;
}

/** The dist.* registry: counters and gauges under their SPEC names; ns gauges in seconds for Prometheus. */
function registryMetrics(metrics: Metrics): Collected[] {
  const out: Collected[] = [];
  const ns = (n: MetricName) => n.endsWith("_ns") || n === "eviction_loop_duration";
  for (const name of COUNTERS) out.push({ kind: "counter", otel: name, prom: prometheusName(name), unit: "1", description: METRIC_HELP[name], points: [{ attributes: {}, value: metrics.get(name) }] });
  for (const name of GAUGES) {
    const meta = { otel: name, prom: prometheusName(name), unit: ns(name) ? "ns" : name.endsWith("bytes") ? "By" : "1", description: METRIC_HELP[name], ...(ns(name) ? { promScale: 1e-9 } : {}) };
    out.push({ kind: "gauge", ...meta, points: [{ attributes: {}, value: metrics.get(name) }] });
  }
  return out;
}

function cacheMetrics(c: CacheFigures): Collected[] {
  const roles = c.byRole ? (["primary", "replica", "none"] as const).map((role) => ({ role, f: c.byRole?.[role] as RoleFigures })) : [];
  return [
    { kind: "counter", otel: "cache.gets", prom: "cache_gets", unit: "{request}", description: "client reads answered by this node, by result (hit: found, miss: not found), counted as /stats counts them", points: [{ attributes: { result: "hit" }, value: c.hits }, { attributes: { result: "miss" }, value: c.misses }] },
    { kind: "counter", otel: "cache.sets", prom: "cache_sets", unit: "{request}", description: "values stored in this node's store (client writes and replicas)", points: [{ attributes: {}, value: c.sets }] },
    { kind: "counter", otel: "cache.deletes", prom: "cache_deletes", unit: "{request}", description: "deletes applied to this node's store", points: [{ attributes: {}, value: c.deletes }] },
    { kind: "counter", otel: "cache.evictions", prom: "cache_evictions", unit: "{item}", description: "items evicted at capacity", points: [{ attributes: {}, value: c.evictions }] },
    { kind: "counter", otel: "cache.expirations", prom: "cache_expirations", unit: "{item}", description: "items removed because their TTL passed", points: [{ attributes: {}, value: c.expirations }] },
    { kind: "gauge", otel: "cache.items", prom: "cache_items", unit: "{item}", description: "live items held, by this node's role for the key (primary, replica, none while it moves), from the last ownership census", points: roles.map((r) => ({ attributes: { role: r.role }, value: r.f.items })) },
    { kind: "gauge", otel: "cache.bytes", prom: "cache_bytes", unit: "By", description: "bytes of keys and values of live items held, by role, from the last ownership census", points: roles.map((r) => ({ attributes: { role: r.role }, value: r.f.bytes })) },
    { kind: "gauge", otel: "cache.items.held", prom: "cache_items_held", unit: "{item}", description: "items held now (replicas included; the capacity counts these)", points: [{ attributes: {}, value: c.items }] },
    { kind: "gauge", otel: "cache.capacity", prom: "cache_capacity", unit: "{item}", description: "item capacity of this node (SERVICE_CAPACITY)", points: [{ attributes: {}, value: c.capacity }] },
    { kind: "gauge", otel: "cache.data.held", prom: "cache_data_held_bytes", unit: "By", description: "bytes of keys and values of the live items held now (SERVICE_MAX_DATA_BYTES counts these)", points: [{ attributes: {}, value: c.dataBytes }] },
    { kind: "gauge", otel: "cache.data.limit", prom: "cache_data_limit_bytes", unit: "By", description: "bytes of keys and values this node holds at most (SERVICE_MAX_DATA_BYTES; 0 means no byte limit)", points: [{ attributes: {}, value: c.maxDataBytes }] },
    { kind: "gauge", otel: "cache.tombstones", prom: "cache_tombstones", unit: "{item}", description: "delete markers held", points: [{ attributes: {}, value: c.tombstones }] },
    {
      kind: "gauge",
      otel: "cache.store.memory",
      prom: "cache_store_memory_bytes",
      unit: "By",
      description: "bytes of the store's records outside the JS heap, by part: records (live, in pages), garbage (replaced or removed, until the next compaction), free (page space holding nothing), large (records with a buffer of their own)",
      points: STORE_PARTS.map((part) => ({ attributes: { part }, value: c.storeMemory[part] })),
    },
  ];
}

function runtimeMetrics(r: RuntimeMetrics): Collected[] {
  const d = r.eventLoopDelay;
  const delay = (q: keyof typeof d, what: string): Collected => ({ kind: "gauge", otel: `nodejs.eventloop.delay.${q}`, prom: `nodejs_eventloop_delay_${q}_seconds`, unit: "s", description: `event-loop delay, ${what}, over the last 10 s`, points: [{ attributes: {}, value: d[q] }] });
  const m = r.memory();
  const cpu = r.cpu();
  const bytes = (otel: string, prom: string, description: string, value: number): Collected => ({ kind: "gauge", otel, prom, unit: "By", description, points: [{ attributes: {}, value }] });
  return [
    delay("min", "minimum"), delay("max", "maximum"), delay("mean", "mean"), delay("p50", "50th percentile"), delay("p90", "90th percentile"), delay("p99", "99th percentile"),
    { kind: "gauge", otel: "nodejs.eventloop.utilization", prom: "nodejs_eventloop_utilization_ratio", unit: "1", description: "share of time the event loop was busy since the previous collection", points: [{ attributes: {}, value: r.eventLoopUtilization() }] },
    bytes("v8js.memory.heap.used", "v8js_memory_heap_used_bytes", "V8 heap in use", m.heapUsed),
    bytes("v8js.memory.heap.live", "v8js_memory_heap_live_bytes", "V8 heap in use just after the last full garbage collection (0 before the first)", m.heapLive),
    bytes("v8js.memory.heap.committed", "v8js_memory_heap_committed_bytes", "V8 heap committed", m.heapTotal),
    bytes("v8js.memory.heap.limit", "v8js_memory_heap_limit_bytes", "V8 heap limit (--max-old-space-size)", m.heapLimit),
    bytes("nodejs.memory.external", "nodejs_memory_external_bytes", "memory of Buffers and other objects outside the V8 heap", m.external),
    bytes("nodejs.memory.array_buffers", "nodejs_memory_array_buffers_bytes", "memory of ArrayBuffers and Buffers (part of the external memory)", m.arrayBuffers),
    bytes("nodejs.memory.array_buffers.live", "nodejs_memory_array_buffers_live_bytes", "memory of ArrayBuffers and Buffers just after the last full garbage collection (0 before the first)", m.arrayBuffersLive),
    bytes("process.memory.usage", "process_memory_usage_bytes", "resident set size of the process", m.rss),
    { kind: "counter", otel: "process.cpu.time", prom: "process_cpu_time_seconds", unit: "s", description: "CPU time used by the process, by mode", points: [{ attributes: { "cpu.mode": "user" }, value: cpu.user }, { attributes: { "cpu.mode": "system" }, value: cpu.system }] },
    { kind: "histogram", otel: "v8js.gc.duration", prom: "v8js_gc_duration_seconds", unit: "s", description: "garbage-collection pauses, by kind", histogram: r.gc },
  ];
}

/** Every metric with its current points. */
export function collectMetrics(s: MetricSources): Collected[] {
  return [
    ...registryMetrics(s.metrics),
    ...cacheMetrics(s.cache()),
    { kind: "histogram", otel: "http.server.request.duration", prom: "http_server_request_duration_seconds", unit: "s", description: "duration of HTTP requests on the client and management listeners", histogram: s.http.histogram },
    { kind: "gauge", otel: "http.server.inflight.held", prom: "http_server_inflight_held_bytes", unit: "By", description: "bytes of request bodies and answers over 16 KiB that the client listener holds for its clients now (bodies while they arrive and are used, answers until their clients take them)", points: [{ attributes: {}, value: s.inflight.heldBytes }] },
    { kind: "gauge", otel: "http.server.inflight.limit", prom: "http_server_inflight_limit_bytes", unit: "By", description: "bytes of such bodies and answers the client listener holds at most (SERVICE_MAX_INFLIGHT_BYTES; 0 means no limit)", points: [{ attributes: {}, value: s.inflight.maxBytes }] },
    { kind: "counter", otel: "http.server.inflight.refused", prom: "http_server_inflight_refused", unit: "{request}", description: "requests refused 503 because their answer or body would pass SERVICE_MAX_INFLIGHT_BYTES, by which", points: [{ attributes: { of: "answer" }, value: s.inflight.refused.answer }, { attributes: { of: "body" }, value: s.inflight.refused.body }] },
    { kind: "histogram", otel: "dist.peer.call.duration", prom: "dist_peer_call_duration_seconds", unit: "s", description: "duration of peer calls (RPCs and exchange frames) this node sent, by method and peer", histogram: s.peers.durations.histogram },
    { kind: "counter", otel: "dist.peer.failures", prom: "dist_peer_failures", unit: "{call}", description: "peer calls that failed, by method and peer", points: s.peers.failures().map((f) => ({ attributes: { method: f.method, peer: f.peer }, value: f.count })) },
    ...runtimeMetrics(s.runtime),
  ];
}
