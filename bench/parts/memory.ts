// Memory of one node holding one million 100-byte items loaded by batch put, and GET latency on
// a side connection while the key browser lists all of them.
import { batchLoad, request, BATCH_ITEMS } from "../http.js";
import { GET, type Settings } from "../measure.js";
import { rssBytes } from "../proc.js";
import { fmt, type Report } from "../report.js";
import { startNodes, type Target } from "../servers.js";
import { runWrk } from "../wrk.js";
import { GENERATOR_CORE, SERVER_CORE } from "./sides.js";

const ITEMS = 1_000_000;
/** Time for the heap to settle after start-up and after the load, before RSS is read. */
const SETTLE_MS = 2000;
const MB = 1e6;
/** The key browser's largest result set: the listing still scans every key, keeps the first 50,000. */
const LISTING_PATH = "/v1/cache/keys?q=*&limit=1&max=50000";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function memoryPart(want: { memory: boolean; browser: boolean }, s: Settings, report: Report): Promise<void> {
  report.section(
    `memory: one node, ${fmt(ITEMS)} items of ${s.valueBytes} bytes`,
    `node on core 0; RSS is VmRSS of /proc/<pid>/status ${SETTLE_MS / 1000} s after start and after loading by POST /v1/cache/batch/put, ${BATCH_ITEMS} items per call; MB = 10^6 bytes`,
  );
  const target = await startNodes(1, [SERVER_CORE], { SERVICE_CAPACITY: String(ITEMS + ITEMS / 10) });
  try {
    await sleep(SETTLE_MS);
    const empty = rssBytes(target.entryPid);
    const started = performance.now();
    await batchLoad(target.port, ITEMS, s.valueBytes);
    const loadSeconds = (performance.now() - started) / 1000;
    await sleep(SETTLE_MS);
    const full = rssBytes(target.entryPid);
    report.line(`  loaded in ${fmt(loadSeconds, 1)} s`);
    report.fact("memory", { items: ITEMS, emptyRssBytes: empty, fullRssBytes: full, loadSeconds });
    if (want.memory) {
      report.figure({ id: "memory.rss-empty", label: "RSS, empty node", value: empty / MB, unit: "MB", valid: true });
      report.figure({ id: "memory.rss", label: `RSS with ${fmt(ITEMS)} items of ${s.valueBytes} bytes`, value: full / MB, unit: "MB", target: "≤ 300 MB", valid: true });
      report.figure({ id: "memory.bytes-per-item", label: "  RSS growth per item", value: (full - empty) / ITEMS, unit: "bytes", valid: true });
    }
    if (want.browser) await browser(target, s, report);
  } finally {
    await target.stop();
  }
}

/**
 * wrk on one connection (core 1) reads random keys for the measured window while this process
 * lists every key over and over on another connection; a warm-up without listings comes first.
 */
async function browser(target: Target, s: Settings, report: Report): Promise<void> {
  report.section(
    `key browser: GET latency on one connection while GET ${LISTING_PATH} scans all ${fmt(ITEMS)} keys`,
    `wrk -t1 -c1 on core 1, random keys; ${s.warmupSeconds} s without listings (shown as the idle figures), then ${s.seconds} s with listings back to back`,
  );
  const load = { port: target.port, workload: GET, keys: ITEMS, valueBytes: s.valueBytes, connections: 1, placement: GENERATOR_CORE };
  const idle = await runWrk({ ...load, seconds: s.warmupSeconds }, s.hz);
  let listing = true;
  const listingMs: number[] = [];
  let failure: unknown;
  const listings = (async () => {
    while (listing) {
      const t = performance.now();
      const a = await request(target.port, "GET", LISTING_PATH);
      if (a.status !== 200) throw new Error(`key listing answered ${a.status}: ${a.body.toString().slice(0, 200)}`);
      listingMs.push(performance.now() - t);
    }
  })().catch((err: unknown) => (failure = err));
  const busy = await runWrk({ ...load, seconds: s.seconds }, s.hz).finally(() => (listing = false));
  await listings;
  if (failure !== undefined) throw failure;
  const errors = busy.non2xx + busy.socketErrors.connect + busy.socketErrors.read + busy.socketErrors.write + busy.socketErrors.timeout;
  const meanListing = listingMs.reduce((a, b) => a + b, 0) / Math.max(1, listingMs.length);
  report.line(`  idle: ${fmt(idle.opsPerSec)} GET/s, p50 ${fmt(idle.p50Ms, 2)} ms, p99 ${fmt(idle.p99Ms, 2)} ms, max ${fmt(idle.maxMs, 2)} ms`);
  report.line(`  ${listingMs.length} listings of ${fmt(meanListing)} ms on average; ${fmt(busy.requests)} GETs meanwhile${errors > 0 ? `, ERRORS ${errors}` : ""}`);
  const valid = errors === 0 && listingMs.length > 0;
  report.fact("browser", { idle: { opsPerSec: idle.opsPerSec, p50Ms: idle.p50Ms, p99Ms: idle.p99Ms, maxMs: idle.maxMs }, listings: listingMs.length, meanListingMs: meanListing, getsDuringListings: busy.requests, errors });
  report.figure({ id: "browser.p50", label: "GET p50 during key listings", value: busy.p50Ms, unit: "ms", valid });
  report.figure({ id: "browser.p99", label: "GET p99 during key listings", value: busy.p99Ms, unit: "ms", valid });
  report.figure({ id: "browser.max", label: "GET max during key listings", value: busy.maxMs, unit: "ms", valid });
}
