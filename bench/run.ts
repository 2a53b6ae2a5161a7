// npm run bench: throughput, latency and server CPU of GET and PUT on one hypercache-server node
// against a bare node:http + Map server measured in the same run (the ceiling for one Node
// process); then a 3-node cluster (replication 3, QUORUM writes) against one node; then the
// memory cost of one million 100-byte items. Each ratio comes from alternating rounds of its two
// sides (the median round is shown), so drift in the CPU the machine gives us hits both sides.
//
// Options: --seconds N (per measurement, default 8), --connections N (default 32),
//          --rounds N (alternating rounds per ratio, default 3), --only get,put,cluster,memory.
import { fileURLToPath } from "node:url";
import { drive, fmt, preload, request, rssBytes, spawnServer, type LoadResult, type Server } from "./lib.js";
import { freePorts } from "../test/helpers/ports.js";

const BIN = fileURLToPath(new URL("../dist/src/main.js", import.meta.url));
const BASELINE = fileURLToPath(new URL("./baseline-server.mjs", import.meta.url));

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? (process.argv[i + 1] as string) : fallback;
}

const seconds = Number(option("seconds", "8"));
const connections = Number(option("connections", "32"));
const only = new Set(option("only", "get,put,cluster,memory").split(","));
const rounds = Math.max(1, Number(option("rounds", "3")));
const KEYS = 10_000;
const VALUE = Buffer.alloc(100, "v");

async function startNode(name: string, env: Record<string, string>, ports?: number[]): Promise<Server> {
  const [api, mgmt, dist] = ports ?? (await freePorts(3));
  return spawnServer(
    name,
    api as number,
    [BIN],
    {
      SERVICE_NODE_ID: name,
      SERVICE_API_ADDR: `127.0.0.1:${api}`,
      SERVICE_MGMT_ADDR: `127.0.0.1:${mgmt}`,
      SERVICE_DIST_ADDR: `127.0.0.1:${dist}`,
      SERVICE_LOG_LEVEL: "warn",
      ...env,
    },
    () => false,
    api as number,
  );
}

function row(label: string, r: LoadResult): string {
  return `${label.padEnd(22)} ${fmt(r.rps).padStart(9)} req/s   p50 ${fmt(r.p50Ms, 1).padStart(5)} ms   p99 ${fmt(r.p99Ms, 1).padStart(5)} ms   server CPU ${fmt(r.cpuUsPerRequest, 1).padStart(6)} us/req${r.errors + r.non2xx > 0 ? `   errors ${r.errors} non-2xx ${r.non2xx}` : ""}`;
}

/** Alternates `rounds` measurements of a and b; returns the round with the median b/a score. */
async function alternate(a: () => Promise<LoadResult>, b: () => Promise<LoadResult>, score: (a: LoadResult, b: LoadResult) => number) {
  const results: Array<{ a: LoadResult; b: LoadResult; score: number }> = [];
  for (let r = 0; r < rounds; r++) {
    const ra = await a();
    const rb = await b();
    results.push({ a: ra, b: rb, score: score(ra, rb) });
  }
  const scores = results.map((x) => x.score.toFixed(2)).join(", ");
  results.sort((x, y) => x.score - y.score);
  return { ...(results[Math.floor(results.length / 2)] as (typeof results)[number]), scores };
}

