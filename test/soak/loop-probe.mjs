// The event-loop delay probe, from outside the node: a worker thread (its own event loop, so the
// traffic generator's work does not delay it) times GET /healthz on every node every 100 ms over
// keep-alive connections. A stalled event loop shows up as a slow answer. The worker also reports
// its own event-loop delay, the noise floor of the measurement.
import { parentPort, workerData } from "node:worker_threads";
import http from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";

// Plain JavaScript: worker threads do not get the TypeScript loader on Node 20.
/** @type {{ targets: { id: string, api: string }[], intervalMs: number }} */
const { targets, intervalMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const own = monitorEventLoopDelay({ resolution: 10 });
own.enable();

/** @param {string} api @returns {Promise<number>} */
function probe(api) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get(`${api}/healthz`, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - t0));
    });
    req.setTimeout(10_000, () => req.destroy());
    req.on("error", () => resolve(performance.now() - t0));
  });
}

let stopped = false;
parentPort?.on("message", (m) => {
  if (m === "stop") stopped = true;
});

for (const t of targets) {
  void (async () => {
    while (!stopped) {
      const ms = await probe(t.api);
      parentPort?.postMessage({ node: t.id, ms });
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
}

setInterval(() => {
  if (stopped) {
    parentPort?.postMessage({ own_p99_ms: own.percentile(99) / 1e6, own_max_ms: own.max / 1e6 });
    process.exit(0);
  }
}, 200);
