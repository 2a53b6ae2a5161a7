// npm run bench: throughput, latency and server CPU of hypercache-server against a ceiling
// (bare node:http + Map) measured in the same run, with wrk (closed loop) and bench/openloop.c (open
// loop, fixed rate) as load generators pinned away from the server. See README "Benchmarks".
import os from "node:os";
import type { Settings } from "./measure.js";
import { parseOptions, USAGE, type Part } from "./options.js";
import { clusterConditionalPart, clusterPart } from "./parts/cluster.js";
import { memoryPart } from "./parts/memory.js";
import { p99Part } from "./parts/p99.js";
import { getLimitsPart, getPart, incrPart, leaseGetPart, putPart } from "./parts/single.js";
import { clockTicksPerSecond, missingTools, TOOL_PACKAGES } from "./proc.js";
import { Report } from "./report.js";

const KEYS = 10_000;
const VALUE_BYTES = 100;
const WARMUP_SECONDS = 2;
const PINNED_PARTS: readonly Part[] = ["get", "get-auth", "get-limits", "put", "incr", "lease-get", "p99", "memory", "browser"];

function fail(line: string): never {
  console.error(line);
  process.exit(2);
}

async function main(): Promise<void> {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  const has = (p: Part) => opts.only.has(p);
  const pinned = PINNED_PARTS.some(has);
  const tools = ["getconf", "wrk", ...(pinned ? ["taskset"] : []), ...(has("p99") ? ["cc"] : [])];
  const missing = missingTools(tools, process.env.PATH ?? "");
  if (missing.length > 0) fail(`npm run bench needs ${missing.join(", ")}: install with \`apt-get install ${missing.map((t) => TOOL_PACKAGES[t]).join(" ")}\``);
  if (pinned && os.availableParallelism() < 2) fail("npm run bench pins the server and the load generator to two different cores: this machine has one");

  const s: Settings = { seconds: opts.seconds, rounds: opts.rounds, connections: opts.connections, warmupSeconds: WARMUP_SECONDS, keys: KEYS, valueBytes: VALUE_BYTES, hz: clockTicksPerSecond() };
  const report = new Report((line) => console.log(line));
  const machine = { node: process.version, cpus: os.availableParallelism(), cpuModel: os.cpus()[0]?.model ?? "unknown", date: new Date().toISOString() };
  report.fact("machine", machine);
  report.fact("settings", { ...s, only: [...opts.only] });
  report.line(`hypercache-server benchmark, node ${machine.node}, ${machine.cpus} cpus (${machine.cpuModel}), ${machine.date}`);
  report.line(`parts: ${[...opts.only].join(",")}; ${s.rounds} rounds of ${s.seconds} s, ${s.connections} connections`);

  const nodeGet = has("get") || has("get-auth") ? await getPart({ get: has("get"), auth: has("get-auth") }, s, report) : undefined;
  if (has("get-limits")) await getLimitsPart(s, report);
  if (has("put")) await putPart(s, report);
  if (has("incr")) await incrPart(s, report);
  if (has("lease-get")) await leaseGetPart(s, report);
  if (has("p99")) await p99Part(nodeGet, s, report);
  if (has("cluster-put")) await clusterPart("PUT", s, report);
  if (has("cluster-get")) await clusterPart("GET", s, report);
  if (has("cluster-cput")) await clusterConditionalPart(s, report);
  if (has("memory") || has("browser")) await memoryPart({ memory: has("memory"), browser: has("browser") }, s, report);

  report.summary();
  if (opts.json) {
    await report.writeJson(opts.json);
    report.line(`\nfigures written to ${opts.json}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
