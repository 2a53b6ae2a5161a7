// Scale-down from outside, on 4 real nodes (replication 3): SIGSTOP D; 20,000 QUORUM writes;
// SIGTERM A: its /dist/drain counts fall while it hands off, and it exits 0; SIGCONT D: every
// acknowledged key ends up on all its owners (B, C and D once A left). Then, with every peer of B
// stopped, B's drain times out and B exits 3.
import { expect } from "chai";
import type { NodeProcess } from "../helpers/node-process.js";
import { clusterPorts, startMember } from "../helpers/node-process.js";
import { eventually, FAST_TIMERS, getJson, mapLimit, members, sleep, stateOf, waitAllAlive } from "./cluster-helpers.js";

const WRITES = 20_000;
const BATCH = 500;

interface DrainBody {
  state: string;
  hints_pending: number;
  migrations_pending: number;
  in_flight: number;
  safe_to_stop: boolean;
  blockers: Array<{ reason: string }>;
}

/** Keys of `keys` that `node` does not hold (read from its own store over the peer port). */
async function missingOn(node: NodeProcess, keys: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (let i = 0; i < keys.length; i += 1000) {
    const part = keys.slice(i, i + 1000);
    const res = await fetch(`${node.dist}/internal/hypercache.peer.v1.PeerService/Get`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ keys: part }) });
    const body = (await res.json()) as { results?: Array<{ key: string; found?: boolean }> };
    const found = new Set((body.results ?? []).filter((r) => r.found).map((r) => r.key));
    for (const k of part) if (!found.has(k)) missing.push(k);
  }
  return missing;
}

