// One chaos run, start to verdict: build the network (or fall back to loopback), start the nodes,
// run the workload through a baseline phase and one phase per nemesis, stop everything, check the
// saved run and write the report. Returns the exit code: 0 only when every gate holds.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePorts } from "../../helpers/ports.js";
import { check } from "../checker/check.js";
import type { Op, RunEvent } from "../checker/history.js";
import { SeededRandom } from "../lib/random.js";
import { detectNetworkMode, type NetworkMode } from "../net/capabilities.js";
import { runCommand } from "../net/commands.js";
import { cleanupLeftovers, NetLab } from "../net/netns.js";
import { createNemeses } from "../nemesis/index.js";
import { skipReason, type NemesisContext } from "../nemesis/nemesis.js";
import { Cluster, sampleClocks, sampleRings } from "../proc/cluster.js";
import { renderTable, reportJson } from "../report/report.js";
import { CacheClient } from "../workload/cache-client.js";
import { JsonLinesFile } from "../workload/history-log.js";
import { HttpClient } from "../workload/http-client.js";
import { planKeys } from "../workload/keys.js";
import { Workload } from "../workload/workload.js";
import type { ChaosOptions } from "./options.js";
import { replayCommand } from "./options.js";
import { runPhase } from "./phase-runner.js";
import { acquireLock } from "./run-lock.js";
import { FILES, loadRun } from "./saved-run.js";

export const BIN = fileURLToPath(new URL("../../../dist/src/main.js", import.meta.url));
const PROXY_PORT_BASE = 17_000;
const SETTLE_TIMEOUT_MS = 60_000;
const CLOCK_SAMPLE_MS = 2_000;
/** Each running node's ring, for which phases kept it as it was (gate 6). */
const RING_SAMPLE_MS = 1_000;

/**
 * Settings every chaos node gets. The peer token keeps the cluster working once protected mode
 * (peer calls from loopback only without a credential) lands; anti-entropy every 5 s (default
 * 30 s with backoff) keeps a run within its time, and is reported as a setting of the run.
 */
export function nodeEnv(extra: Record<string, string>): Record<string, string> {
  return {
    SERVICE_PEER_TOKEN: randomBytes(16).toString("hex"),
    SERVICE_AUTO_SYNC_INTERVAL: "5s",
    SERVICE_LOG_LEVEL: "info",
    ...extra,
  };
}