async function throughput(): Promise<void> {
  const [basePort] = await freePorts(1);
  const baseline = await spawnServer("baseline", basePort as number, [BASELINE, String(basePort)], {}, (l) => l === "ready");
  const node = await startNode("bench-1", {});
  try {
    await preload(baseline.port, KEYS, VALUE);
    await preload(node.port, KEYS, VALUE);
    const check = await request(node.port, "GET", "/v1/cache/bench-42");
    if (check.status !== 200 || !check.body.equals(VALUE)) throw new Error("preloaded value does not read back");
    console.log(`\nsingle node, ${KEYS} keys of ${VALUE.length}-byte values, ${connections} keep-alive connections, ${rounds} alternating rounds of ${seconds} s (median round shown)`);
    for (const method of ["GET", "PUT"] as const) {
      if (!only.has(method.toLowerCase())) continue;
      const load = (server: Server, secs: number) => drive({ server, method, keys: KEYS, value: VALUE, seconds: secs, connections });
      // Warm both servers up (JIT) before measuring.
      await load(baseline, 2);
      await load(node, 2);
      // The score of a round is the lower of its throughput and CPU-capacity ratios.
      const m = await alternate(
        () => load(baseline, seconds),
        () => load(node, seconds),
        (b, n) => Math.min(n.rps / b.rps, b.cpuUsPerRequest / n.cpuUsPerRequest),
      );
      console.log(row(`${method} baseline`, m.a));
      console.log(row(`${method} hypercache`, m.b));
      const target = method === "GET" ? 0.6 : 0.5;
      const ratio = m.b.rps / m.a.rps;
      const cpuRatio = m.a.cpuUsPerRequest / m.b.cpuUsPerRequest;
      console.log(`${method} ratio hypercache/baseline: throughput ${ratio.toFixed(2)}, CPU capacity ${cpuRatio.toFixed(2)} (rounds: ${m.scores}; target >= ${target.toFixed(2)})${m.score >= target ? "" : "  BELOW TARGET"}`);
    }
  } finally {
    await baseline.stop();
    await node.stop();
  }
}

async function metricSum(mgmtPorts: number[], name: string): Promise<number> {
  let total = 0;
  for (const port of mgmtPorts) total += (JSON.parse((await request(port, "GET", "/dist/metrics")).body.toString()) as Record<string, number>)[name] ?? 0;
  return total;
}

/**
 * The cluster against one node, measured in alternating rounds (one node, then the cluster, and
 * again): on a small shared machine the CPU available drifts during a run, and alternating keeps
 * both sides of each ratio under the same conditions. The median round's ratio is reported.
 */
async function cluster(): Promise<void> {
  const ports = await freePorts(9);
  const ids = ["c1", "c2", "c3"];
  const seedsOf = (i: number) => ids.map((id, j) => (j === i ? "" : `${id}@127.0.0.1:${ports[3 * j + 2]}`)).filter((x) => x !== "").join(",");
  const nodes = await Promise.all(
    ids.map((id, i) => startNode(id, { SERVICE_SEEDS: seedsOf(i), SERVICE_REPLICATION: "3", SERVICE_WRITE_CONSISTENCY: "quorum" }, ports.slice(3 * i, 3 * i + 3))),
  );
  const solo = await startNode("solo", {});
  const mgmtPorts = ids.map((_, i) => ports[3 * i + 1] as number);
  const entry = nodes[0] as Server;
  try {
    await preload(entry.port, KEYS, VALUE);
    await preload(solo.port, KEYS, VALUE);
    console.log(`\n3-node cluster, replication 3, write QUORUM, ${connections} connections through ${entry.name}, against one node, ${rounds} alternating rounds of ${seconds} s`);
    for (const method of ["PUT", "GET"] as const) {
      const load = (server: Server, secs: number) => drive({ server, method, keys: KEYS, value: VALUE, seconds: secs, connections });
      await load(solo, 2);
      await load(entry, 2);
      const m = await alternate(
        () => load(solo, seconds),
        async () => {
          const calls0 = await metricSum(mgmtPorts, "dist.peer.calls");
          const r = await load(entry, seconds);
          return { ...r, calls: (await metricSum(mgmtPorts, "dist.peer.calls")) - calls0 };
        },
        (one, all) => all.rps / one.rps,
      );
      const label = method === "PUT" ? "PUT" : "GET (ONE)";
      console.log(row(`${label} one node`, m.a));
      console.log(row(`${label} cluster`, m.b));
      if (method === "PUT") {
        const writes = m.b.rps * seconds;
        const rpcs = (m.b as LoadResult & { calls: number }).calls;
        console.log(`peer RPCs per client write: ${(rpcs / writes).toFixed(2)} (all nodes, ${fmt(rpcs)} RPCs for ${fmt(writes)} writes)`);
      }
      const target = method === "PUT" ? 0.4 : 0.8;
      console.log(`${method} ratio cluster/single node: ${m.score.toFixed(2)} (rounds: ${m.scores}; target >= ${target.toFixed(2)})${m.score >= target ? "" : "  BELOW TARGET"}`);
    }
  } finally {
    await Promise.all([...nodes, solo].map((n) => n.stop()));
  }
}

