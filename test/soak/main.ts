// npm run soak: three nodes on loopback under steady traffic for 10 minutes (--seconds to change),
// sampled every 10 s: RSS of each process (/proc/<pid>/status), items, and from the node's own
// /metrics its heap (in use, committed, live after the last full collection) and its event-loop
// delay (monitorEventLoopDelay, p99 and max of the last 10 s). Gates, on retained memory (RSS less
// garbage waiting for a collection, in the V8 heap and in Buffers; gates.ts): final ≤ 1.10 × the figure at 20% of the run
// (minute 2 of 10; medians over ±30 s and over the last 60 s); slope after that < 1%/min (runs of
// 10 minutes or more; shorter ones report it); raw RSS is
// reported beside them. The event-loop delay p99 of every 10 s window ≤ 40 ms (beyond the node's sampling interval); no 500; no crash. A probe from outside (a
// worker timing GET /healthz every 100 ms) is reported beside it: it adds the HTTP round trip and
// the wait for a core, which on a loaded machine is most of it. Report in soak-out/.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { startCluster, type NodeProcess } from "../helpers/node-process.js";
import { parsePrometheus } from "../integration/observability-helpers.js";
import { parseSoakOptions, SOAK_USAGE, type SoakCommand } from "./options.js";
import { memoryFigures, memoryVerdict, percentile, retainedSeries, soakGates, type NodeMemoryFigures, type RssSample } from "./gates.js";
import { PUT_TTL_S, Traffic } from "./traffic.js";

const SAMPLE_EVERY_MS = 10_000;
/** A sample's figures when the node's /metrics did not answer. */
const NO_FIGURES = Object.freeze({ loop_p99_ms: null, loop_max_ms: null, heap_bytes: null, heap_committed_bytes: null, heap_live_bytes: null, external_bytes: null, array_buffers_bytes: null, array_buffers_live_bytes: null, tombstones: null, store_bytes: null });
/**
 * The nodes keep tombstones 60 s instead of the default 10 minutes: tombstones then reach their
 * steady state (as many compacted as made) before minute 2 and their compaction runs all along,
 * so the memory gates compare two points of one steady state. With the default they grow for the
 * whole of a 10-minute run by design, and a gate on that growth cannot tell it from a leak.
 * A tombstone also waits until every peer has reported pulling it by anti-entropy, at its next
 * sync: anti-entropy every 10 s with a backoff ceiling of 2 keeps that wait (two periods, 40 s at
 * most) under the TTL, as the defaults do for the default TTL (docs/operations.md).
 */
const TOMBSTONE_TTL = "60s";
const SYNC_ENV = Object.freeze({ SERVICE_AUTO_SYNC_INTERVAL: "10s", SERVICE_AUTO_SYNC_MAX_FACTOR: "2" });
const PROBE_EVERY_MS = 100;
const CAPACITY = 100_000;
const KEY_SPACE = 200_000;

const print = (line: string) => process.stdout.write(`${line}\n`);

/** What a sample reads from the node's /metrics, besides the memory figures of RssSample. */
interface RuntimeFigures {
  /** Event-loop delay p99 and max of the node's last 10 s window, ms. */
  loop_p99_ms: number;
  loop_max_ms: number;
  heap_bytes: number;
  external_bytes: number;
  tombstones: number;
  store_bytes: Record<string, number>;
}

/** One sample of one node; a figure is null when /metrics did not answer (or, for the loop, in the preload's window). */
type Sample = RssSample & { items: number | null } & { [K in keyof RuntimeFigures]: RuntimeFigures[K] | null };

