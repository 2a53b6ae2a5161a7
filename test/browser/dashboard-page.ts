// Page-side helpers of the dashboard tests: a signed-in page (credential put in sessionStorage
// before the first script runs, as the login form would), and recorders installed before load
// that note when rows appear and how long each members frame took to reach the DOM. Page scripts
// are plain strings: tsx compiles functions with a `__name` helper the page does not have.
import type { BrowserContext, Page } from "playwright-core";
import { watchedPage, type PageProblems } from "./browser.js";

export const CREDENTIAL_KEY = "hypercache.dashboard.credential";

/** User Timing measures of members renders (window.__renders), and when three alive rows first showed (window.__aliveRowsAt). */
export const RECORDERS = `
  window.__renders = [];
  new PerformanceObserver(function (list) {
    list.getEntries().forEach(function (e) { if (e.name === "hc:members-render") window.__renders.push(e.duration); });
  }).observe({ entryTypes: ["measure"] });
  new MutationObserver(function () {
    if (window.__aliveRowsAt === undefined && document.querySelectorAll('#members-table tbody tr[data-state="alive"]').length >= 3) window.__aliveRowsAt = performance.now();
  }).observe(document, { subtree: true, childList: true, attributes: true });
`;

export function credentialScript(token: string): string {
  return `sessionStorage.setItem(${JSON.stringify(CREDENTIAL_KEY)}, ${JSON.stringify(JSON.stringify({ kind: "bearer", token }))});`;
}

export async function signedInPage(context: BrowserContext, base: string, token: string, view: string): Promise<{ page: Page; watch: PageProblems }> {
  const { page, watch } = await watchedPage(context);
  await page.addInitScript({ content: RECORDERS });
  await page.addInitScript({ content: credentialScript(token) });
  await page.goto(`${base}/dashboard/#/${view}`);
  return { page, watch };
}

/** States a member's row has shown, in order, recorded from now on (window.__states). */
export async function recordRowStates(page: Page, id: string): Promise<void> {
  await page.evaluate(`(function () {
    var member = ${JSON.stringify(id)};
    window.__states = [];
    var note = function () {
      var row = document.querySelector('#members-table tr[data-member="' + member + '"]');
      var s = row ? row.getAttribute("data-state") : "gone";
      if (window.__states[window.__states.length - 1] !== s) window.__states.push(s);
    };
    note();
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
  })()`);
}

export const rowStates = (page: Page) => page.evaluate("window.__states") as Promise<string[]>;
export const renderTimes = (page: Page) => page.evaluate("window.__renders") as Promise<number[]>;

/**
 * Polls a page expression until it is truthy (page.waitForFunction compiles its predicate with
 * eval, which the dashboard's CSP refuses); returns its value.
 */
export async function pollPage<T>(page: Page, expression: string, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = (await page.evaluate(expression)) as T;
    if (v) return v;
    if (Date.now() > until) throw new Error(`${expression} stayed falsy for ${timeoutMs} ms`);
    await page.waitForTimeout(25);
  }
}