async function memory(): Promise<void> {
  const items = 1_000_000;
  const node = await startNode("bench-mem", { SERVICE_CAPACITY: String(items + items / 10) });
  try {
    const pid = node.child.pid as number;
    const before = rssBytes(pid);
    const value = "m".repeat(100);
    const batch = 1000;
    for (let start = 0; start < items; start += batch * 8) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          const from = start + w * batch;
          if (from >= items) return;
          const list = Array.from({ length: Math.min(batch, items - from) }, (_, i) => ({ key: `mem:${String(from + i).padStart(8, "0")}`, value }));
          const r = await request(node.port, "POST", "/v1/cache/batch/put", JSON.stringify({ items: list }), { "content-type": "application/json" });
          if (r.status !== 200) throw new Error(`batch put failed: ${r.status}`);
        }),
      );
    }
    const stats = await request(node.port, "GET", "/v1/cache/keys?limit=1&max=1");
    if (stats.status !== 200) throw new Error("key browser failed after the load");
    await new Promise((r) => setTimeout(r, 2000));
    const after = rssBytes(pid);
    console.log(`\nmemory: ${fmt(items)} items of 100 bytes`);
    console.log(`RSS before load ${fmt(before / 2 ** 20, 1)} MiB, after ${fmt(after / 2 ** 20, 1)} MiB (target <= 400 MB = ${fmt(400e6 / 2 ** 20, 1)} MiB)${after <= 400e6 ? "" : "  ABOVE TARGET"}`);
    console.log(`bytes per item (RSS growth / items): ${fmt((after - before) / items)}`);
    await readsDuringListing(node.port);
  } finally {
    await node.stop();
  }
}

/**
 * GET latency on one connection while the key browser lists every one of the million keys (the
 * longest whole-store scan a client can ask for): the scan pauses every few thousand records, so
 * the slowest GET should take milliseconds, not the length of the scan.
 */
async function readsDuringListing(port: number): Promise<void> {
  const listings = 3;
  let listing = true;
  const started = performance.now();
  const scans = (async () => {
    for (let i = 0; i < listings; i++) {
      const r = await request(port, "GET", "/v1/cache/keys?q=*&limit=1&max=50000");
      if (r.status !== 200) throw new Error(`key browser failed: ${r.status}`);
    }
    listing = false;
  })();
  const latencies: number[] = [];
  while (listing) {
    const t = performance.now();
    const r = await request(port, "GET", "/v1/cache/mem:00000042");
    if (r.status !== 200) throw new Error(`GET failed: ${r.status}`);
    latencies.push(performance.now() - t);
  }
  await scans;
  const listingMs = (performance.now() - started) / listings;
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  console.log(`GET during key listings of all ${fmt(1_000_000)} keys (${fmt(listingMs)} ms each): ${fmt(latencies.length)} GETs, p50 ${fmt(p(0.5), 2)} ms, p99 ${fmt(p(0.99), 2)} ms, max ${fmt(p(1), 1)} ms`);
}

async function main(): Promise<void> {
  console.log(`hypercache-server benchmark on node ${process.version}, ${new Date().toISOString()}`);
  if (only.has("get") || only.has("put")) await throughput();
  if (only.has("cluster")) await cluster();
  if (only.has("memory")) await memory();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
