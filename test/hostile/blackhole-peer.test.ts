// One peer cannot stall a node (hardening §4): a member that accepts connections and never
// answers, while QUORUM writes arrive at up to 1,000/s through another node. Writes to the other
// owners are not queued behind it, its queue is bounded (overflow becomes hints, counted),
// suspect owners are tried last, and no client request waits longer than the peer timeout plus
// its own quorum wait. A side loop on /healthz watches the event loop; RSS is read from /proc.
import net from "node:net";
import { Worker } from "node:worker_threads";
import { readFile } from "node:fs/promises";
import { expect } from "chai";
import { PEER_TIMEOUT_MS } from "../../src/core/limits.js";
import { freePorts } from "../helpers/ports.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

async function rssMiB(pid: number): Promise<number> {
  const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

/**
 * Runs GET /healthz back to back on its own keep-alive connection in a worker thread (so the
 * test's own busy event loop does not count) until stopped; returns the worst latency in ms.
 */
function healthzLoop(url: string): { stop(): Promise<number> } {
  const code = `
    const http = require("node:http");
    const { parentPort, workerData } = require("node:worker_threads");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let stop = false, worst = 0;
    parentPort.on("message", () => (stop = true));
    const once = () => new Promise((resolve) => {
      const req = http.get(workerData.url + "/healthz", { agent }, (res) => { res.resume(); res.on("end", resolve); });
      req.on("error", resolve);
    });
    (async () => {
      while (!stop) {
        const t0 = performance.now();
        await once();
        worst = Math.max(worst, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
      }
      parentPort.postMessage(worst);
    })();`;
  const worker = new Worker(code, { eval: true, workerData: { url } });
  const result = new Promise<number>((resolve) => worker.once("message", resolve));
  return {
    async stop() {
      worker.postMessage("stop");
      const worst = await result;
      await worker.terminate();
      return worst;
    },
  };
}

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

  it("QUORUM writes at up to 1,000/s all succeed, none waits longer than the peer timeout plus its quorum wait, /healthz stays under 100 ms and RSS grows by at most 64 MB", async () => {
    const rssBefore = await rssMiB(n1.child.pid as number);
    const side = healthzLoop(n1.api);
    const latencies: number[] = [];
    const failures: string[] = [];
    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; performance.now() - started < 8_000; i++) {
      // Paced at 1,000/s at most; the machine may manage fewer.
      const due = started + i;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (inFlight.size >= 2000) await Promise.race(inFlight);
      const t0 = performance.now();
      const p = fetch(`${n1.api}/v1/cache/bh-${i % 5000}`, { method: "PUT", body: `v${i}` })
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
    const worstHealthz = await side.stop();
    const rssAfter = await rssMiB(n1.child.pid as number);
    const worstWrite = Math.max(...latencies);
    const metrics = (await (await fetch(`${n1.mgmt}/dist/metrics`)).json()) as Record<string, number>;
    console.log(
      `      ${latencies.length} writes in ${((performance.now() - started) / 1000).toFixed(1)} s; worst write ${worstWrite.toFixed(0)} ms; worst /healthz ${worstHealthz.toFixed(0)} ms; ` +
        `RSS ${rssBefore.toFixed(0)} -> ${rssAfter.toFixed(0)} MiB; hints queued ${metrics["dist.hinted.queued"]}, queue overflow ${metrics["dist.peer.queue_overflow"]}, promotions ${metrics["dist.write.forward_promotion"]}`,
    );
    expect(failures.slice(0, 5), `${failures.length} failed writes`).to.deep.equal([]);
    expect(worstWrite, "worst write latency (ms): the peer timeout plus a quorum wait").to.be.below(2 * PEER_TIMEOUT_MS + 1000);
    expect(worstHealthz, "worst /healthz latency (ms)").to.be.below(100);
    expect(rssAfter - rssBefore, "RSS growth (MiB)").to.be.below(64);
    expect(metrics["dist.hinted.queued"], "writes for the dead owner became hints").to.be.greaterThan(0);
  });
});
