// getOrLoad: a read that loads a missing value once for all callers, with the server's stampede
// leases (GET ?lease=&wait=, then a PUT carrying X-Cache-Lease). A hit is the value. The first
// miss gets the lease: this caller runs `load` and fills the key with the lease's token (a write
// or delete of the key meanwhile makes the fill 409, and nothing stale is stored). Other callers'
// misses wait on the server up to `wait` for the fill, and past it (LEASE_HELD) read again, after
// a short pause, until the holder's lease ends (its Retry-After): then the server gives the next
// miss a lease of its own. Without a lease (the primary is unreachable or at its lease cap) the
// value is loaded and stored only if the key is still absent (If-None-Match: *, never replayed on
// another node once sent), so it never replaces a newer write. A failed store does not fail the
// call: the caller has its value, and the client reports it (a "fill-failed" event). A lease the
// call got and did not fill (`load` threw, the call was aborted, the fill was refused) is given back
// (DELETE /v1/cache/{key}/lease, not awaited): the next miss gets the lease at once.
import { parseDurationMs, ttlToMs, type Ttl } from "./duration.js";
import { AllEndpointsFailedError, ConflictError, HypercacheError, LeaseHeldError, PreconditionFailedError, TransportError } from "./errors.js";
import type { ByteRoutes } from "./byte-routes.js";
import type { ClientEvent } from "./failover-transport.js";
import type { Consistency } from "./options.js";
import type { Clock, Timers } from "./runtime.js";
import { answerError, isMissingKey, valueBody, valueOf, type CacheValue } from "./values.js";

/** Default lease: how long the loading caller has to fill the key (ms). */
export const LEASE_DEFAULT_MS = 10_000;
/** Default wait of a miss on the server for another caller's fill (ms); at most half the client's timeoutMs. */
export const LEASE_WAIT_DEFAULT_MS = 2_000;
/** Pause between two lease reads of a waiting caller (ms): the server's `wait` does the waiting. */
export const LEASE_RETRY_PAUSE_MS = 100;
/** The longest lease the server grants (ms): no caller waits longer for another's fill. */
const LEASE_MAX_MS = 60_000;
/** The server's shortest lease and longest wait (ms): anything else is a 400, refused here first. */
const LEASE_MIN_MS = 100;
const WAIT_MAX_MS = 10_000;

export interface LoadOptions {
  /** How long the lease lasts if this call gets it, the time `load` may take: 100ms to 60s (default 10s). */
  readonly lease?: Ttl;
  /**
   * How long a miss waits on the server for another caller's fill: 0 to 10s (default 2s, or half
   * the client's `timeoutMs` when that is less), and below the client's `timeoutMs`. A lease read through a node that is not the key's primary can
   * take `wait` plus the server's peer timeout (5 s by default) when the primary hangs: keep `wait`
   * at most `timeoutMs` minus that.
   */
  readonly wait?: Ttl;
  /** Time to live of the value this call stores; omitted, it never expires. */
  readonly ttl?: Ttl;
  /** Read consistency of the lease read (default the server's). */
  readonly consistency?: Consistency;
  /** Ends the call, the waits and the reads; handed to `load`. */
  readonly signal?: AbortSignal;
}

/** Loads the value of a missing key (the caller's database, say); its result is stored and returned. */
export type Loader = (key: string, signal: AbortSignal | undefined) => CacheValue | Promise<CacheValue>;

export interface LeaseLoadsDeps {
  /** Routes replayed on another node: the lease reads and the fill (a second fill is refused 409). */
  readonly bytes: ByteRoutes;
  /** Routes not replayed once sent: the store without a lease (If-None-Match: *). */
  readonly bytesOnce: ByteRoutes;
  readonly clock: Clock;
  readonly timers: Timers;
  /** The client's time limit of one attempt (ms; 0: none): a lease read's wait must end before it. */
  readonly attemptTimeoutMs: number;
  readonly onEvent?: ((e: ClientEvent) => void) | undefined;
}

export class LeaseLoads {
  constructor(private readonly deps: LeaseLoadsDeps) {}

