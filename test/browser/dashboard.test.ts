// The dashboard in a real browser (Debian's Chromium through playwright-core) against a real
// 3-node cluster with authentication: live members through kill -9 and restart, the key browser,
// scopes, drain, a bad token, a dropped and a refused event stream, and sign-in with a Basic user and with no credential (on a node that
// allows anonymous callers and on one that does not). Any console error, page error or failed request fails a test
// (except the 401 and 403 provoked on purpose); axe finds no serious or critical violation; every
// view is photographed at 1280x800 and 390x844 into test-artifacts/dashboard/.
import { expect } from "chai";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { AxeBuilder } from "@axe-core/playwright";
import { HypercacheClient } from "@hypercache/client";
import { DESKTOP, PHONE, launchChromium, watchedPage, type Browser, type PageProblems } from "./browser.js";
import { ADMIN_TOKEN, ANONYMOUS_NODE, BASIC_PASSWORD, BASIC_USER, DashboardCluster, READ_TOKEN } from "./dashboard-cluster.js";
import { RECORDERS, credentialScript, pollPage, recordRowStates, renderTimes, rowStates, signedInPage } from "./dashboard-page.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test-artifacts", "dashboard");
/** Targets of the issue. */
const COLD_LOAD_MS_MAX = 1500;
const FRAME_TO_DOM_MS_MAX = 200;
const FIXTURE_RENDER_MS_MAX = 100;
const FIXTURE_LOADS = 3;

/** The 1,000 keys written through the API, in sort order, and keys that match no filter used. */
const KEYS = Array.from({ length: 1000 }, (_, i) => `dash-key-${String(i).padStart(4, "0")}`);
const OTHER_KEYS = ["other-1", "other-2", "dash-other"];

const figures: string[] = [];
const shots: string[] = [];

function noProblems(watch: PageProblems): void {
  expect(watch.problems, watch.problems.join("\n")).to.deep.equal([]);
}

/** Every key of the page list, after searching `q` with page size `limit`. */
async function search(page: Page, q: string, limit: number): Promise<void> {
  await page.getByLabel("Filter").fill(q);
  await page.getByLabel("Page size").selectOption(String(limit));
  const answered = page.waitForResponse((r) => r.url().includes("/cluster/keys?"));
  await page.getByRole("button", { name: "Search" }).click();
  await answered;
  await page.locator("#keys-summary").waitFor();
}

const listedKeys = (page: Page) => page.locator("#key-list li button").allInnerTexts();

/** Waits for the page's key list to settle after a paging click. */
async function turnPage(page: Page, button: "Next page" | "Previous page"): Promise<string[]> {
  const answered = page.waitForResponse((r) => r.url().includes("/cluster/keys?"));
  await page.getByRole("button", { name: button }).click();
  await answered;
  await page.waitForTimeout(50);
  return listedKeys(page);
}

/** The views, the link that opens each, and what shows once its data is in. */
const VIEWS: ReadonlyArray<{ id: string; link: string; ready: (page: Page) => Promise<void> }> = [
  { id: "overview", link: "Overview", ready: async (p) => void (await pollPage(p, `/\\d/.test(document.querySelector("#node-state")?.closest("dl")?.innerText ?? "") && document.querySelector("#node-state")?.textContent !== "…"`)) },
  { id: "members", link: "Members", ready: (p) => p.locator('#members-table tbody tr[data-state="alive"]').nth(2).waitFor() },
  { id: "ring", link: "Ring", ready: (p) => p.locator("#ring-table tbody tr").nth(2).waitFor() },
  { id: "metrics", link: "Metrics", ready: async (p) => void (await pollPage(p, `Number((document.body.innerText.match(/(\\d+) samples/) ?? [])[1] ?? 0) >= 3`)) },
  { id: "hints", link: "Hints", ready: (p) => p.locator("#hints-total").waitFor() },
  {
    id: "keys",
    link: "Keys",
    ready: async (p) => {
      await search(p, "dash-", 50);
      await p.getByRole("button", { name: "dash-binary" }).click();
      await p.locator("#value-preview").waitFor();
      await p.locator("#replicas-table tbody tr").nth(2).waitFor();
    },
  },
  { id: "admin", link: "Admin", ready: (p) => p.locator("#drain").waitFor() },
];

