// Global options (flags before or after the command, and their environment variables) and the
// client built from them. Every listed endpoint is tried in order before discovery runs, so a
// dead first endpoint costs one attempt; discovery runs only after all of them failed, or to find
// management listeners for `members` and `watch`.
import { readFileSync } from "node:fs";
import { HypercacheClient, parseDurationMs, type ClientEvent, type NodeClientOptions } from "@hypercache/client/node";
import { UsageError } from "./exit-codes.js";
import type { Io } from "./io.js";
import type { Output } from "./output.js";

/** Client listener used when neither --endpoints nor HYPERCACHE_ENDPOINTS is given. */
export const DEFAULT_ENDPOINT = "http://127.0.0.1:8080";

/** Longest --timeout (ms): 2^31 - 1, the longest delay Node's timers take. */
export const TIMEOUT_MS_MAX = 2 ** 31 - 1;

export interface GlobalOptions {
  endpoints?: string;
  mgmtEndpoints?: string;
  token?: string;
  user?: string;
  insecureBasic?: boolean;
  insecureOidc?: boolean;
  trustDiscovered?: boolean;
  oidcIssuer?: string;
  clientId?: string;
  ca?: string;
  cert?: string;
  key?: string;
  timeout?: string;
  json?: boolean;
  verbose?: boolean;
}

function list(text: string | undefined): string[] | undefined {
  const items = text?.split(",").map((s) => s.trim()).filter((s) => s !== "");
  return items && items.length > 0 ? items : undefined;
}

function readPem(flag: string, path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UsageError(`${flag} ${path}: ${(err as Error).message}`);
  }
}

/** The credential options: a token, a Basic user (password never from argv), or OIDC client credentials. */
async function credentials(g: GlobalOptions, io: Io): Promise<Partial<NodeClientOptions>> {
  const token = g.token ?? io.env.HYPERCACHE_TOKEN;
  const user = g.user ?? io.env.HYPERCACHE_USER;
  const issuer = g.oidcIssuer ?? io.env.HYPERCACHE_OIDC_ISSUER;
  const given = [token !== undefined && token !== "", user !== undefined, issuer !== undefined].filter(Boolean).length;
  if (given > 1) throw new UsageError("give one of --token, --user or --oidc-issuer");
  if (token) return { token };
  if (user !== undefined) {
    let password = io.env.HYPERCACHE_PASSWORD;
    if (password === undefined) {
      if (!io.stdin.isTTY) throw new UsageError("--user needs the password in HYPERCACHE_PASSWORD (no terminal to ask on)");
      password = await io.promptPassword(`password for ${user}: `);
    }
    return { basic: { username: user, password }, allowInsecureBasic: g.insecureBasic === true };
  }
  if (issuer !== undefined) {
    // The client secret goes to the issuer's token endpoint: never over plain http unless asked,
    // as Basic needs --insecure-basic (an https issuer's token endpoint must be https: the SDK).
    if (/^http:/i.test(issuer.trim()) && g.insecureOidc !== true) {
      throw new UsageError(`--oidc-issuer ${issuer}: refusing to send the client secret over plain http: use an https issuer, or --insecure-oidc`);
    }
    const clientId = g.clientId ?? io.env.HYPERCACHE_CLIENT_ID;
    const clientSecret = io.env.HYPERCACHE_CLIENT_SECRET;
    if (!clientId || clientSecret === undefined) throw new UsageError("--oidc-issuer needs --client-id (or HYPERCACHE_CLIENT_ID) and HYPERCACHE_CLIENT_SECRET");
    return { oidc: { issuer, clientId, clientSecret, ...(io.env.HYPERCACHE_OIDC_SCOPE ? { scope: io.env.HYPERCACHE_OIDC_SCOPE } : {}) } };
  }
  return {};
}

function describeEvent(e: ClientEvent): string {
  if (e.type === "failover") {
    const why = "status" in e.error ? `${e.error.status} ${e.error.code}` : e.error.message;
    return `hypercache: failover: ${e.endpoint} failed (${why})${e.next ? `, trying ${e.next}` : ""}`;
  }
  if (e.type === "discovery") return `hypercache: discovery: ${e.endpoints.join(", ")}${e.changed ? " (changed)" : ""}`;
  if (e.type === "fill-failed") return `hypercache: loaded ${JSON.stringify(e.key)} but could not store it: ${e.error.message}`;
  return `hypercache: discovery failed: ${e.error.message}`;
}

export async function createClient(g: GlobalOptions, io: Io, out: Output): Promise<HypercacheClient> {
  const endpoints = list(g.endpoints ?? io.env.HYPERCACHE_ENDPOINTS) ?? [DEFAULT_ENDPOINT];
  const managementEndpoints = list(g.mgmtEndpoints ?? io.env.HYPERCACHE_MGMT_ENDPOINTS);
  let timeoutMs: number | undefined;
  if (g.timeout !== undefined) {
    timeoutMs = parseDurationMs(g.timeout);
    if (!timeoutMs) throw new UsageError(`--timeout: expected a duration such as 5s or 500ms, got ${JSON.stringify(g.timeout)}`);
    // Node clamps a longer timer to 1 ms, which would fail every attempt at once.
    if (timeoutMs > TIMEOUT_MS_MAX) throw new UsageError(`--timeout: at most ${TIMEOUT_MS_MAX} ms (2^31 - 1, about 596 h: the longest timer Node keeps), got ${JSON.stringify(g.timeout)}`);
  }
  const ca = readPem("--ca", g.ca);
  const cert = readPem("--cert", g.cert);
  const key = readPem("--key", g.key);
  if ((cert === undefined) !== (key === undefined)) throw new UsageError("--cert and --key go together");
  return new HypercacheClient({
    endpoints,
    ...(managementEndpoints ? { managementEndpoints } : {}),
    ...(await credentials(g, io)),
    ...(timeoutMs ? { timeoutMs } : {}),
    tls: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
    randomStart: false,
    ...(g.trustDiscovered ? { trustDiscoveredEndpoints: true } : {}),
    discovery: { atStart: false, intervalMs: 0 },
    onEvent: g.verbose ? (e) => out.note(describeEvent(e)) : undefined,
  });
}
