// getOrLoad: a read that loads a missing value once for all callers, with the server's stampede
// leases (GET ?lease=&wait=, then a PUT carrying X-Cache-Lease). A hit is the value. The first
// miss gets the lease: this caller runs `load` and fills the key with the lease's token (a write
// or delete of the key meanwhile makes the fill 409, and nothing stale is stored). Other callers'
// misses wait on the server up to `wait` for the fill; past it (LEASE_HELD) they wait Retry-After
// here and read again, at most LEASE_ROUNDS_MAX times, then load themselves. Without a lease (the
// primary is unreachable or at its lease cap) the value is loaded and stored only if the key is
// still absent (If-None-Match: *), so it never replaces a newer write. A failed store does not
// fail the call: the caller has its value, and the client reports it (a "fill-failed" event).
import { ttlToMs, type Ttl } from "./duration.js";
import { ConflictError, HypercacheError, LeaseHeldError, PreconditionFailedError, TransportError, AllEndpointsFailedError } from "./errors.js";
import type { ByteRoutes } from "./byte-routes.js";
import type { ClientEvent } from "./failover-transport.js";
import type { Consistency } from "./options.js";
import type { Timers } from "./runtime.js";
import { answerError, isMissingKey, valueBody, valueOf, type CacheValue } from "./values.js";

/** Lease reads a miss makes while another caller holds the lease before it loads by itself. */
export const LEASE_ROUNDS_MAX = 3;
/** Default lease: how long the loading caller has to fill the key (ms). */
export const LEASE_DEFAULT_MS = 10_000;
/** Default wait of a miss on the server for another caller's fill (ms). */
export const LEASE_WAIT_DEFAULT_MS = 2_000;
/** Shortest pause before reading again after LEASE_HELD (ms). */
const LEASE_RETRY_MIN_MS = 100;

export interface LoadOptions {
  /** How long the lease lasts if this call gets it, the time `load` may take: 100ms to 60s (default 10s). */
  readonly lease?: Ttl;
  /** How long a miss waits on the server for another caller's fill: 0 to 10s (default 2s), below the client's `timeoutMs`. */
  readonly wait?: Ttl | 0;
  /** Time to live of the value this call stores; omitted, it never expires. */
  readonly ttl?: Ttl;
  /** Read consistency of the lease read (default the server's). */
  readonly consistency?: Consistency;
  readonly signal?: AbortSignal;
}

/** Loads the value of a missing key (the caller's database, say); its result is stored and returned. */
export type Loader = (key: string) => CacheValue | Promise<CacheValue>;

export interface LeaseLoadsDeps {
  readonly bytes: ByteRoutes;
  readonly timers: Timers;
  /** The client's time limit of one attempt (ms; 0: none): a lease read's wait must end before it. */
  readonly attemptTimeoutMs: number;
  readonly onEvent?: ((e: ClientEvent) => void) | undefined;
}

export class LeaseLoads {
  constructor(private readonly deps: LeaseLoadsDeps) {}

  async getOrLoad(key: string, load: Loader, o: LoadOptions): Promise<Uint8Array> {
    const leaseMs = o.lease === undefined ? LEASE_DEFAULT_MS : ttlToMs(o.lease);
    const waitMs = o.wait === undefined ? LEASE_WAIT_DEFAULT_MS : o.wait === 0 ? 0 : ttlToMs(o.wait);
    if (leaseMs < 100 || leaseMs > 60_000) throw new TypeError(`invalid lease ${JSON.stringify(o.lease)}: from 100ms to 60s`);
    if (waitMs > 10_000) throw new TypeError(`invalid wait ${JSON.stringify(o.wait)}: from 0s to 10s`);
    const timeout = this.deps.attemptTimeoutMs;
    if (timeout > 0 && waitMs >= timeout) throw new TypeError(`wait must be below timeoutMs (${timeout} ms)`);
    const query = { lease: `${leaseMs}ms`, wait: `${waitMs}ms`, consistency: o.consistency };
    for (let round = 0; ; round++) {
      const { response } = await this.deps.bytes.getWith(key, query, o.signal);
      if (response.status === 200) return valueOf(response);
      const err = answerError(response);
      if (err instanceof LeaseHeldError) {
        if (round >= LEASE_ROUNDS_MAX) return this.loadAndStore(key, load, o, undefined);
        const retryAfterS = Number(response.headers.get("retry-after"));
        await pause(this.deps.timers, Math.min(leaseMs, Math.max(LEASE_RETRY_MIN_MS, Number.isFinite(retryAfterS) ? retryAfterS * 1000 : 0)), o.signal);
        continue;
      }
      if (!isMissingKey(err, response)) throw err;
      return this.loadAndStore(key, load, o, response.headers.get("x-cache-lease") ?? undefined);
    }
  }

  /** Runs `load` and stores its value: as the lease's fill, or (no lease) only where the key is still absent. */
  private async loadAndStore(key: string, load: Loader, o: LoadOptions, token: string | undefined): Promise<Uint8Array> {
    const body = await valueBody(await load(key));
    const conditions: Record<string, string> = token !== undefined ? { "x-cache-lease": token } : { "if-none-match": "*" };
    const ttl = o.ttl === undefined ? undefined : `${ttlToMs(o.ttl)}ms`;
    try {
      const { response } = await this.deps.bytes.put(key, body, { ttl }, o.signal, conditions);
      if (response.status !== 200) throw answerError(response);
    } catch (err) {
      if (!(err instanceof HypercacheError || err instanceof TransportError || err instanceof AllEndpointsFailedError)) throw err;
      // The lease ended (a write or delete came first) or the key was stored meanwhile: not ours to store.
      const superseded = err instanceof ConflictError || err instanceof PreconditionFailedError;
      if (!superseded) this.deps.onEvent?.({ type: "fill-failed", key, error: err });
    }
    return typeof body === "string" ? new TextEncoder().encode(body) : body;
  }
}

/** Waits `ms` on the client's timers; an abort of `signal` ends the wait with its reason. */
function pause(timers: Timers, ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = timers.after(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, { keepAlive: true });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