describe("integration/drain: scale-down hands off", function () {
  this.timeout(180_000);
  let nodes: NodeProcess[] = [];

  after(async () => {
    for (const n of nodes) {
      n.child.kill("SIGCONT");
      n.child.kill("SIGKILL");
    }
  });

  it("SIGTERM on A with D stopped: the drain counts fall, A exits 0, and every acknowledged key reaches B, C and D", async () => {
    const layout = await clusterPorts(4);
    const env = {
      ...FAST_TIMERS,
      SERVICE_REPLICATION: "3",
      // D stays a suspect owner (not pruned) while stopped (about 3 s), so writes leave hints for
      // it. Stopped, D misses A's leave (only a member's own claim that it left counts), so it
      // keeps A as a suspect owner until SERVICE_DEAD_AFTER and does not take A's share before:
      // at 120 s that came 90 s or more after SIGCONT, past the wait below (a run in 3 took 2 min).
      SERVICE_DEAD_AFTER: "30s",
      // Probes time out after 250 ms, not FAST_TIMERS' 100: under these batches the nodes' loops
      // hold for up to ~100 ms on 2 shared cores, and a peer suspected for a moment leaves the
      // prober seeing 2 of 4 alive (D is stopped): it abstains, and its catch-up cannot finish
      // while D stays suspect, so it refused its share of the writes to the end (2 runs in 7).
      // That is the documented limit of the quorum vote (docs/design.md, "a catch-up pass that
      // cannot reach one peer"), not what this test is about.
      SERVICE_HEARTBEAT: "500ms",
      SERVICE_HINT_TTL: "120s",
      SERVICE_HINT_MAX_PER_NODE: "100000",
      SERVICE_AUTO_SYNC_INTERVAL: "0",
      SERVICE_DRAIN_TIMEOUT: "60s",
    };
    nodes = await Promise.all(layout.map((p) => startMember(layout, p.id, p.id === "n2" ? { ...env, SERVICE_DRAIN_TIMEOUT: "3s" } : env)));
    const [a, b, c, d] = nodes as [NodeProcess, NodeProcess, NodeProcess, NodeProcess];
    await waitAllAlive(nodes, layout.map((p) => p.id), 20_000);

    // 1. D stops (SIGSTOP); the others see it suspect.
    d.child.kill("SIGSTOP");
    await eventually(() => Promise.all([a, b, c].map(members)), (views) => views.every((v) => stateOf(v, d.id) === "suspect"), 15_000);

    // 2. 20,000 QUORUM writes in batches, spread over A, B and C.
    const acked: string[] = [];
    const refused = new Map<string, number>();
    let firstRefusal: string | undefined;
    const batches = Array.from({ length: WRITES / BATCH }, (_, i) => Array.from({ length: BATCH }, (_, j) => `scale-${i * BATCH + j}`));
    await mapLimit(batches, 3, async (keys, i) => {
      const via = [a, b, c][i % 3] as NodeProcess;
      const res = await fetch(`${via.api}/v1/cache/batch/put?consistency=quorum`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items: keys.map((k) => ({ key: k, value: `v-${k}` })) }) });
      const body = (await res.json()) as { results: Array<{ key: string; status: number; error?: { code?: string; message?: string } }> };
      for (const r of body.results) {
        if (r.status === 200) acked.push(r.key);
        else {
          const what = `${via.id} ${r.status} ${r.error?.code ?? ""}`;
          refused.set(what, (refused.get(what) ?? 0) + 1);
          firstRefusal ??= JSON.stringify(r).slice(0, 300);
        }
      }
    });
    // What the refused writes were, should there be too many of them.
    expect(acked.length, `most writes acknowledged; refused: ${JSON.stringify([...refused])}; first: ${firstRefusal}`).to.be.greaterThan(WRITES * 0.95);

    // 3. SIGTERM A: its /dist/drain counts fall while it hands off, and it exits 0.
    const samples: DrainBody[] = [];
    let exited = false;
    void a.exited.then(() => (exited = true));
    a.child.kill("SIGTERM");
    while (!exited) {
      try {
        samples.push(await getJson<DrainBody>(`${a.mgmt}/dist/drain`));
      } catch {
        // the management listener closes at the end of the shutdown
      }
      await sleep(100);
    }
    // On a crash, the message carries what A wrote last (a native crash prints only to stderr).
    const lastWords = () => `stderr: ${a.stderr.join("").slice(-2000)}; last log records: ${JSON.stringify(a.logs.slice(-8))}`;
    expect(await a.exited, lastWords()).to.equal(0);
    const pending = samples.map((s) => s.hints_pending + s.migrations_pending);
    expect(samples.filter((s) => s.state === "draining").length, "A answered /dist/drain while draining").to.be.greaterThan(0);
    expect(Math.max(...pending), JSON.stringify(samples.slice(0, 3))).to.be.greaterThan(0);
    const peak = pending.indexOf(Math.max(...pending));
    expect(Math.min(...pending.slice(peak)), `the counts fell: ${pending.join(" ")}`).to.be.lessThan(pending[peak] as number);
    const drained = a.logs.find((r) => r.message === "drain complete: data handed off, leaving the cluster");
    console.log(`      drain of A: ${String(drained?.elapsed_ms)} ms, pending at most ${Math.max(...pending)}, ${acked.length} keys acknowledged`);
    expect(a.logs.map((r) => r.message)).to.include.members(["drain complete: data handed off, leaving the cluster", "left the cluster", "hypercache-server stopped cleanly"]);
    await eventually(() => Promise.all([b, c].map(members)), (views) => views.every((v) => !v.members.some((m) => m.id === a.id) && !(v as unknown as { known_nodes: string[] }).known_nodes.includes(a.id)), 10_000);

    // 4. SIGCONT D: every acknowledged key ends up on all its owners (B, C, D: three nodes, R = 3).
    d.child.kill("SIGCONT");
    let left: Record<string, number> = {};
    await eventually(
      async () => {
        const counts = await Promise.all([b, c, d].map(async (n) => [n.id, (await missingOn(n, acked)).length] as const));
        left = Object.fromEntries(counts);
        return counts;
      },
      (counts) => counts.every(([, n]) => n === 0),
      90_000,
      1000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; keys missing per node: ${JSON.stringify(left)}`);
    });
  });

  it("with every peer stopped, the drain times out and the node exits 3, logging what is left", async () => {
    const [, b, c, d] = nodes as [NodeProcess, NodeProcess, NodeProcess, NodeProcess];
    c.child.kill("SIGSTOP");
    d.child.kill("SIGSTOP");
    b.child.kill("SIGTERM");
    expect(await b.exited).to.equal(3);
    const timedOut = b.logs.find((r) => r.message === "drain timed out: stopping with data not handed off");
    expect(timedOut, "the timeout record").to.not.equal(undefined);
    expect((timedOut?.blockers as unknown[] | undefined)?.length).to.be.greaterThan(0);
    expect(b.logs.some((r) => r.message === "left the cluster")).to.equal(false);
  });
});
