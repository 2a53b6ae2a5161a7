// After each heal, with the workload paused: poll every owner's copy of every key until they agree
// (convergence rounds), then read every key at QUORUM (checkpoint reads) for the lost-write check.
import type { ConvergenceRound, KeyPlan, KeySample, Op } from "../checker/history.js";
import { divergingKeys } from "../checker/convergence.js";
import { mapLimit } from "../lib/map-limit.js";
import type { SeededRandom } from "../lib/random.js";
import type { Cluster } from "../proc/cluster.js";
import type { CacheClient, Endpoint } from "../workload/cache-client.js";

const CONCURRENCY = 16;
const REQUEST_TIMEOUT_MS = 5_000;
const ROUND_PAUSE_MS = 1_000;
const READ_ATTEMPTS = 4;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function endpoints(cluster: Cluster): Endpoint[] {
  return cluster.nodes.filter((n) => n.running).map((n) => n.spec);
}

/** One round: the owners of each key (as one node sees them) and each owner's HEAD consistency=one. */
export async function sampleRound(cluster: Cluster, client: CacheClient, keys: readonly KeyPlan[], phase: string, round: number): Promise<ConvergenceRound> {
  const running = endpoints(cluster);
  const t_ms = performance.timeOrigin + performance.now();
  const samples = await mapLimit(keys, CONCURRENCY, async ({ key }): Promise<KeySample> => {
    let owners: string[] | undefined;
    for (let i = 0; i < running.length && !owners; i++) owners = await client.owners(running[(round + i) % running.length] as Endpoint, key, REQUEST_TIMEOUT_MS);
    if (!owners) return { key, owners: [], copies: [] };
    const copies = await Promise.all(
      owners.map(async (id) => {
        const node = cluster.nodes.find((n) => n.id === id);
        if (!node) return { node: id, status: 0, version: null, origin: null };
        return { node: id, ...(await client.head(node.spec, key, REQUEST_TIMEOUT_MS)) };
      }),
    );
    return { key, owners, copies };
  });
  return { phase, t_ms, samples };
}

/** Polls rounds until one converges or `deadlineMs` (performance.now() time) passes; reports each round. */
export async function pollConvergence(
  cluster: Cluster,
  client: CacheClient,
  keys: readonly KeyPlan[],
  phase: string,
  deadlineMs: number,
  onRound: (r: ConvergenceRound) => void,
): Promise<boolean> {
  for (let round = 0; ; round++) {
    const r = await sampleRound(cluster, client, keys, phase, round);
    onRound(r);
    if (divergingKeys(r).length === 0) return true;
    if (performance.now() >= deadlineMs) return false;
    await sleep(ROUND_PAUSE_MS);
  }
}

/** Reads every key at QUORUM through random running nodes, retrying a failed read on another node. */
export async function checkpointReads(cluster: Cluster, client: CacheClient, keys: readonly KeyPlan[], phase: string, random: SeededRandom, record: (op: Op) => void): Promise<void> {
  const running = endpoints(cluster);
  await mapLimit(keys, CONCURRENCY, async ({ key }) => {
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const op = await client.read(random.pick(running), key, "quorum", { worker: "checkpoint", phase, timeoutMs: REQUEST_TIMEOUT_MS });
      record(op);
      if (op.outcome === "ok") return;
      await sleep(500);
    }
  });
}