/** True when the page needs no horizontal scrolling at its current size. */
const fitsWidth = (page: Page) => page.evaluate("document.documentElement.scrollWidth <= window.innerWidth") as Promise<boolean>;

async function aliveRows(page: Page): Promise<string[]> {
  return page.$$eval('#members-table tbody tr[data-state="alive"]', (rows) => rows.map((r) => r.getAttribute("data-member") ?? ""));
}

/** Signs in through the form with the credential kind named by its radio label. */
async function signInWith(page: Page, kind: "User and password (Basic)" | "None (anonymous or client certificate)", fill: () => Promise<void> = async () => undefined): Promise<void> {
  await page.getByLabel(kind).check();
  await fill();
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Fills the Basic user and password of the sign-in form. */
async function fillBasic(page: Page): Promise<void> {
  await page.getByLabel("User", { exact: true }).fill(BASIC_USER);
  await page.getByLabel("Password", { exact: true }).fill(BASIC_PASSWORD);
}

/** The Authorization header (or "none") of every request the page makes to `origin`, as "PATH header". */
function recordAuthorization(page: Page, origin: string): string[] {
  const seen: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.origin === origin && !url.pathname.startsWith("/dashboard")) seen.push(`${url.pathname} ${r.headers().authorization ?? "none"}`);
  });
  return seen;
}

