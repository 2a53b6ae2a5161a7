// The endpoints a client may send a request to, and the order it tries them in. A request goes to
// the current endpoint while it works; a failed endpoint cools down (1 s, doubling up to 30 s) and
// is tried only after every endpoint that is not cooling down. Discovery replaces the discovered
// endpoints; seeds stay as a fallback, and an empty answer changes nothing.
import type { Clock, Random } from "./runtime.js";
import { ClientConfigError } from "./errors.js";

/** First cooldown of a failed endpoint (ms); it doubles with each further consecutive failure. */
export const COOLDOWN_BASE_MS = 1_000;
/** Longest cooldown (ms). */
export const COOLDOWN_MAX_MS = 30_000;
/** Discovered endpoints one pool holds at most (the server's MEMBERS_MAX); seeds come on top. */
export const POOL_ENDPOINTS_MAX = 4096;

/** Cooldown after `consecutiveFailures` failures in a row (at least one). */
export function cooldownMs(consecutiveFailures: number, baseMs = COOLDOWN_BASE_MS, maxMs = COOLDOWN_MAX_MS): number {
  const exponent = Math.min(Math.max(consecutiveFailures, 1) - 1, 30);
  return Math.min(maxMs, baseMs * 2 ** exponent);
}

/** `url` with any user and password replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1***@");
}

/** A base URL in one spelling: no trailing slash, lower-case scheme and host (URL parsing). */
export function normalizeBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ClientConfigError(`endpoint ${redactUrl(url)}: not a URL`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ClientConfigError(`endpoint ${redactUrl(url)}: only http: and https: URLs are supported`);
  if (u.username !== "" || u.password !== "") throw new ClientConfigError(`endpoint ${redactUrl(url)}: a base URL carries no user or password (pass them as basic credentials)`);
  if (u.search !== "" || u.hash !== "") throw new ClientConfigError(`endpoint ${redactUrl(url)}: a base URL has no query or fragment`);
  return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
}

/** An endpoint learnt from the cluster. */
export interface DiscoveredEndpoint {
  readonly url: string;
  readonly node: string;
  /** Membership state as the answering node saw it; suspect endpoints are tried after alive ones. */
  readonly state: string;
}

/** What the pool knows of one endpoint (a copy; changing it changes nothing). */
export interface EndpointStatus {
  readonly url: string;
  readonly node: string | undefined;
  readonly seed: boolean;
  readonly discovered: boolean;
  readonly consecutiveFailures: number;
  /** Milliseconds of cooldown left; 0 when the endpoint is usable. */
  readonly coolingForMs: number;
}

interface Entry {
  readonly url: string;
  node: string | undefined;
  seed: boolean;
  discovered: boolean;
  /** 0 discovered alive, 1 discovered otherwise, 2 seed only. */
  rank: number;
  failures: number;
  coolUntilMs: number;
}

export interface EndpointPoolOptions {
  readonly clock: Clock;
  readonly random: Random;
  /** Start on a random endpoint (default) or on the first seed. */
  readonly randomStart?: boolean;
  readonly cooldownBaseMs?: number;
  readonly cooldownMaxMs?: number;
  /** Endpoints refused by this predicate are never adopted from discovery (Basic over http:). */
  readonly accept?: (url: string) => boolean;
}

export class EndpointPool {
  private entries: Entry[] = [];
  private current: string | undefined;

  constructor(
    seeds: readonly string[],
    private readonly opts: EndpointPoolOptions,
  ) {
    for (const s of seeds) {
      const url = normalizeBaseUrl(s);
      if (!this.entries.some((e) => e.url === url)) this.entries.push({ url, node: undefined, seed: true, discovered: false, rank: 2, failures: 0, coolUntilMs: 0 });
    }
    this.pickStart();
  }

  /** Every known endpoint, in the order the pool keeps them. */
  urls(): string[] {
    return this.entries.map((e) => e.url);
  }

  size(): number {
    return this.entries.length;
  }

  status(): EndpointStatus[] {
    const now = this.opts.clock.nowMs();
    return this.entries.map((e) => ({ url: e.url, node: e.node, seed: e.seed, discovered: e.discovered, consecutiveFailures: e.failures, coolingForMs: Math.max(0, e.coolUntilMs - now) }));
  }

