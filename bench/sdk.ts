// Benchmark of @hypercache/client and the hypercache CLI against their bare baselines, run by hand:
//   npm run build && node --import tsx/esm bench/sdk.ts [--seconds 5] [--rounds 3] [--items 1000000]
//                          [--load-rounds 1] [--connections 32] [--only get,load,browser]
// - get: SDK `get` against a bare undici Agent.request loop on one real node, same connections,
//   same keys; alternating rounds (bare, sdk, bare, sdk, ...), the median ratio is reported with
//   its spread, the client CPU per request of each side and the load average (target: SDK >= 0.9
//   x bare). The SDK measured is the built package (`@hypercache/client/node`, dist/), what an
//   application runs: through tsx its source carries per-call helpers of the transpiler (esbuild's
//   keepNames `__name` wrapper of every closure) that no user pays.
// - load: `hypercache load` (the built binary, a child process) of N 100-byte items into a real
//   3-node cluster against a bare undici sender that reads the same file, builds the same
//   1000-item batch bodies and posts them with the same concurrency to the same node; items/s,
//   the median ratio, and the CLI's peak RSS (VmHWM) (targets: >= 0.8 x bare, <= 150 MB).
// - browser: the gzipped size of the core bundled for browsers (target: <= 20 KB).
// The machine is shared: only ratios from alternating rounds mean anything, and they move.
import { execFileSync, spawn } from "node:child_process";
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { Agent } from "undici";
import { HypercacheClient } from "@hypercache/client/node";
import { clusterPorts, startMember, startNode, type NodeProcess } from "../test/helpers/node-process.js";
import { clockTicksPerSecond, cpuMicrosBetween, cpuTicks } from "./proc.js";
import { median, ratioOfMedians, type Ratio } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "packages/cli/bin/hypercache.js");

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const only = (() => {
  const i = process.argv.indexOf("--only");
  return new Set((i >= 0 ? (process.argv[i + 1] ?? "") : "get,load,browser").split(","));
})();
const SECONDS = flag("seconds", 5);
const ROUNDS = flag("rounds", 3);
/** A load round moves the whole file twice (bare, then CLI): minutes each on a 3-node cluster. */
const LOAD_ROUNDS = flag("load-rounds", 1);
const ITEMS = flag("items", 1_000_000);
const CONNECTIONS = flag("connections", 32);
const KEYS = 1000;
const VALUE = "v".repeat(100);

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const ratioText = (r: Ratio) => `${r.value.toFixed(2)} (spread ${r.min.toFixed(2)}-${r.max.toFixed(2)})`;

interface Drive {
  readonly rps: number;
  /** Client (this process) CPU µs per request. */
  readonly cpuUs: number;
  /** Server CPU µs per request, and the share of one core the server used (from /proc). */
  readonly serverCpuUs: number;
  readonly serverShare: number;
}

/** Runs `op` on `connections` loops for `seconds`; requests/s, client and server CPU per request. */
async function drive(op: (i: number) => Promise<unknown>, seconds: number, connections: number, serverPid: number, hz: number): Promise<Drive> {
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const cpu = process.cpuUsage();
  const server = cpuTicks(serverPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) await op(n++);
    }),
  );
  const el = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const serverUs = cpuMicrosBetween(server, cpuTicks(serverPid), hz);
  return { rps: n / el, cpuUs: (used.user + used.system) / n, serverCpuUs: serverUs / n, serverShare: serverUs / 1e6 / el };
}

/**
 * The node on core 0 and this process (the client measured) on core 1, every thread, so neither
 * takes the other's CPU. Returns how to put this process back on every core (the parts that
 * follow start their own processes, which would inherit core 1), or undefined when there are
 * fewer than two cores or no taskset.
 */
function pinApart(serverPid: number): (() => void) | undefined {
  const cores = availableParallelism();
  if (cores < 2) return undefined;
  try {
    execFileSync("taskset", ["-a", "-p", "-c", "0", String(serverPid)], { stdio: "ignore" });
    execFileSync("taskset", ["-a", "-p", "-c", "1", String(process.pid)], { stdio: "ignore" });
    return () => execFileSync("taskset", ["-a", "-p", "-c", `0-${cores - 1}`, String(process.pid)], { stdio: "ignore" });
  } catch {
    return undefined;
  }
}

