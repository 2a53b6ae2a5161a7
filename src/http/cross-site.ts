// Refuses a state-changing request a browser sent on behalf of another site (cross-site request
// forgery). A page anywhere could submit a form to POST /clear or /dist/drain of a node whose
// caller needs no credential (no policy, or allow_anonymous), and the browser sent it without
// asking: a review emptied and drained a node from a page on another origin. Browsers name the
// page's origin on every POST, PUT and DELETE (Origin) and say where the request comes from
// (Sec-Fetch-Site); programs (the CLI, the SDK in Node, curl) send neither and are not
// affected. Safe methods (GET, HEAD, OPTIONS) pass: they change nothing.
import type { IncomingHttpHeaders } from "node:http";
import { CacheError } from "../core/errors.js";

/** Throws FORBIDDEN when `method` changes state and the browser says another site sent it. */
export function checkSameSite(method: string, headers: IncomingHttpHeaders): void {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return;
  checkNotCrossSite(headers);
}

/**
 * Throws FORBIDDEN when the browser says another site sent the request, whatever its method:
 * for a read that changes state (a lease read takes the key's lease; an <img> on any page held
 * hot keys' leases for 60 s, a review found).
 */
export function checkNotCrossSite(headers: IncomingHttpHeaders): void {
  const site = headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") throw crossSite(`Sec-Fetch-Site: ${site.slice(0, 32)}`);
  const origin = headers.origin;
  if (origin !== undefined && !sameHost(origin, headers.host)) throw crossSite(`Origin: ${origin.slice(0, 200)}`);
}

/** True when `origin` (scheme://host[:port]) names the host the request was sent to. */
function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined || !(origin.startsWith("http://") || origin.startsWith("https://"))) return false;
  try {
    return new URL(origin).host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

/** `details.reason` of every refusal of a request a browser sent (here and on the peer port). */
export const CROSS_SITE_REASON = "cross_site_request";

function crossSite(evidence: string): CacheError {
  return new CacheError("FORBIDDEN", `a browser sent this request from another site (${evidence}); state-changing requests are taken from the node's own pages and from programs only`, {
    reason: CROSS_SITE_REASON,
  });
}