  /** The current endpoint: the last one that answered, or the starting one. */
  currentUrl(): string | undefined {
    return this.current;
  }

  /**
   * The current endpoint when it is usable: the first to try, without computing a whole order.
   * An endpoint without failures since it last answered is not cooling: no clock to read.
   */
  preferred(): string | undefined {
    const e = this.current === undefined ? undefined : this.find(this.current);
    return e && (e.failures === 0 || e.coolUntilMs <= this.opts.clock.nowMs()) ? e.url : undefined;
  }

  /**
   * The order to try endpoints in for one request: the current endpoint, then the others that are
   * not cooling down (alive discovered first, seeds last, each group from the current position
   * on), then the cooling ones, soonest usable first. Every endpoint appears once.
   */
  order(): string[] {
    const now = this.opts.clock.nowMs();
    const n = this.entries.length;
    const start = Math.max(0, this.entries.findIndex((e) => e.url === this.current));
    const rotated: Entry[] = [];
    for (let i = 0; i < n; i++) rotated.push(this.entries[(start + i) % n] as Entry);
    const usable = rotated.filter((e) => e.coolUntilMs <= now);
    const cooling = rotated.filter((e) => e.coolUntilMs > now).sort((a, b) => a.coolUntilMs - b.coolUntilMs);
    const first = usable[0]?.url === this.current ? usable.splice(0, 1) : [];
    usable.sort((a, b) => a.rank - b.rank); // stable: keeps the rotation within a rank
    return [...first, ...usable, ...cooling].map((e) => e.url);
  }

  /** The endpoint answered (any status below 500): it becomes the current one. */
  succeeded(url: string): void {
    const e = this.find(url);
    if (!e) return;
    e.failures = 0;
    e.coolUntilMs = 0;
    this.current = url;
  }

  /** The endpoint failed (transport error, timeout or 5xx): it cools down. */
  failed(url: string): void {
    const e = this.find(url);
    if (!e) return;
    e.failures++;
    e.coolUntilMs = this.opts.clock.nowMs() + cooldownMs(e.failures, this.opts.cooldownBaseMs, this.opts.cooldownMaxMs);
  }

  /**
   * Replaces the discovered endpoints with `found`, the first {@link POOL_ENDPOINTS_MAX} of them
   * that are accepted. An empty list (after filtering) changes nothing and returns false. Seeds
   * stay; known endpoints keep their failure state.
   */
  adopt(found: readonly DiscoveredEndpoint[]): boolean {
    const accept = this.opts.accept ?? (() => true);
    const known = new Map(this.entries.map((e) => [e.url, e]));
    const taken = new Set<string>();
    const next: Entry[] = [];
    for (const f of found) {
      if (next.length >= POOL_ENDPOINTS_MAX) break;
      let url: string;
      try {
        url = normalizeBaseUrl(f.url);
      } catch {
        continue;
      }
      if (taken.has(url) || !accept(url)) continue;
      taken.add(url);
      const old = known.get(url);
      next.push({ url, node: f.node, seed: old?.seed ?? false, discovered: true, rank: f.state === "alive" ? 0 : 1, failures: old?.failures ?? 0, coolUntilMs: old?.coolUntilMs ?? 0 });
    }
    if (next.length === 0) return false;
    for (const e of this.entries) {
      if (e.seed && !taken.has(e.url)) next.push({ ...e, discovered: false, node: undefined, rank: 2 });
    }
    this.entries = next;
    if (!this.find(this.current ?? "")) this.pickStart();
    return true;
  }

  private find(url: string): Entry | undefined {
    // A loop rather than Array.find: this runs twice per request (preferred, succeeded).
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i] as Entry;
      if (e.url === url) return e;
    }
    return undefined;
  }

  private pickStart(): void {
    const best = Math.min(...this.entries.map((e) => e.rank));
    const tier = this.entries.filter((e) => e.rank === best);
    const pick = this.opts.randomStart === false ? tier[0] : tier[Math.floor(this.opts.random.next() * tier.length)];
    this.current = pick?.url;
  }
}
