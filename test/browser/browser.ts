// Chromium for the dashboard tests: the Debian package's /usr/bin/chromium (installed by .ci/run
// with apt-get; no browser is ever downloaded), launched by playwright-core with a fresh profile
// folder and the flags that keep it off the network. Each page records console errors, page
// errors and failed requests so a test can fail on any of them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/** The flags the issue fixes; without the background-networking ones refused connections flood Chromium. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Starts Chromium with a new profile folder (removed on close). */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "hypercache-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: DESKTOP,
    // Playwright's own defaults that would add flags of its choosing stay off where possible.
    chromiumSandbox: false,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What went wrong on a page: console errors, uncaught exceptions, failed requests. */
export interface PageProblems {
  readonly problems: string[];
  /** Console errors matching one of these are expected (a deliberate 401 or 403). */
  readonly allowed: RegExp[];
}

/** Opens a page that records its problems. */
export async function watchedPage(context: BrowserContext): Promise<{ page: Page; watch: PageProblems }> {
  const page = await context.newPage();
  const watch: PageProblems = { problems: [], allowed: [] };
  const allowed = (text: string) => watch.allowed.some((re) => re.test(text));
  page.on("console", (m) => {
    if (m.type() === "error" && !allowed(m.text())) watch.problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (err) => watch.problems.push(`page error: ${err.message}`));
  page.on("requestfailed", (r) => {
    const failure = r.failure()?.errorText ?? "";
    // A stream or a fetch the page itself cancelled (leaving a view, signing out) is not a failure.
    if (failure === "net::ERR_ABORTED") return;
    watch.problems.push(`request failed: ${r.method()} ${r.url()} ${failure}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && !allowed(`status of ${r.status()} ${r.url()}`)) watch.problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return { page, watch };
}
