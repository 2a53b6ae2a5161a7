// One peer cannot stall a node (hardening §4): a member that accepts connections and never
// answers, while QUORUM writes arrive at up to 1,000/s through another node. Writes to the other
// owners are not queued behind it, its queue is bounded (overflow becomes hints, counted),
// suspect owners are tried last, and no client request waits longer than the peer timeout plus
// its own quorum wait. The suite's side loop (measure.ts) watches /healthz and RSS.
import net from "node:net";
import { expect } from "chai";
import { PEER_TIMEOUT_MS } from "../../src/core/limits.js";
import { freePorts } from "../helpers/ports.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectNoStall } from "./measure.js";

describe("hostile: a peer that accepts connections and never answers", function () {
  this.timeout(90_000);
  let blackhole: net.Server;
  const sockets = new Set<net.Socket>();
  let n1: NodeProcess;
  let n2: NodeProcess;

  before(async () => {
    blackhole = net.createServer((s) => {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    });
    await new Promise<void>((r) => blackhole.listen(0, "127.0.0.1", r));
    const bh = (blackhole.address() as net.AddressInfo).port;
    const [d1, d2] = await freePorts(2);
    const env = (self: number, other: number, otherId: string) => ({
      SERVICE_DIST_ADDR: `127.0.0.1:${self}`,
      SERVICE_SEEDS: `${otherId}@127.0.0.1:${other},n3@127.0.0.1:${bh}`,
      SERVICE_REPLICATION: "3",
      SERVICE_WRITE_CONSISTENCY: "quorum",
    });
    n1 = await startNode({ id: "n1", env: env(d1 as number, d2 as number, "n2") });
    n2 = await startNode({ id: "n2", env: env(d2 as number, d1 as number, "n1") });
  });
  after(async () => {
    await Promise.all([n1?.stop("SIGKILL"), n2?.stop("SIGKILL")]);
    for (const s of sockets) s.destroy();
    await new Promise((r) => blackhole.close(r));
  });

  /** QUORUM writes through n1 at up to 1,000/s for 8 s; returns each latency and each failure. */
  async function writeLoad(prefix: string): Promise<{ latencies: number[]; failures: string[]; seconds: number }> {
    const latencies: number[] = [];
    const failures: string[] = [];
    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; performance.now() - started < 8_000; i++) {
      // Paced at 1,000/s at most; the machine may manage fewer.
      const wait = started + i - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (inFlight.size >= 2000) await Promise.race(inFlight);
      const t0 = performance.now();
      const p = fetch(`${n1.api}/v1/cache/${prefix}-${i % 5000}`, { method: "PUT", body: `v${i}` })
        .then(async (r) => {
          latencies.push(performance.now() - t0);
          if (r.status !== 200) failures.push(`${r.status} ${(await r.text()).slice(0, 120)}`);
          else await r.arrayBuffer();
        })
        .catch((e: unknown) => void failures.push(String(e)))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    return { latencies, failures, seconds: (performance.now() - started) / 1000 };
  }

  it("QUORUM writes at up to 1,000/s all succeed, none waits longer than the peer timeout plus its quorum wait, /healthz stays within its budget and RSS grows by at most 64 MB", async () => {
    let run = 0;
    const f = await expectNoStall(n1, "a blackholed peer under 1,000 writes/s", () => writeLoad(`bh${run++}`), { timeoutMs: 60_000 });
    if (f.result instanceof Error) throw f.result;
    const { latencies, failures, seconds } = f.result;
    const worstWrite = Math.max(...latencies);
    const metrics = (await (await fetch(`${n1.mgmt}/dist/metrics`)).json()) as Record<string, number>;
    console.log(
      `      ${latencies.length} writes in ${seconds.toFixed(1)} s; worst write ${worstWrite.toFixed(0)} ms; ` +
        `hints queued ${metrics["dist.hinted.queued"]}, queue overflow ${metrics["dist.peer.queue_overflow"]}, promotions ${metrics["dist.write.forward_promotion"]}`,
    );
    if (failures.length > 0) {
      // What the nodes saw, so a failure on a CI machine can be understood afterwards.
      const m2 = (await (await fetch(`${n2.mgmt}/dist/metrics`)).json()) as Record<string, number>;
      const peerMetrics = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => /peer|quorum|forward|refused|suspect|dead/.test(k)));
      const warnings = (n: NodeProcess) => n.logs.filter((r) => r.level !== "info" && r.level !== "debug").slice(-10);
      console.log(JSON.stringify({ n1: { metrics: peerMetrics(metrics), warnings: warnings(n1) }, n2: { metrics: peerMetrics(m2), warnings: warnings(n2) } }, null, 1));
    }
    expect(failures.slice(0, 5), `${failures.length} failed writes`).to.deep.equal([]);
    expect(worstWrite, "worst write latency (ms): the peer timeout plus a quorum wait").to.be.below(2 * PEER_TIMEOUT_MS + 1000);
    expect(metrics["dist.hinted.queued"], "writes for the dead owner became hints").to.be.greaterThan(0);
  });
});