export async function runChaos(o: ChaosOptions, print: (line: string) => void): Promise<number> {
  const t0 = performance.now();
  const log = (m: string) => print(`[chaos +${((performance.now() - t0) / 1000).toFixed(1)}s] ${m}`);
  const releaseLock = acquireLock();
  const mode: NetworkMode = o.loopback ? { mode: "loopback", reason: "--loopback was given" } : await detectNetworkMode(runCommand);
  log(mode.mode === "netns" ? "network: one namespace per node on 198.18.0.0/24" : `network: loopback (${mode.reason})`);

  for (const f of [FILES.history, FILES.events, FILES.keys, FILES.report, FILES.table, FILES.logs]) rmSync(path.join(o.out, f), { recursive: true, force: true });
  mkdirSync(path.join(o.out, FILES.logs), { recursive: true });
  const history = new JsonLinesFile<Op>(path.join(o.out, FILES.history));
  const events = new JsonLinesFile<RunEvent>(path.join(o.out, FILES.events));

  let lab: NetLab | undefined;
  if (mode.mode === "netns") {
    const removed = await cleanupLeftovers(runCommand);
    if (removed.length > 0) log(`removed leftovers of an earlier run: ${removed.join(", ")}`);
    lab = new NetLab(runCommand);
  }
  const http = new HttpClient(mode.mode);
  const client = new CacheClient(http);
  const env = nodeEnv(o.env);
  const cluster = new Cluster({
    bin: BIN,
    logDir: path.join(o.out, FILES.logs),
    env,
    ...(o.valgrind !== undefined ? { valgrind: o.valgrind } : {}),
    onProcess: (e) => events.append({ type: "process", ...e }),
    onLog: (e) => {
      events.append({ type: "log", ...e });
      log(`${e.node} ${e.source}: ${e.text.slice(0, 200)}`);
    },
    ...(lab ? { lab } : {}),
    ports: { next: async () => (await freePorts(3)) as [number, number, number] },
    http,
  });

  let aborted = false;
  const abort = async (signal: string) => {
    if (aborted) return;
    aborted = true;
    log(`${signal}: stopping every node and removing the network`);
    await cluster.killAll().catch(() => undefined);
    await lab?.destroy().catch(() => undefined);
    releaseLock();
    process.exit(130);
  };
  const onSignal = (s: NodeJS.Signals) => void abort(s);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const random = new SeededRandom(o.seed);
  const nemeses = createNemeses();
  const keys = planKeys({ single: o.singleKeys, contended: o.contendedKeys, cas: o.casKeys, counters: o.counterKeys, leases: o.leaseKeys, workers: o.workers });
  writeFileSync(path.join(o.out, FILES.keys), JSON.stringify(keys, null, 1));
  let phase = "setup";
  const workload = new Workload(
    { workers: o.workers, opsPerSecond: o.rate, timeoutMs: o.timeoutMs, keys },
    { client, endpoints: () => cluster.nodes.filter((n) => n.everStarted).map((n) => n.spec), phase: () => phase, record: (op) => history.append(op), random: random.fork("workload") },
  );
  let harnessError: Error | undefined;
  let clockSampler: NodeJS.Timeout | undefined;
  let ringSampler: NodeJS.Timeout | undefined;
  try {
    await lab?.create();
    for (let i = 1; i <= o.nodes; i++) await cluster.add(`n${i}`);
    await Promise.all(cluster.nodes.map((n) => cluster.start(n)));
    await cluster.waitMembership(SETTLE_TIMEOUT_MS);
    for (const n of cluster.nodes) await cluster.waitCaughtUp(n, SETTLE_TIMEOUT_MS);
    log(`${o.nodes} nodes up; workload: ${o.workers} workers, ≤ ${o.rate} ops/s, ${keys.length} keys`);
    phase = "00-baseline";
    workload.start();
    clockSampler = setInterval(() => void sampleClocks(cluster, http).then((samples) => samples.forEach((c) => events.append({ type: "clock", ...c }))), CLOCK_SAMPLE_MS);
    ringSampler = setInterval(() => void sampleRings(cluster).then((samples) => samples.forEach((r) => events.append({ type: "ring", ...r }))), RING_SAMPLE_MS);
    const ctx = (faultMs: number, name: string): NemesisContext => ({ cluster, random: random.fork(name), faultMs, proxyPortBase: PROXY_PORT_BASE, log });
    const deps = { cluster, client, workload, keys, random, healMs: o.healSeconds * 1000, event: (e: RunEvent) => events.append(e), record: (op: Op) => history.append(op), setPhase: (p: string) => (phase = p), log };
    await runPhase(deps, "00-baseline", undefined, ctx(o.baselineSeconds * 1000, "baseline"));
    for (const [i, name] of o.nemeses.entries()) {
      const nemesis = nemeses.get(name);
      if (!nemesis) throw new Error(`unknown nemesis ${name}`);
      const phaseName = `${String(i + 1).padStart(2, "0")}-${name}`;
      await runPhase(deps, phaseName, nemesis, ctx(o.faultSeconds * 1000, phaseName), skipReason(nemesis, mode));
    }
  } catch (err) {
    harnessError = err as Error;
    log(`harness error: ${harnessError.stack ?? harnessError.message}`);
  } finally {
    clearInterval(clockSampler);
    clearInterval(ringSampler);
    await workload.stop();
    await cluster.stopAll().catch(() => cluster.killAll());
    await lab?.destroy();
    http.close();
    await history.close();
    await events.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    releaseLock();
  }

  const verdict = check(loadRun(o.out), { allowSkip: o.allowSkip });
  const replay = replayCommand(o);
  const meta = {
    seed: o.seed,
    replay,
    network: mode.mode === "netns" ? "netns" : `loopback (${mode.reason})`,
    started_at: new Date(performance.timeOrigin + t0).toISOString(),
    duration_s: Math.round((performance.now() - t0) / 1000),
    settings: { ...o, node_env: { ...env, SERVICE_PEER_TOKEN: "[redacted]" }, ...(harnessError ? { harness_error: harnessError.message } : {}) },
  };
  const table = renderTable(verdict);
  writeFileSync(path.join(o.out, FILES.report), JSON.stringify(reportJson(verdict, meta), null, 1));
  writeFileSync(path.join(o.out, FILES.table), `${table}\n`);
  print(table);
  const passed = verdict.passed && !harnessError;
  if (!passed) {
    print(`FAILED seed=${o.seed}${harnessError ? ` (harness error: ${harnessError.message})` : ""}`);
    print(`replay: ${replay}`);
  } else print(`passed seed=${o.seed} in ${meta.duration_s} s; report in ${o.out}`);
  return passed ? 0 : 1;
}
