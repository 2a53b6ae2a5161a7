// One phase of a run: the nemesis runs under load, is healed, the cluster gets the heal window
// under load, then the workload pauses for the checkpoint (liveness of every node, convergence
// rounds, QUORUM reads of every key); the next phase resumes it.
import { CONVERGENCE_DEADLINE_MS } from "../checker/convergence.js";
import type { KeyPlan, LivenessFinding, Op, PhaseRecord, RunEvent } from "../checker/history.js";
import type { SeededRandom } from "../lib/random.js";
import { CATCH_UP_TIMEOUT_MS, sleep, type Nemesis, type NemesisContext } from "../nemesis/nemesis.js";
import type { Cluster } from "../proc/cluster.js";
import { nowMs, type CacheClient } from "../workload/cache-client.js";
import type { Workload } from "../workload/workload.js";
import { checkpointReads, pollConvergence } from "./checkpoint.js";

export interface PhaseDeps {
  cluster: Cluster;
  client: CacheClient;
  workload: Workload;
  keys: readonly KeyPlan[];
  random: SeededRandom;
  healMs: number;
  event(e: RunEvent): void;
  record(op: Op): void;
  setPhase(name: string): void;
  log(message: string): void;
}

/** Runs the nemesis (or, without one, just the load) and the checkpoint that closes the phase. */
export async function runPhase(deps: PhaseDeps, name: string, nemesis: Nemesis | undefined, ctx: NemesisContext, skipped?: string): Promise<PhaseRecord> {
  // label first, then let the workers go: every op they invoke from now on belongs to this phase
  deps.setPhase(name);
  deps.workload.resume();
  const start_ms = nowMs();
  if (skipped) {
    const rec: PhaseRecord = { name, nemesis: nemesis?.name ?? "none", start_ms, heal_ms: start_ms, quiesce_ms: start_ms, end_ms: start_ms, skipped };
    deps.event({ type: "phase", ...rec });
    deps.log(`${name}: SKIPPED (${skipped})`);
    return rec;
  }
  deps.log(`${name}: ${nemesis ? nemesis.description : `load only for ${ctx.faultMs} ms`}`);
  let detail: Record<string, unknown> = {};
  try {
    if (nemesis) detail = await nemesis.run(ctx);
    else await sleep(ctx.faultMs);
  } catch (err) {
    detail = { error: (err as Error).message };
    deps.log(`${name}: the nemesis failed: ${(err as Error).message}`);
  }
  try {
    await nemesis?.heal(ctx);
  } catch (err) {
    detail.heal_error = (err as Error).message;
    deps.log(`${name}: heal failed: ${(err as Error).message}`);
  }
  const heal_ms = nowMs();
  const healDeadline = performance.now() + CONVERGENCE_DEADLINE_MS + 5_000;
  await sleep(deps.healMs);
  await deps.workload.pause();
  const quiesce_ms = nowMs();
  await checkLiveness(deps, name, detail);
  await restartCrashed(deps);
  const converged = await pollConvergence(deps.cluster, deps.client, deps.keys, name, healDeadline, (r) => deps.event({ type: "convergence", ...r }));
  await checkpointReads(deps.cluster, deps.client, deps.keys, name, deps.random.fork(`checkpoint-${name}`), deps.record);
  const end_ms = nowMs();
  const rec: PhaseRecord = { name, nemesis: nemesis?.name ?? "none", start_ms, heal_ms, quiesce_ms, end_ms, detail };
  deps.event({ type: "phase", ...rec });
  deps.log(`${name}: ${converged ? `converged ${Math.round(end_ms - heal_ms)} ms after the heal (checkpoint included)` : "did NOT converge"}`);
  return rec;
}

/** A node that crashed is started again (its crash is already recorded), so one crash does not spill into the next phases. */
async function restartCrashed(deps: PhaseDeps): Promise<void> {
  for (const node of deps.cluster.nodes) {
    if (node.running || !node.everStarted) continue;
    deps.log(`${node.id} is down after the heal (a crash): starting it again`);
    try {
      await deps.cluster.start(node);
      await deps.cluster.waitCaughtUp(node, CATCH_UP_TIMEOUT_MS);
    } catch (err) {
      deps.log(`${node.id} did not come back: ${(err as Error).message}`);
    }
  }
}

/** Every node should be up after a heal: one that is not running or does not answer is a finding. */
async function checkLiveness(deps: PhaseDeps, phase: string, detail: Record<string, unknown>): Promise<void> {
  const findings: LivenessFinding[] = [];
  for (const node of deps.cluster.nodes) {
    let error = node.running ? await deps.cluster.healthy(node) : "not running after the heal";
    if (error && node.running) {
      await sleep(1_000);
      error = await deps.cluster.healthy(node);
    }
    if (error) findings.push({ node: node.id, t_ms: nowMs(), phase, error });
  }
  for (const error of ["error", "heal_error"]) {
    if (typeof detail[error] === "string") findings.push({ node: "harness", t_ms: nowMs(), phase, error: `nemesis ${error}: ${detail[error] as string}` });
  }
  for (const f of findings) deps.event({ type: "liveness", ...f });
}
