// The dashboard's memory target, measured: a real 3-node cluster with writes going on, the
// dashboard open on the Metrics view (heartbeat frames every second feed the chart and the
// tables) in Debian's Chromium, and the page's JS heap read through CDP Performance.getMetrics
// after a forced garbage collection at 30 s and at the end (default 180 s). Fails when the end
// value is more than 5 MB above the 30 s value. Too long for `npm test`; run it with
// `npm run dashboard:heap [-- --seconds N]`.
import { HypercacheClient } from "@hypercache/client";
import { launchChromium } from "../test/browser/browser.js";
import { ADMIN_TOKEN, DashboardCluster, READ_TOKEN } from "../test/browser/dashboard-cluster.js";
import { credentialScript } from "../test/browser/dashboard-page.js";

/** Allowed growth of the JS heap between the 30 s sample and the end (bytes). */
const HEAP_GROWTH_MAX_BYTES = 5 * 1024 * 1024;
const BASELINE_S = 30;

const arg = process.argv.indexOf("--seconds");
const totalS = arg >= 0 ? Number(process.argv[arg + 1]) : 180;
if (!Number.isFinite(totalS) || totalS <= BASELINE_S) throw new Error(`--seconds must be more than ${BASELINE_S}`);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MB`;

const cluster = await DashboardCluster.start();
const browser = await launchChromium();
const sdk = new HypercacheClient({ endpoints: [cluster.node("n1").api], token: ADMIN_TOKEN, discovery: false });
let writing = true;
const writer = (async () => {
  for (let i = 0; writing; i++) {
    await sdk.set(`heap-${i % 500}`, `value ${i}`).catch(() => undefined);
    await sleep(20);
  }
})();
try {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.addInitScript({ content: credentialScript(READ_TOKEN) });
  await page.goto(`${cluster.node("n1").mgmt}/dashboard/#/metrics`);
  await page.locator("#rates-table").waitFor();
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const heap = async (): Promise<number> => {
    await cdp.send("HeapProfiler.collectGarbage");
    const { metrics } = await cdp.send("Performance.getMetrics");
    return metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? NaN;
  };
  const started = Date.now();
  const samples: Array<[number, number]> = [];
  let baseline = NaN;
  while (Date.now() - started < totalS * 1000) {
    await sleep(10_000);
    const s = Math.round((Date.now() - started) / 1000);
    const used = await heap();
    samples.push([s, used]);
    if (Number.isNaN(baseline) && s >= BASELINE_S) baseline = used;
    console.log(`  ${String(s).padStart(4)} s  JS heap used ${mb(used)}`);
  }
  const end = samples[samples.length - 1]![1];
  const growth = end - baseline;
  const rendered = await page.locator("text=/\\d+ samples/").innerText();
  console.log(`dashboard heap: ${mb(baseline)} at ${BASELINE_S} s, ${mb(end)} at ${totalS} s: growth ${mb(growth)} (target at most ${mb(HEAP_GROWTH_MAX_BYTES)}); ${rendered}`);
  if (errors.length > 0) throw new Error(`page errors: ${errors.join("; ")}`);
  if (growth > HEAP_GROWTH_MAX_BYTES) process.exitCode = 1;
} finally {
  writing = false;
  await writer;
  sdk.close();
  await browser.close();
  await cluster.stop();
}