describe("dashboard in Chromium against a 3-node cluster with auth", function () {
  this.timeout(120_000);
  let cluster: DashboardCluster;
  let browser: Browser;
  const base = () => cluster.node("n1").mgmt;

  before(async function () {
    this.timeout(60_000);
    if (!existsSync(join(ROOT, "dist", "dashboard", "index.html"))) throw new Error("dist/dashboard is missing: run npm run build");
    mkdirSync(ARTIFACTS, { recursive: true });
    [cluster, browser] = await Promise.all([DashboardCluster.start(), launchChromium()]);
  });

  after(async () => {
    await browser?.close();
    await cluster?.stop();
    if (figures.length > 0) console.log(`\n    dashboard figures:\n${figures.map((f) => `      ${f}`).join("\n")}`);
    if (shots.length > 0) console.log(`    screenshots (${shots.length}) in ${ARTIFACTS}:\n${shots.map((s) => `      ${s}`).join("\n")}`);
  });

  it("a read token signs in through the form and sees three alive rows and no admin controls", async () => {
    const { page, watch } = await watchedPage(browser.context);
    await page.goto(`${base()}/dashboard/`);
    await page.getByLabel("Token", { exact: true }).fill(READ_TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Members" }).click();
    await page.locator('#members-table tbody tr[data-state="alive"]').nth(2).waitFor();
    expect((await aliveRows(page)).sort()).to.deep.equal(["n1", "n2", "n3"]);
    expect(await page.getByText("Signed in as reader").count()).to.equal(1);
    expect(await page.getByRole("link", { name: "Admin" }).count(), "admin link for a read token").to.equal(0);
    expect(await page.evaluate("sessionStorage.length")).to.equal(1);
    expect(await page.evaluate("localStorage.length"), "nothing in localStorage").to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("the overview shows the keys and values the node holds against its byte budget (SERVICE_MAX_DATA_BYTES)", async () => {
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "overview");
    await pollPage(page, `document.querySelector("#node-data")?.textContent?.includes(" of ") === true`);
    expect(await page.locator("#node-data").innerText()).to.match(/^\d+(\.\d)? (B|KiB|MiB) of \d+\.\d+ (MiB|GiB) \(\d+\.\d%\)$/);
    noProblems(watch);
    await page.close();
  });

  it(`cold load: the members table shows three alive rows within ${COLD_LOAD_MS_MAX} ms`, async () => {
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "members");
    const ms = await pollPage<number>(page, "window.__aliveRowsAt");
    figures.push(`cold load to three alive member rows: ${ms.toFixed(0)} ms (target ${COLD_LOAD_MS_MAX} ms; navigation start to DOM, fresh page, assets from memory)`);
    expect(ms).to.be.at.most(COLD_LOAD_MS_MAX);
    noProblems(watch);
    await page.close();
  });

  it(`a 200-member fixture frame renders in the members table within ${FIXTURE_RENDER_MS_MAX} ms`, async () => {
    const { page, watch } = await watchedPage(browser.context);
    const now = new Date().toISOString();
    const fixture = {
      node: "m000", replication: 3, virtual_nodes: 128, membership_version: 200, known_nodes: [] as string[],
      members: Array.from({ length: 200 }, (_, i) => {
        const id = `m${String(i).padStart(3, "0")}`;
        return { id, address: `10.0.${i >> 8}.${i & 255}:7946`, api_url: `http://10.0.0.${i & 255}:8080`, mgmt_url: `http://10.0.0.${i & 255}:8081`, state: i % 10 === 0 ? "suspect" : "alive", draining: false, incarnation: i, last_seen: now };
      }),
    };
    // One stream that carries the fixture and then stays quiet (no reconnect during the test).
    await page.route("**/cluster/events", (route) =>
      route.fulfill({ status: 200, headers: { "content-type": "text/event-stream", "cache-control": "no-cache" }, body: `retry: 600000\n\nevent: members\ndata: ${JSON.stringify(fixture)}\n\n` }),
    );
    await page.addInitScript({ content: credentialScript(READ_TOKEN) });
    await page.addInitScript({ content: RECORDERS });
    // Three loads, each rendering the fixture into an empty table; the median is the figure (one
    // load can be stalled by a busy machine).
    const times: number[] = [];
    for (let load = 0; load < FIXTURE_LOADS; load++) {
      await (load === 0 ? page.goto(`${base()}/dashboard/#/members`) : page.reload());
      await page.locator("#members-table tbody tr").nth(199).waitFor();
      const renders = await renderTimes(page);
      expect(renders.length, "one members-render measure per load").to.equal(1);
      times.push(renders[0]!);
    }
    const ms = [...times].sort((a, b) => a - b)[FIXTURE_LOADS >> 1]!;
    figures.push(`200-member fixture frame to rows in the DOM: median ${ms.toFixed(1)} ms of ${FIXTURE_LOADS} loads (${times.map((t) => t.toFixed(1)).join(", ")}) (target ${FIXTURE_RENDER_MS_MAX} ms; User Timing measure from frame arrival to layout effect)`);
    expect(ms).to.be.at.most(FIXTURE_RENDER_MS_MAX);
    expect(await page.locator('#members-table tr[data-state="suspect"]').count()).to.equal(20);
    noProblems(watch);
    await page.close();
  });

  it("kill -9 a node: its row goes suspect, then dead, without a reload; restarted, it goes alive", async () => {
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "members");
    await page.locator('#members-table tbody tr[data-state="alive"]').nth(2).waitFor();
    await page.evaluate("window.__sameDocument = true");
    await recordRowStates(page, "n3");
    await cluster.node("n3").stop("SIGKILL");
    await page.waitForSelector('#members-table tr[data-member="n3"][data-state="dead"]', { timeout: 30_000 });
    const states = await rowStates(page);
    expect(states, `n3 row states: ${states.join(" -> ")}`).to.include("suspect");
    expect(states.indexOf("suspect")).to.be.lessThan(states.indexOf("dead"));
    expect(await page.locator('#members-table tr[data-member="n3"] .badge').first().innerText()).to.equal("dead");

    await cluster.restart("n3");
    await page.waitForSelector('#members-table tr[data-member="n3"][data-state="alive"]', { timeout: 20_000 });
    expect(await page.evaluate("window.__sameDocument"), "the page was not reloaded").to.equal(true);
    const renders = await renderTimes(page);
    const worst = Math.max(...renders);
    figures.push(`members frame to DOM over ${renders.length} live frames (kill, prune, rejoin): max ${worst.toFixed(1)} ms, median ${renders.sort((a, b) => a - b)[renders.length >> 1]!.toFixed(1)} ms (target ${FRAME_TO_DOM_MS_MAX} ms)`);
    expect(worst).to.be.at.most(FRAME_TO_DOM_MS_MAX);
    noProblems(watch);
    await page.close();
    await cluster.waitAllAlive();
  });

  it("when the event stream drops, a banner says so and the page reconnects after the retry delay", async () => {
    const { page, watch } = await watchedPage(browser.context);
    const members = await cluster.mgmtJson<unknown>("n1", "/cluster/members");
    let streams = 0;
    // The first stream carries one frame and ends (as when a proxy or the node cuts it); later
    // ones go to the node.
    await page.route("**/cluster/events", (route) => {
      streams++;
      if (streams > 1) return route.continue();
      return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `retry: 800\n\nevent: members\ndata: ${JSON.stringify(members)}\n\n` });
    });
    await page.addInitScript({ content: credentialScript(READ_TOKEN) });
    await page.goto(`${base()}/dashboard/#/members`);
    const banner = page.locator(".banner.warn");
    await banner.waitFor();
    expect(await banner.innerText()).to.match(/^Live updates lost: the stream ended\. Reconnecting in \d s \(attempt 1\); the data shown may be stale\.$/);
    expect(await page.locator('#members-table tbody tr[data-state="alive"]').count(), "the last data stays on screen").to.equal(3);
    await banner.waitFor({ state: "detached", timeout: 10_000 });
    expect(streams).to.equal(2);
    await page.locator('#members-table tbody tr[data-state="alive"]').nth(2).waitFor();
    noProblems(watch);
    await page.close();
  });

  it("when the event stream is refused (403), a banner says so with the server's code and no reconnect follows", async () => {
    const { page, watch } = await watchedPage(browser.context);
    watch.allowed.push(/status of 403/);
    let streams = 0;
    await page.route("**/cluster/events", (route) => {
      streams++;
      return route.fulfill({ status: 403, headers: { "content-type": "application/json" }, body: JSON.stringify({ error: "identity lost the read scope", code: "FORBIDDEN" }) });
    });
    await page.addInitScript({ content: credentialScript(READ_TOKEN) });
    await page.goto(`${base()}/dashboard/#/members`);
    const banner = page.locator(".banner.error");
    await banner.waitFor();
    expect(await banner.innerText()).to.equal("The event stream was refused: identity lost the read scope (FORBIDDEN)");
    // Longer than the first reconnect delay (1 s before any stream opened).
    await page.waitForTimeout(1500);
    expect(streams, "a refused stream is not asked again").to.equal(1);
    expect(await page.locator(".banner.warn").count()).to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("1,000 keys written through the API are found by prefix and by glob, and paging is stable", async () => {
    const sdk = new HypercacheClient({ endpoints: [cluster.node("n1").api], token: ADMIN_TOKEN, discovery: false });
    try {
      const results = await sdk.setMany([...KEYS.map((key, i) => ({ key, value: `value of ${key} #${i}` })), ...OTHER_KEYS.map((key) => ({ key, value: "other" }))]);
      expect(results.filter((r) => !r.stored).map((r) => `${r.key}: ${String(r.error)}`)).to.deep.equal([]);
      await sdk.set("dash-ttl", "expires later", { ttl: "10m" });
      await sdk.set("dash-binary", new Uint8Array([0, 1, 2, 250, 251, 252, 10, 13]));
    } finally {
      sdk.close();
    }
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "keys");
    await page.getByLabel("Filter").fill("dash-key-");
    expect(await page.locator("#query-kind").innerText()).to.equal("prefix");
    await search(page, "dash-key-", 500);
    expect(await page.locator("#keys-summary").innerText()).to.match(/^Keys 1–500 of 1000 for prefix “dash-key-”/);
    const first = await listedKeys(page);
    const second = await turnPage(page, "Next page");
    expect(await page.locator("#keys-summary").innerText()).to.match(/^Keys 501–1000 of 1000/);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled(), "no page after the last").to.equal(true);
    expect([...first, ...second], "two pages: every key once, in order").to.deep.equal(KEYS);
    expect(await turnPage(page, "Previous page"), "the first page again, unchanged").to.deep.equal(first);

    await page.getByLabel("Filter").fill("dash-key-0*7");
    expect(await page.locator("#query-kind").innerText()).to.equal("glob");
    await search(page, "dash-key-0*7", 50);
    expect(await page.locator("#keys-summary").innerText()).to.match(/^Keys 1–50 of 100 for glob “dash-key-0\*7”/);
    const g1 = await listedKeys(page);
    const g2 = await turnPage(page, "Next page");
    expect([...g1, ...g2]).to.deep.equal(KEYS.filter((k) => k.endsWith("7")));
    await search(page, "dash-key-01", 100);
    expect(await listedKeys(page)).to.deep.equal(KEYS.filter((k) => k.startsWith("dash-key-01")));

    // Key detail: every owner's copy, the value as text, as hex, and the TTL counting down.
    await page.getByRole("button", { name: "dash-key-0123" }).click();
    await page.locator('#replicas-table tbody tr[data-copy="live"]').nth(2).waitFor();
    expect(await page.locator("#value-preview").innerText()).to.equal("value of dash-key-0123 #123");
    await page.getByRole("button", { name: "Show hex" }).click();
    expect(await page.locator("#value-preview").innerText()).to.match(/^00000000 {2}76 61 6c 75 65 20 6f 66/);
    await search(page, "dash-binary", 50);
    await page.getByRole("button", { name: "dash-binary" }).click();
    await page.locator("#replicas-table").waitFor();
    expect(await page.locator("#value-preview").innerText()).to.equal(`00000000  ${"00 01 02 fa fb fc 0a 0d".padEnd(47)}  ........`);
    await search(page, "dash-t", 50);
    await page.getByRole("button", { name: "dash-ttl" }).click();
    const ttl1 = await page.locator("#ttl", { hasText: "Expires in" }).innerText();
    await page.waitForTimeout(2100);
    const ttl2 = await page.locator("#ttl").innerText();
    expect(ttl1).to.match(/^Expires in 9 min \d+ s/);
    expect(ttl2, "the TTL counts down").to.not.equal(ttl1);
    noProblems(watch);
    await page.close();
  });

  it("SIGSTOP a node: the partial_nodes banner appears and its copies show as unreachable", async function () {
    this.timeout(120_000);
    const n3 = cluster.node("n3");
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "keys");
    await page.getByLabel("Filter").fill("dash-key-00");
    await page.getByLabel("Page size").selectOption("50");
    try {
      // The listing asks the peers n1 sees alive: the search must reach n1 before n1's probes
      // notice the stop (at least half a probe interval). If n1 was faster, resume and try again.
      for (let attempt = 1; ; attempt++) {
        const answered = page.waitForResponse((r) => r.url().includes("/cluster/keys?"), { timeout: 30_000 });
        n3.child.kill("SIGSTOP");
        await page.getByRole("button", { name: "Search" }).click();
        // Judged by the answer, not by the page, which renders it a moment later.
        const listing = (await (await answered).json()) as { partial_nodes?: string[] };
        if ((listing.partial_nodes ?? []).length > 0) break;
        n3.child.kill("SIGCONT");
        if (attempt === 3) throw new Error("n1 noticed the stopped node before the listing three times");
        await cluster.waitAllAlive();
      }
      expect(await page.locator("#partial-nodes").innerText()).to.equal("Incomplete listing: n3 did not answer, so their keys may be missing.");
      await page.locator("#key-list li button").nth(49).waitFor();
      expect(await listedKeys(page), "the other owners still list every key").to.deep.equal(KEYS.slice(0, 50));
      await page.getByRole("button", { name: "dash-key-0007" }).click();
      const copy = page.locator('#replicas-table tr[data-owner="n3"]');
      await copy.locator(".badge", { hasText: "unreachable" }).waitFor({ timeout: 15_000 });
      expect(await copy.getAttribute("data-copy")).to.equal("unreachable");
      expect(await page.locator('#replicas-table tr[data-copy="live"]').count(), "n1 and n2 still hold it").to.equal(2);
    } finally {
      n3.child.kill("SIGCONT");
    }
    await cluster.waitAllAlive(30_000);
    noProblems(watch);
    await page.close();
  });

  it("a malformed glob shows the server's 400 message", async () => {
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "keys");
    watch.allowed.push(/status of 400/);
    await page.getByLabel("Filter").fill("dash-[");
    await page.getByRole("button", { name: "Search" }).click();
    expect(await page.locator("main .error").innerText()).to.match(/Could not load the keys: .*\(BAD_REQUEST\)/);
    noProblems(watch);
    await page.close();
  });

  it("the key detail says why there is no value preview: gone (404), or the node's error (503) instead of nothing", async () => {
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "keys");
    watch.allowed.push(/status of 503/, /status of 404/);
    // The node's own answers, as a node gives them when no owner answers or the value is gone.
    const envelope = (error: string, code: string) => JSON.stringify({ error, code });
    await page.route("**/cluster/keys/dash-key-0124/value", (route) => route.fulfill({ status: 503, contentType: "application/json", body: envelope("no owner of key dash-key-0124 answered", "UNAVAILABLE") }));
    await page.route("**/cluster/keys/dash-key-0125/value", (route) => route.fulfill({ status: 404, contentType: "application/json", body: envelope("key dash-key-0125 not found", "NOT_FOUND") }));
    await search(page, "dash-key-012", 50);
    await page.getByRole("button", { name: "dash-key-0124" }).click();
    await page.locator('#replicas-table tbody tr[data-copy="live"]').nth(2).waitFor();
    expect(await page.locator("#key-detail .error").innerText()).to.equal("Could not load the value preview: no owner of key dash-key-0124 answered (UNAVAILABLE)");
    expect(await page.locator("#value-preview").count()).to.equal(0);
    await page.getByRole("button", { name: "dash-key-0125" }).click();
    await page.locator("#no-value").waitFor();
    expect(await page.locator("#key-detail .error").count(), "a value that is gone is no error").to.equal(0);
    expect(await page.locator("#value-preview").count()).to.equal(0);
    await page.getByRole("button", { name: "dash-key-0126" }).click();
    await page.locator("#value-preview").waitFor();
    expect(await page.locator("#no-value").count()).to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("a read token sees no admin controls, and a forced admin call from the page gets 403", async () => {
    const { page, watch } = await signedInPage(browser.context, base(), READ_TOKEN, "admin");
    watch.allowed.push(/status of 403/);
    await page.waitForSelector("nav");
    expect(await page.getByRole("link", { name: "Admin" }).count()).to.equal(0);
    expect(await page.getByRole("heading", { name: "Overview" }).count(), "#/admin falls back to the overview").to.equal(1);
    expect(await page.locator("#drain, #evict, #expire, #clear-confirm").count()).to.equal(0);
    const forced = (await page.evaluate(`fetch("/clear", { method: "POST", headers: { authorization: "Bearer ${READ_TOKEN}" } }).then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); })`)) as { status: number; body: { code: string } };
    expect(forced.status).to.equal(403);
    expect(forced.body.code).to.equal("FORBIDDEN");
    noProblems(watch);
    await page.close();
  });

  it("a bad token shows an error and no data", async () => {
    const { page, watch } = await watchedPage(browser.context);
    watch.allowed.push(/status of 401/);
    await page.goto(`${base()}/dashboard/`);
    await page.getByLabel("Token", { exact: true }).fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    const error = await page.waitForSelector("#login-error");
    expect(await error.innerText()).to.match(/Sign-in failed: .*UNAUTHORIZED/);
    expect(await page.locator("nav, #members-table, .cards").count(), "no views or data").to.equal(0);
    expect(await page.evaluate("sessionStorage.length"), "the bad credential is forgotten").to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("an HTTP Basic user signs in through the form and sees the members table and that identity's controls", async () => {
    const { page, watch } = await watchedPage(browser.context);
    const sent = recordAuthorization(page, base());
    await page.goto(`${base()}/dashboard/`);
    await signInWith(page, "User and password (Basic)", async () => {
      await fillBasic(page);
      // The page is plain http: the password goes only with the user's consent.
      await page.locator("#plain-ok").check();
    });
    await page.getByRole("link", { name: "Members" }).click();
    await page.locator('#members-table tbody tr[data-state="alive"]').nth(2).waitFor();
    expect((await aliveRows(page)).sort()).to.deep.equal(["n1", "n2", "n3"]);
    expect(await page.locator(".who span").innerText()).to.equal(`Signed in as ${BASIC_USER} (read, admin)`);
    await page.getByRole("link", { name: "Admin" }).click();
    await page.locator("#drain").waitFor();
    expect(await page.locator("#drain, #evict, #expire, #clear-confirm").count(), "the admin scope's controls").to.equal(4);
    const header = `Basic ${Buffer.from(`${BASIC_USER}:${BASIC_PASSWORD}`).toString("base64")}`;
    expect(sent.map((s) => s.split(" ")[0]), "identity, stream and views were asked").to.include.members(["/me", "/cluster/events", "/stats"]);
    expect(sent.filter((s) => !s.endsWith(` ${header}`)), "every call carries the Basic credential").to.deep.equal([]);
    expect(JSON.parse((await page.evaluate(`sessionStorage.getItem("hypercache.dashboard.credential")`)) as string)).to.deep.equal({ kind: "basic", user: BASIC_USER, password: BASIC_PASSWORD, plainHttp: true });
    expect(await page.evaluate("localStorage.length"), "nothing in localStorage").to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("on a plain-http page a Basic password is not sent until the user agrees to send it unencrypted (it was sent to a node that refuses Basic without TLS)", async () => {
    const { page, watch } = await watchedPage(browser.context);
    const sent = recordAuthorization(page, base());
    await page.goto(`${base()}/dashboard/`);
    await signInWith(page, "User and password (Basic)", () => fillBasic(page));
    expect(await page.locator("#plain-note").innerText()).to.match(/plain HTTP/);
    expect(await page.locator("#plain-ok:invalid").count(), "the form asks for the consent").to.equal(1);
    await page.waitForTimeout(300);
    expect(sent.filter((s) => s.includes("Basic")), "no request carried the password").to.deep.equal([]);
    expect(await page.evaluate("sessionStorage.length"), "nothing kept").to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("no credential, on a node that allows anonymous callers: the anonymous identity's data and controls", async () => {
    const origin = cluster.node(ANONYMOUS_NODE).mgmt;
    const { page, watch } = await watchedPage(browser.context);
    const sent = recordAuthorization(page, origin);
    await page.goto(`${origin}/dashboard/`);
    await signInWith(page, "None (anonymous or client certificate)");
    await page.getByRole("link", { name: "Members" }).click();
    await page.locator('#members-table tbody tr[data-state="alive"]').nth(2).waitFor();
    expect((await aliveRows(page)).sort()).to.deep.equal(["n1", "n2", "n3"]);
    expect(await page.locator(".who span").innerText(), "anonymous holds every scope").to.equal("Signed in as anonymous (read, write, admin)");
    expect(await page.getByRole("link", { name: "Admin" }).count()).to.equal(1);
    await page.getByRole("link", { name: "Ring" }).click();
    await page.locator("#ring-table tbody tr").nth(2).waitFor();
    expect(sent.map((s) => s.split(" ")[0])).to.include.members(["/me", "/cluster/events", "/cluster/ring"]);
    expect(sent.filter((s) => !s.endsWith(" none")), "no Authorization header is sent").to.deep.equal([]);
    noProblems(watch);
    await page.close();
  });

  it("no credential, on a node without anonymous access: an error and no data", async () => {
    const { page, watch } = await watchedPage(browser.context);
    watch.allowed.push(/status of 401/);
    const sent = recordAuthorization(page, base());
    await page.goto(`${base()}/dashboard/`);
    await signInWith(page, "None (anonymous or client certificate)");
    const error = await page.waitForSelector("#login-error");
    expect(await error.innerText()).to.match(/Sign-in failed: .*UNAUTHORIZED/);
    expect(await page.locator("nav, #members-table, .cards").count(), "no views or data").to.equal(0);
    expect(sent, "only the identity was asked, without a credential").to.deep.equal(["/me none"]);
    expect(await page.evaluate("sessionStorage.length"), "the refused sign-in is forgotten").to.equal(0);
    noProblems(watch);
    await page.close();
  });

  it("every view, at 1280x800 and 390x844: fits the width, has no serious or critical axe violation, and is photographed", async function () {
    this.timeout(180_000);
    const { page, watch } = await signedInPage(browser.context, base(), ADMIN_TOKEN, "overview");
    await page.locator("nav").waitFor();
    // Keyboard: the first view is reached with Tab and Enter.
    await page.getByRole("link", { name: "Members" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Members" }).waitFor();
    for (const view of VIEWS) {
      await page.setViewportSize(DESKTOP);
      await page.getByRole("link", { name: view.link, exact: true }).click();
      await view.ready(page);
      const axe = await new AxeBuilder({ page }).analyze();
      const bad = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
      expect(bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), `axe on ${view.id}`).to.deep.equal([]);
      for (const [name, size] of [["1280x800", DESKTOP], ["390x844", PHONE]] as const) {
        await page.setViewportSize(size);
        await page.waitForTimeout(100);
        expect(await fitsWidth(page), `${view.id} at ${name} needs horizontal scrolling`).to.equal(true);
        const file = join(ARTIFACTS, `${view.id}-${name}.png`);
        await page.screenshot({ path: file, fullPage: true });
        shots.push(file.slice(ROOT.length));
      }
    }
    // prefers-color-scheme: dark turns the page dark.
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.getByRole("link", { name: "Overview" }).click();
    expect(await page.evaluate("getComputedStyle(document.body).backgroundColor")).to.equal("rgb(13, 17, 23)");
    const dark = join(ARTIFACTS, "overview-dark-1280x800.png");
    await page.screenshot({ path: dark });
    shots.push(dark.slice(ROOT.length));
    noProblems(watch);
    await page.close();
  });

  it("admin controls: eviction and expiration passes, Clear this node only after the typed node id, and a drain that shows draining while /health answers 503", async () => {
    const n2 = cluster.node("n2");
    const { page, watch } = await signedInPage(browser.context, n2.mgmt, ADMIN_TOKEN, "admin");
    const result = page.locator("#admin-result");
    await page.getByRole("button", { name: "Run eviction pass" }).click();
    await page.locator("#admin-result", { hasText: "Eviction pass:" }).waitFor();
    expect(await result.innerText()).to.match(/^Eviction pass: \d+ items evicted$/);
    await page.getByRole("button", { name: "Trigger expiration" }).click();
    await page.locator("#admin-result", { hasText: "Expiration pass:" }).waitFor();
    expect(await result.innerText()).to.match(/^Expiration pass: \d+ items expired$/);
    const clear = page.getByRole("button", { name: "Clear this node" });
    expect(await clear.isDisabled(), "no confirmation typed").to.equal(true);
    await page.getByLabel("Node id to confirm").fill("n1");
    expect(await clear.isDisabled(), "another node's id").to.equal(true);
    await page.getByLabel("Node id to confirm").fill("n2");
    await clear.click();
    await page.locator("#admin-result", { hasText: "Clear this node:" }).waitFor();
    const cleared = /^Clear this node: (\d+) items removed from n2$/.exec(await result.innerText());
    expect(Number(cleared?.[1]), "n2 held a copy of every key (replication 3 on 3 nodes)").to.be.at.least(1000);
    expect((await cluster.mgmtJson<{ items: number }>("n2", "/stats")).items, "n2 is empty").to.be.lessThan(10);
    expect((await cluster.mgmtJson<{ items: number }>("n1", "/stats")).items, "n1 keeps its copies").to.be.greaterThan(1000);

    await page.getByRole("button", { name: "Drain this node…" }).click();
    await page.getByRole("button", { name: "Confirm: drain n2" }).click();
    await page.locator("#admin-result", { hasText: "Drain:" }).waitFor();
    expect(await page.locator("#admin-result").innerText()).to.equal("Drain: the node is draining");
    await page.getByRole("link", { name: "Members" }).click();
    await page.locator('#members-table tr[data-member="n2"] .state-draining').waitFor({ timeout: 10_000 });
    await page.getByRole("link", { name: "Overview" }).click();
    await pollPage(page, `document.querySelector("#node-state")?.textContent === "draining"`);
    const health = await fetch(`${n2.mgmt}/health`);
    expect(health.status).to.equal(503);
    expect(await health.json()).to.include({ status: "draining", draining: true });
    noProblems(watch);
    await page.close();
  });
});