async function benchGet(): Promise<void> {
  const node = await startNode({ id: "bench-get", env: { SERVICE_CAPACITY: "100000" } });
  const serverPid = node.child.pid as number;
  const unpin = pinApart(serverPid);
  const pinned = unpin !== undefined;
  const hz = clockTicksPerSecond();
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const client = new HypercacheClient({ endpoints: [node.api], discovery: false });
  try {
    await client.setMany(Array.from({ length: KEYS }, (_, i) => ({ key: `bench:${i}`, value: VALUE })));
    const paths = Array.from({ length: KEYS }, (_, i) => `/v1/cache/${encodeURIComponent(`bench:${i}`)}`);
    const bare = async (i: number) => {
      const r = await agent.request({ origin: node.api, path: paths[i % KEYS] as string, method: "GET", headers: { accept: "application/octet-stream" } });
      const body = await r.body.arrayBuffer();
      if (r.statusCode !== 200 || body.byteLength !== 100) throw new Error(`bare GET: ${r.statusCode}`);
    };
    const sdk = async (i: number) => {
      const v = await client.get(`bench:${i % KEYS}`);
      if (v?.length !== 100) throw new Error("sdk GET: wrong value");
    };
    await drive(bare, 1, CONNECTIONS, serverPid, hz);
    await drive(sdk, 1, CONNECTIONS, serverPid, hz);
    const bares: Drive[] = [];
    const sdks: Drive[] = [];
    console.log(`\nGET, one node, ${CONNECTIONS} connections, ${SECONDS} s per side, ${ROUNDS} rounds; ${pinned ? "node on core 0, client on core 1" : "NOT PINNED (fewer than 2 cores or no taskset)"}; load average ${load()}`);
    const side = (d: Drive) => `${fmt(d.rps)} (client ${d.cpuUs.toFixed(1)} µs, server ${d.serverCpuUs.toFixed(1)} µs, server ${(d.serverShare * 100).toFixed(0)}% of a core)`;
    console.log("round | bare undici req/s (CPU per request) | SDK get req/s (CPU per request) | ratio");
    for (let r = 1; r <= ROUNDS; r++) {
      const b = await drive(bare, SECONDS, CONNECTIONS, serverPid, hz);
      const s = await drive(sdk, SECONDS, CONNECTIONS, serverPid, hz);
      bares.push(b);
      sdks.push(s);
      console.log(`${r} | ${side(b)} | ${side(s)} | ${(s.rps / b.rps).toFixed(2)}`);
    }
    // When the server is the limit both sides get the same rate whatever the SDK costs: then the
    // client CPU per request says what the SDK adds, and the rate ratio says nothing.
    const serverBound = [...bares, ...sdks].filter((d) => d.serverShare >= 0.95).length;
    const rate = ratioOfMedians(sdks.map((d) => d.rps), bares.map((d) => d.rps));
    console.log(`SDK client CPU per request / bare undici's (ratio of medians of ${ROUNDS}): ${ratioText(ratioOfMedians(sdks.map((d) => d.cpuUs), bares.map((d) => d.cpuUs)))}`);
    console.log(`server CPU per request, median: bare ${median(bares.map((d) => d.serverCpuUs)).toFixed(1)} µs, SDK ${median(sdks.map((d) => d.serverCpuUs)).toFixed(1)} µs`);
    console.log(`SDK get / bare undici (ratio of medians of ${ROUNDS}): ${ratioText(rate)}; target >= 0.90; load average ${load()}`);
    if (serverBound > 0) console.log(`NOTE ${serverBound} of ${2 * ROUNDS} sides had the server at >= 95% of its core: the server set their rate; judge by the client CPU ratio`);
  } finally {
    unpin?.();
    await client.close();
    await agent.close();
    await node.stop();
  }
}

/** Writes `n` load lines of 100-byte values. */
function writeLoadFile(path: string, n: number): void {
  const lines: string[] = [];
  const chunks: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ key: `load:${i}`, value: `${String(i).padStart(10, "0")}${"x".repeat(90)}` }));
    if (lines.length === 10_000) chunks.push(`${lines.splice(0).join("\n")}\n`);
  }
  if (lines.length > 0) chunks.push(`${lines.join("\n")}\n`);
  writeFileSync(path, chunks.join(""));
}

