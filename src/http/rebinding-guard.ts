// DNS rebinding. A page on attacker.example can make its own name resolve to 127.0.0.1 (or to a
// node's address on the visitor's network) after it loaded: from then on the browser treats the
// node as the page's own origin, so the cross-site check (cross-site.ts) sees a same-origin
// request, and a node whose callers need no credential (no policy, or allow_anonymous) hands the
// page every value and takes its writes. What the attacker cannot change is the name the browser
// sends in Host: it is the attacker's. So a request a browser sent that holds no credential is
// served only when its Host is a name this node answers to: an IP address, localhost, the hosts of
// its own addresses and advertised URLs, and SERVICE_ALLOWED_HOSTS. Programs (the CLI, the SDK in
// Node, curl, probes) and callers with a credential are not affected: a rebound page cannot send
// the credentials a browser keeps for the node's real origin.
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Authenticator } from "../auth/index.js";
import type { Identity } from "../auth/identity.js";
import type { Config } from "../config/index.js";
import { CacheError } from "../core/errors.js";

/** `details.reason` of a refused request sent to a name the node does not answer to. */
export const HOST_NOT_ALLOWED_REASON = "host_not_allowed";

/** The names a node answers to without a credential. */
export class HostAllowList {
  private readonly exact = new Set<string>(["localhost"]);
  /** Suffixes, each with its leading dot (".localhost" always). */
  private readonly suffixes: string[] = [".localhost"];
  private readonly any: boolean;

  /**
   * `names`: host names (`cache.example.com`), suffixes that also take every subdomain
   * (`.example.com`), or `*` (any name: the check is off).
   */
  constructor(names: readonly string[]) {
    this.any = names.includes("*");
    for (const raw of names) {
      const name = normalize(raw);
      if (name === "" || name === "*") continue;
      if (name.startsWith(".")) {
        this.suffixes.push(name);
        this.exact.add(name.slice(1));
      } else {
        this.exact.add(name);
      }
    }
  }

  /** True when a request whose Host header is `host` may be served without a credential. */
  allows(host: string | undefined): boolean {
    if (this.any || host === undefined) return true;
    const name = hostName(host);
    if (name === undefined) return false;
    if (isIP(name) !== 0 || this.exact.has(name)) return true;
    return this.suffixes.some((s) => name.endsWith(s));
  }
}

/** The allow list of a node: SERVICE_ALLOWED_HOSTS and the hosts of its listener addresses and advertised URLs. */
export function hostAllowListOf(config: Pick<Config, "allowedHosts" | "apiAddr" | "mgmtAddr" | "distAddr" | "apiAdvertiseUrl" | "mgmtAdvertiseUrl">): HostAllowList {
  const own = [config.apiAddr.host, config.mgmtAddr.host, config.distAddr.host];
  for (const url of [config.apiAdvertiseUrl, config.mgmtAdvertiseUrl]) if (url !== undefined) own.push(hostName(new URL(url).host) ?? "");
  // An address or advertised URL naming an unspecified host (0.0.0.0, ::) is an IP address anyway.
  return new HostAllowList([...config.allowedHosts, ...own.filter((h) => h !== "" && !h.includes(":"))]);
}

/** The host part of a Host header, lower case, without a trailing dot or the brackets of an IPv6 address; undefined when malformed. */
function hostName(host: string): string | undefined {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end < 0 ? undefined : host.slice(1, end);
  }
  const colon = host.lastIndexOf(":");
  const name = colon < 0 ? host : host.slice(0, colon);
  return normalize(name);
}

function normalize(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/**
 * True when a browser sent the request: it says where from (Sec-Fetch-Site, Origin) or names
 * itself (every browser's User-Agent starts with Mozilla/). Not Sec-Fetch-Mode alone: Node's own
 * fetch (undici) sends `sec-fetch-mode: cors` on every request, and a program calling a node by a
 * Service name was refused (a review).
 */
function fromBrowser(headers: IncomingHttpHeaders): boolean {
  return headers["sec-fetch-site"] !== undefined || headers.origin !== undefined || (headers["user-agent"]?.startsWith("Mozilla/") ?? false);
}

/** Throws FORBIDDEN when a browser sent a request holding no credential to a name `hosts` does not allow. */
export function checkAnonymousHost(identity: Identity, headers: IncomingHttpHeaders, hosts: HostAllowList): void {
  if (identity.kind !== "anonymous" || !fromBrowser(headers) || hosts.allows(headers.host)) return;
  const host = String(headers.host).slice(0, 256);
  throw new CacheError(
    "FORBIDDEN",
    `a browser sent this request without a credential to the name ${host}, which this node does not answer to (a DNS rebinding page would look like this); use the node's address or localhost, or add the name to SERVICE_ALLOWED_HOSTS`,
    { reason: HOST_NOT_ALLOWED_REASON, host },
  );
}

/** `auth` whose anonymous callers are checked by checkAnonymousHost; everything else as `auth` has it. */
export function rebindingGuard(auth: Authenticator, hosts: HostAllowList): Authenticator {
  const check = (identity: Identity, req: IncomingMessage): Identity => {
    checkAnonymousHost(identity, req.headers, hosts);
    return identity;
  };
  return {
    enabled: auth.enabled,
    methods: auth.methods,
    challenge: auth.challenge,
    close: () => auth.close(),
    authenticate(req) {
      const r = auth.authenticate(req);
      return r instanceof Promise ? r.then((identity) => check(identity, req)) : check(r, req);
    },
  };
}
