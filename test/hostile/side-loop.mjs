// Worker thread of the hostile suite: GETs /healthz back to back on its own keep-alive
// connection and samples the node's RSS from /proc/<pid>/status, so what it measures does not
// depend on the test's own event loop (which sends the hostile request and reads its answer).
// Messages in: "stop". Messages out: "ready" once the first /healthz has answered, then (after
// "stop") the figures of the run.
import http from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

const { url, pid, rssEveryMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** A field of /proc/<pid>/status in bytes: VmRSS (resident now) or VmHWM (resident at peak). */
function statusBytes(field) {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}
const rssBytes = () => statusBytes("VmRSS");

/** Resets the kernel's peak-RSS mark (VmHWM) to the current RSS; false where not allowed. */
function resetPeak() {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

function healthz() {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
}

let stopping = false;
let stopSignal;
const stopped = new Promise((resolve) => (stopSignal = resolve));
let started = 0;
const latencies = [];
let errors = 0;
const peakReset = resetPeak();
const rssStart = rssBytes();
let rssPeak = rssStart;
let lastRss = performance.now();
const loopStarted = performance.now();
let lastDone = loopStarted;
let worstGapMs = 0;

parentPort.on("message", (msg) => {
  if (msg === "stop") {
    stopping = true;
    stopSignal("stopped");
  }
});

while (!stopping) {
  started = performance.now();
  worstGapMs = Math.max(worstGapMs, started - lastDone);
  try {
    // A request still waiting when the run stops counts with the time it has waited so far.
    const status = await Promise.race([healthz(), stopped]);
    if (status !== 200 && status !== "stopped") errors++;
  } catch {
    errors++;
  }
  const done = performance.now();
  if (latencies.length === 0) parentPort.postMessage("ready");
  lastDone = done;
  latencies.push(done - started);
  if (done - lastRss >= rssEveryMs) {
    rssPeak = Math.max(rssPeak, rssBytes());
    lastRss = done;
  }
}
rssPeak = Math.max(rssPeak, rssBytes(), peakReset ? statusBytes("VmHWM") : 0);
agent.destroy();
latencies.sort((a, b) => a - b);
parentPort.postMessage({
  requests: latencies.length,
  errors,
  worstMs: latencies.at(-1) ?? 0,
  p50Ms: latencies[Math.floor(latencies.length / 2)] ?? 0,
  p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
  durationMs: performance.now() - loopStarted,
  worstGapMs,
  rssStartBytes: rssStart,
  rssPeakBytes: rssPeak,
  peakFromKernel: peakReset,
});