/** The bare sender: the same file, the same 1000-item batches, the same concurrency, one node. */
async function bareLoad(file: string, endpoint: string, concurrency: number): Promise<{ items: number; seconds: number }> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let batch: string[] = [];
  let items = 0;
  const send = (lines: string[]) => {
    const body = `{"items":[${lines.join(",")}]}`;
    const p = agent
      .request({ origin: endpoint, path: "/v1/cache/batch/put", method: "POST", headers: { "content-type": "application/json" }, body })
      .then(async (r) => {
        const text = await r.body.text();
        if (r.statusCode !== 200) throw new Error(`bare batch: ${r.statusCode} ${text.slice(0, 200)}`);
        items += lines.length;
      });
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };
  for await (const line of createInterface({ input: createReadStream(file, { highWaterMark: 256 * 1024 }), crlfDelay: Infinity })) {
    if (line === "") continue;
    batch.push(line);
    if (batch.length === 1000) {
      send(batch);
      batch = [];
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
  }
  if (batch.length > 0) send(batch);
  await Promise.all(inFlight);
  await agent.close();
  return { items, seconds: (performance.now() - started) / 1000 };
}

/** Runs the CLI's load as a child process; its wall time and peak RSS. */
function cliLoad(file: string, endpoints: string[]): Promise<{ items: number; seconds: number; peakRssMiB: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The binary itself, as an operator runs it: its shebang carries the V8 memory flags.
    const child = spawn(CLI, ["load", file, "--endpoints", endpoints.join(",")], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let peakKiB = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (m) peakKiB = Math.max(peakKiB, Number(m[1]));
      } catch {
        // exited between two polls
      }
    }, 50);
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("exit", (code) => {
      clearInterval(poll);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) return reject(new Error(`hypercache load exited ${code}: ${err.slice(-500)}`));
      const summary = JSON.parse(out) as { stored: number };
      resolve({ items: summary.stored, seconds, peakRssMiB: peakKiB / 1024 });
    });
  });
}

async function benchLoad(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "hypercache-bench-sdk-"));
  const file = join(dir, "items.jsonl");
  writeLoadFile(file, ITEMS);
  const layout = await clusterPorts(3);
  const env = { SERVICE_CAPACITY: String(Math.max(100_000, ITEMS * 2)) };
  const nodes: NodeProcess[] = await Promise.all(layout.map((p) => startMember(layout, p.id, env)));
  try {
    const endpoints = nodes.map((n) => n.api);
    console.log(`\nload of ${fmt(ITEMS)} 100-byte items into 3 nodes (replication 3, QUORUM), batches of 1000, 4 in flight, ${LOAD_ROUNDS} round(s)`);
    console.log("round | bare undici items/s | hypercache load items/s (peak RSS) | ratio");
    const ratios: number[] = [];
    let peak = 0;
    for (let r = 1; r <= LOAD_ROUNDS; r++) {
      const b = await bareLoad(file, endpoints[0] as string, 4);
      const c = await cliLoad(file, endpoints);
      if (b.items !== ITEMS || c.items !== ITEMS) throw new Error(`stored ${b.items} (bare) and ${c.items} (CLI) of ${ITEMS}`);
      const ratio = c.items / c.seconds / (b.items / b.seconds);
      ratios.push(ratio);
      peak = Math.max(peak, c.peakRssMiB);
      console.log(`${r} | ${fmt(b.items / b.seconds)} | ${fmt(c.items / c.seconds)} (${c.peakRssMiB.toFixed(0)} MiB) | ${ratio.toFixed(2)}`);
    }
    console.log(`hypercache load / bare undici (median of ${LOAD_ROUNDS}): ${median(ratios).toFixed(2)} (target >= 0.80); CLI peak RSS ${peak.toFixed(0)} MiB = ${((peak * 1024 * 1024) / 1e6).toFixed(0)} MB (target <= 150 MB)`);
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchBrowser(): Promise<void> {
  const out = await build({ entryPoints: [join(ROOT, "packages/client/src/index.ts")], bundle: true, format: "esm", platform: "browser", minify: true, write: false, logLevel: "silent" });
  const bytes = out.outputFiles[0]?.contents ?? new Uint8Array();
  const gz = gzipSync(bytes, { level: 9 }).length;
  console.log(`\nbrowser core bundle: ${(bytes.length / 1024).toFixed(1)} KB minified, ${(gz / 1024).toFixed(1)} KB gzip (target <= 20 KB)`);
}

if (only.has("browser")) await benchBrowser();
if (only.has("get")) await benchGet();
if (only.has("load")) await benchLoad();