/** The node's own runtime gauges and memory figures from /metrics; null when it does not answer. */
async function runtime(n: NodeProcess): Promise<(RuntimeFigures & NodeMemoryFigures) | null> {
  try {
    const metrics = parsePrometheus(await (await fetch(`${n.mgmt}/metrics`, { signal: AbortSignal.timeout(5_000) })).text());
    const gauge = (name: string) => metrics.value(name) ?? NaN;
    return {
      loop_p99_ms: gauge("nodejs_eventloop_delay_p99_seconds") * 1000,
      loop_max_ms: gauge("nodejs_eventloop_delay_max_seconds") * 1000,
      heap_bytes: gauge("v8js_memory_heap_used_bytes"),
      external_bytes: gauge("nodejs_memory_external_bytes"),
      ...memoryFigures(metrics),
      tombstones: gauge("cache_tombstones"),
      store_bytes: Object.fromEntries(["records", "garbage", "free", "large"].map((part) => [part, metrics.samples.find((x) => x.name === "cache_store_memory_bytes" && x.labels.part === part)?.value ?? NaN])),
    };
  } catch {
    return null;
  }
}

function rssBytes(n: NodeProcess): number {
  const status = readFileSync(`/proc/${n.child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) * 1024;
}

async function items(n: NodeProcess): Promise<number | null> {
  try {
    const r = await fetch(`${n.mgmt}/stats`, { signal: AbortSignal.timeout(5_000) });
    return ((await r.json()) as { items: number }).items;
  } catch {
    return null;
  }
}

const LEASE_METRIC = "dist.lease.";

/** The stampede-lease counters of every node summed (dist.lease.*): what the lease traffic exercised. */
async function leaseCounters(nodes: readonly NodeProcess[]): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const n of nodes) {
    const metrics = await fetch(`${n.mgmt}/dist/metrics`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.json() as Promise<Record<string, number>>, () => ({}) as Record<string, number>);
    for (const [name, v] of Object.entries(metrics)) {
      if (!name.startsWith(LEASE_METRIC)) continue;
      const short = name.slice(LEASE_METRIC.length);
      sums[short] = (sums[short] ?? 0) + v;
    }
  }
  return sums;
}

/** Names of runtime metrics the node exposes (heap, event loop), if any: the soak would use them. */
async function runtimeMetrics(n: NodeProcess): Promise<string[]> {
  const texts = await Promise.all(["/metrics", "/dist/metrics", "/stats"].map((p) => fetch(`${n.mgmt}${p}`).then((r) => r.text(), () => "")));
  return [...new Set(texts.join("\n").match(/[a-z_.]*(heap|event_?loop|eventloop|gc_)[a-z_.]*/gi) ?? [])];
}

async function main(): Promise<number> {
  let command: SoakCommand;
  try {
    command = parseSoakOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`soak: ${(err as Error).message}\n${SOAK_USAGE}\n`);
    return 2;
  }
  if (command.kind === "help") {
    print(SOAK_USAGE);
    return 0;
  }
  const { durationS, rate, seed, out, maxDataBytes: budget } = command.options;
  mkdirSync(out, { recursive: true });

  // --max-data-bytes: a byte budget smaller than what the capacity holds, so that the nodes evict
  // for bytes (SERVICE_MAX_DATA_BYTES) all along instead of for items.
  const { nodes } = await startCluster(3, { SERVICE_CAPACITY: String(CAPACITY), SERVICE_PEER_TOKEN: "soak-peer-token", SERVICE_TOMBSTONE_TTL: TOMBSTONE_TTL, ...SYNC_ENV, ...(budget ? { SERVICE_MAX_DATA_BYTES: budget } : {}) });
  const crashes: string[] = [];
  for (const n of nodes) void n.exited.then((code) => !stopping && crashes.push(`${n.id} exited (${code})`));
  let stopping = false;
  const targets = nodes.map((n) => ({ id: n.id, api: n.api, mgmt: n.mgmt }));
  const traffic = new Traffic(targets, { opsPerSecond: rate, maxInFlight: 64, keySpace: KEY_SPACE, seed });
  const exposed = await runtimeMetrics(nodes[0] as NodeProcess);
  print(`soak: 3 nodes, capacity ${CAPACITY}${budget ? `, byte budget ${budget}` : ""}, ${KEY_SPACE} keys, ≤ ${rate} ops/s for ${durationS} s (seed ${seed}); tombstone TTL ${TOMBSTONE_TTL}; PUT TTLs ${PUT_TTL_S.long.join("-")} s, ${100 * PUT_TTL_S.shortShare}% ${PUT_TTL_S.short.join("-")} s; runtime metrics exposed by the node: ${exposed.length ? exposed.join(", ") : "none"}`);
  const t0 = performance.now();
  await traffic.preload(Math.round(CAPACITY * 1.2));
  print(`preloaded ${Math.round(CAPACITY * 1.2)} items in ${((performance.now() - t0) / 1000).toFixed(0)} s; items per node: ${(await Promise.all(nodes.map(items))).join(", ")}`);

  const delays = new Map<string, number[]>(nodes.map((n) => [n.id, []]));
  const probe = new Worker(new URL("./loop-probe.mjs", import.meta.url), { workerData: { targets, intervalMs: PROBE_EVERY_MS } });
  let probeNoise = { own_p99_ms: NaN, own_max_ms: NaN };
  const probeDone = new Promise<void>((resolve) => probe.once("exit", () => resolve()));
  probe.on("message", (m: { node?: string; ms?: number; own_p99_ms?: number; own_max_ms?: number }) => {
    if (m.node !== undefined && m.ms !== undefined) delays.get(m.node)?.push(m.ms);
    else probeNoise = { own_p99_ms: m.own_p99_ms ?? NaN, own_max_ms: m.own_max_ms ?? NaN };
  });

  const start = performance.now();
  traffic.start();
  const samples: Sample[] = [];
  const sample = async (withLoop: boolean) => {
    const t_s = (performance.now() - start) / 1000;
    for (const n of nodes) {
      if (n.child.exitCode !== null) continue;
      const r = await runtime(n);
      const figures = r ?? NO_FIGURES;
      samples.push({ node: n.id, t_s, rss_bytes: rssBytes(n), items: await items(n), ...figures, ...(withLoop ? {} : { loop_p99_ms: null, loop_max_ms: null }) });
    }
    const line = nodes.map((n) => {
      const s = samples.filter((x) => x.node === n.id).at(-1);
      const d = delays.get(n.id) ?? [];
      const loop = s?.loop_p99_ms == null ? "" : ` loop p99 ${s.loop_p99_ms.toFixed(0)} ms`;
      const heap = s?.heap_bytes == null ? "" : ` heap ${(s.heap_bytes / 2 ** 20).toFixed(0)}/${((s.heap_live_bytes ?? NaN) / 2 ** 20).toFixed(0)}/${((s.heap_committed_bytes ?? NaN) / 2 ** 20).toFixed(0)} MiB (used/live/committed) buffers ${((s.array_buffers_bytes ?? NaN) / 2 ** 20).toFixed(0)}/${((s.array_buffers_live_bytes ?? NaN) / 2 ** 20).toFixed(0)} MiB (now/live) retained ${((retainedSeries(samples.filter((x) => x.node === n.id)).at(-1)?.retained ?? NaN) / 2 ** 20).toFixed(0)} MiB`;
      const mib = (b: number | undefined) => ((b ?? NaN) / 2 ** 20).toFixed(0);
      const store = s?.store_bytes ? ` store ${mib(s.store_bytes.records)}/${mib(s.store_bytes.garbage)}/${mib(s.store_bytes.free)}/${mib(s.store_bytes.large)} MiB (records/garbage/free/large) ${s.tombstones ?? "?"} tombstones` : "";
      return `${n.id} ${s ? (s.rss_bytes / 2 ** 20).toFixed(0) : "?"} MiB${heap}${store} ${s?.items ?? "?"} items${loop} healthz p99 ${percentile(d.slice(-100), 99).toFixed(0)} ms`;
    });
    print(`[soak ${t_s.toFixed(0)} s] ops ${traffic.ops}; ${line.join(" | ")}`);
  };
  // The first sample's 10 s window is the preload's, not the soak's.
  await sample(false);
  while ((performance.now() - start) / 1000 < durationS) {
    await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
    await sample(true);
  }
  stopping = true;
  await traffic.stop();
  probe.postMessage("stop");
  await probeDone;
  for (const n of nodes) {
    for (const r of n.logs) if (r.level === "error") crashes.push(`${n.id} logged an error: ${JSON.stringify(r).slice(0, 200)}`);
    if (n.stderr.join("").trim()) crashes.push(`${n.id} wrote to stderr: ${n.stderr.join("").slice(0, 200)}`);
  }
  const leases = await leaseCounters(nodes);
  await Promise.all(nodes.map((n) => n.stop("SIGTERM")));

  const memory = nodes.map((n) => memoryVerdict(samples.filter((s) => s.node === n.id), durationS, "retained memory"));
  const rss = nodes.map((n) => memoryVerdict(samples.filter((s) => s.node === n.id), durationS, "RSS"));
  const loopWindows = new Map(nodes.map((n) => [n.id, samples.filter((x) => x.node === n.id && x.loop_p99_ms !== null).map((x) => x.loop_p99_ms as number)]));
  const gates = soakGates(memory, loopWindows, traffic.statuses, crashes, durationS);
  const passed = gates.every((g) => g.passed);
  const report = {
    passed,
    seed,
    duration_s: durationS,
    rate,
    ops: traffic.ops,
    statuses: Object.fromEntries(traffic.statuses),
    transport_errors: Object.fromEntries(traffic.errors),
    unexpected_answers: traffic.unexpected,
    sse: { opened: traffic.sseOpened, frames: traffic.sseFrames },
    key_browser_pages: traffic.browserPages,
    leases,
    probe_noise: probeNoise,
    runtime_metrics_exposed: exposed,
    gates,
    memory,
    rss,
    loop_probe: Object.fromEntries([...delays].map(([k, d]) => [k, { probes: d.length, p50: percentile(d, 50), p99: percentile(d, 99), max: Math.max(...d) }])),
    samples,
  };
  writeFileSync(path.join(out, "report.json"), JSON.stringify(report, null, 1));
  print(`ops ${traffic.ops} (${(traffic.ops / durationS).toFixed(0)}/s); statuses ${JSON.stringify(report.statuses)}; transport errors ${JSON.stringify(report.transport_errors)}; SSE ${traffic.sseOpened} streams, ${traffic.sseFrames} frames; key browser ${traffic.browserPages} pages`);
  print(`reported: stampede leases (all nodes) ${Object.entries(leases).map(([k, v]) => `${k} ${v}`).join(", ") || "none counted"}`);
  for (const [id, d] of delays) print(`reported: ${id} GET /healthz round trip from outside p99 ${percentile(d, 99).toFixed(1)} ms, max ${Math.max(...d).toFixed(1)} ms over ${d.length} probes (the probe thread's own loop p99 ${probeNoise.own_p99_ms.toFixed(1)} ms)`);
  for (const v of rss) print(`reported: ${v.node} RSS (V8's garbage included) final ${(v.final_bytes / 2 ** 20).toFixed(0)} MiB / ${(v.reference_bytes / 2 ** 20).toFixed(0)} MiB at ${v.reference_s.toFixed(0)} s = ${v.final_ratio.toFixed(3)}, slope ${v.slope_pct_per_min.toFixed(2)}%/min`);
  for (const g of gates) print(`${g.passed ? "PASS" : "FAIL"}  ${g.name}: ${g.detail}`);
  print(passed ? `soak passed (seed ${seed}); report in ${out}/report.json` : `soak FAILED (seed ${seed}); replay: npm run soak -- --seconds ${durationS} --rate ${rate} --seed ${seed}${budget ? ` --max-data-bytes ${budget}` : ""}`);
  return passed ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`soak: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
