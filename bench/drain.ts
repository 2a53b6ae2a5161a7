// The drain hand-off target: a node holding at least 100,000 keys and 10,000 hints for a stopped
// owner drains (SIGTERM) within 30 s. Four nodes on loopback (replication 3); D is stopped
// (SIGSTOP) before the writes, so the coordinators queue hints for it; the writes go through A
// (batch put, QUORUM). Then A gets SIGTERM; the figure is the drain time A logs ("drain
// complete", elapsed_ms) and its exit code. Not part of `npm test`:
//   npm run build && node --import tsx/esm bench/drain.ts [--keys 140000]
import { clusterPorts, startMember, type NodeProcess } from "../test/helpers/node-process.js";
import { eventually, FAST_TIMERS, getJson, mapLimit, members, stateOf, waitAllAlive } from "../test/integration/cluster-helpers.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

async function main(): Promise<void> {
  const keys = arg("keys", 140_000);
  const layout = await clusterPorts(4);
  const env = {
    ...FAST_TIMERS,
    SERVICE_REPLICATION: "3",
    SERVICE_DEAD_AFTER: "300s",
    SERVICE_HINT_TTL: "300s",
    SERVICE_HINT_MAX_PER_NODE: "1000000",
    SERVICE_HINT_MAX_BYTES: "512MiB",
    SERVICE_CAPACITY: "1000000",
    SERVICE_AUTO_SYNC_INTERVAL: "0",
    SERVICE_DRAIN_TIMEOUT: "120s",
  };
  const nodes: NodeProcess[] = await Promise.all(layout.map((p) => startMember(layout, p.id, env)));
  const [a, , , d] = nodes as [NodeProcess, NodeProcess, NodeProcess, NodeProcess];
  try {
    await waitAllAlive(nodes, layout.map((p) => p.id), 30_000);
    d.child.kill("SIGSTOP");
    await eventually(() => members(a), (v) => stateOf(v, d.id) === "suspect", 15_000);
    const started = Date.now();
    const batches = Array.from({ length: Math.ceil(keys / 1000) }, (_, i) => Array.from({ length: 1000 }, (_, j) => `drain-${i * 1000 + j}`));
    await mapLimit(batches, 2, async (batch) => {
      const res = await fetch(`${a.api}/v1/cache/batch/put?consistency=quorum`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items: batch.map((k) => ({ key: k, value: `value-of-${k}-`.padEnd(100, "x") })) }) });
      await res.text();
    });
    const held = await getJson<{ items: number }>(`${a.mgmt}/stats`);
    const before = await getJson<{ hints_pending: number }>(`${a.mgmt}/dist/drain`);
    console.log(`wrote ${keys} keys in ${((Date.now() - started) / 1000).toFixed(1)} s; A holds ${held.items} keys and ${before.hints_pending} hints (D stopped)`);
    // The target is about a drain of at least this much: a smaller load would say nothing of it.
    const short = held.items < 100_000 || before.hints_pending < 10_000;
    if (short) console.log(`NOT VALID: the target needs at least 100,000 keys and 10,000 hints on A (pass a larger --keys)`);
    const sigterm = Date.now();
    a.child.kill("SIGTERM");
    const code = await a.exited;
    const done = a.logs.find((r) => r.message === "drain complete: data handed off, leaving the cluster");
    console.log(`A exited ${String(code)} ${((Date.now() - sigterm) / 1000).toFixed(1)} s after SIGTERM; drain ${String(done?.elapsed_ms)} ms (target: within 30 s)${short ? " NOT VALID (see above)" : ""}`);
    if (short) process.exitCode = 1;
    if (process.argv.includes("--verbose")) for (const r of a.logs.slice(-40)) console.log(JSON.stringify(r).slice(0, 400));
  } finally {
    for (const n of nodes) {
      n.child.kill("SIGCONT");
      n.child.kill("SIGKILL");
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