  async getOrLoad(key: string, load: Loader, o: LoadOptions): Promise<Uint8Array> {
    const leaseMs = o.lease === undefined ? LEASE_DEFAULT_MS : ttlToMs(o.lease);
    const timeout = this.deps.attemptTimeoutMs;
    const waitDefaultMs = timeout > 0 ? Math.min(LEASE_WAIT_DEFAULT_MS, Math.floor(timeout / 2)) : LEASE_WAIT_DEFAULT_MS;
    const waitMs = o.wait === undefined ? waitDefaultMs : waitToMs(o.wait);
    if (leaseMs < LEASE_MIN_MS || leaseMs > LEASE_MAX_MS || waitMs === undefined || waitMs > WAIT_MAX_MS || (timeout > 0 && waitMs >= timeout)) {
      throw new TypeError(`lease: 100ms to 60s; wait: 0s to 10s, below timeoutMs (${timeout} ms)`);
    }
    const query = { lease: `${leaseMs}ms`, wait: `${waitMs}ms`, consistency: o.consistency };
    // Set by the first LEASE_HELD: when the holder's lease ends (then the server leases anew).
    let heldUntil: number | undefined;
    for (;;) {
      const { response } = await this.deps.bytes.getWith(key, query, o.signal);
      if (response.status === 200) return valueOf(response);
      const err = answerError(response);
      if (!(err instanceof LeaseHeldError)) {
        if (!isMissingKey(err, response)) throw err;
        return this.loadAndStore(key, load, o, leaseMs, response.headers.get("x-cache-lease") ?? undefined);
      }
      const now = this.deps.clock.nowMs();
      heldUntil ??= now + heldForMs(response.headers.get("retry-after"));
      // The holder never filled within its lease and the server still answers held: load here.
      if (now > heldUntil + waitMs + LEASE_RETRY_PAUSE_MS) return this.loadAndStore(key, load, o, leaseMs, undefined);
      await pause(this.deps.timers, LEASE_RETRY_PAUSE_MS, o.signal);
    }
  }

  /**
   * Runs `load` and stores its value: as the lease's fill, or (no lease) only where the key is
   * still absent. A lease this call got and did not fill (`load` threw, the call was aborted, the
   * fill was refused other than 409) is given back, so that the next caller loads at once rather
   * than when the lease runs out: one attempt, not awaited, and a failed one is let go (the lease
   * then runs out on its own).
   */
  private async loadAndStore(key: string, load: Loader, o: LoadOptions, leaseMs: number, token: string | undefined): Promise<Uint8Array> {
    const started = this.deps.clock.nowMs();
    // True once nothing is left to give back: no lease, its fill stored, or the server no longer holds it (409).
    let settled = token === undefined;
    try {
      const body = await valueBody(await load(key, o.signal));
      const ttl = o.ttl === undefined ? undefined : `${ttlToMs(o.ttl)}ms`;
      try {
        const { response } = token !== undefined
          ? await this.deps.bytes.put(key, body, { ttl }, o.signal, { "x-cache-lease": token })
          : await this.deps.bytesOnce.put(key, body, { ttl }, o.signal, { "if-none-match": "*" });
        if (response.status !== 200) throw answerError(response);
        settled = true;
      } catch (err) {
        if (err instanceof ConflictError) settled = true;
        if (!(err instanceof HypercacheError || err instanceof TransportError || err instanceof AllEndpointsFailedError)) throw err;
        // Not ours to store: the lease ended by a write or delete, or the key was stored meanwhile.
        // A lease that ran out while `load` ran is told, though: every call would load again.
        const outlived = err instanceof ConflictError && this.deps.clock.nowMs() - started >= leaseMs;
        if (outlived || !(err instanceof ConflictError || err instanceof PreconditionFailedError)) {
          const error = outlived ? new Error(`load outlasted the ${leaseMs} ms lease`, { cause: err }) : err;
          this.deps.onEvent?.({ type: "fill-failed", key, error });
        }
      }
      return typeof body === "string" ? new TextEncoder().encode(body) : body;
    } finally {
      if (!settled) void this.deps.bytes.releaseLease(key, token as string).catch(() => undefined);
    }
  }
}

/** A wait in ms: a TTL, or zero ("0s", "0ms", 0); undefined when malformed. */
function waitToMs(wait: Ttl): number | undefined {
  return wait === 0 || (typeof wait === "string" && parseDurationMs(wait) === 0) ? 0 : ttlToMs(wait);
}

/** How long the holder's lease lasts from a LEASE_HELD's Retry-After (seconds), at most the longest lease. */
function heldForMs(retryAfter: string | null): number {
  const s = Number(retryAfter);
  return retryAfter !== null && Number.isFinite(s) && s >= 0 ? Math.min(s * 1000, LEASE_MAX_MS) : LEASE_MAX_MS;
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
