// Advertised base URLs (SERVICE_API_ADVERTISE_URL, SERVICE_MGMT_ADVERTISE_URL): what clients are
// told to dial, set by the operator and carried in gossip. One check for both places.

/** Longest base URL accepted, in characters (also the cap on gossiped ones). */
export const BASE_URL_CHARS_MAX = 2048;

/**
 * The base URL in one spelling (no trailing slash), or undefined unless it is an absolute http(s)
 * URL with a host, no credentials, no query and no fragment.
 */
export function parseBaseUrl(text: string): string | undefined {
  if (text.length === 0 || text.length > BASE_URL_CHARS_MAX) return undefined;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "" || u.username !== "" || u.password !== "" || u.search !== "" || u.hash !== "") return undefined;
  return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
}

/** The default advertised URL of a listener: its scheme, the given host, the listener's port. */
export function defaultBaseUrl(tls: boolean, host: string, port: number): string {
  const h = host.includes(":") ? `[${host}]` : host;
  return `${tls ? "https" : "http"}://${h}:${port}`;
}
