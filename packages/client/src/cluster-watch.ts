// `watch()`: the management listener's Server-Sent Events (`GET /cluster/events`) as typed events.
// It reads the stream with fetch and eventsource-parser rather than EventSource, which cannot send
// an Authorization header. When a stream ends, breaks or cannot be opened, the watch reconnects
// through the management failover transport (so it moves to another node when it knows one)
// after a growing delay (reconnect-delay.ts), and tells `onStatus` why and when. An answer that
// asking again cannot change ends it, as it ends an EventSource: a 401 or 403 (the same
// credential), any other 4xx but 408 and 429 (a wrong path or request), a 2xx other than 200.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { EndpointPool } from "./endpoint-pool.js";
import { AllEndpointsFailedError, badAnswer, errorFromAnswer, HypercacheError, TimeoutError } from "./errors.js";
import type { Answer, FailoverTransport } from "./failover-transport.js";
import type { components } from "./gen/management.js";
import { reconnectDelayMs } from "./reconnect-delay.js";
import { positiveOption } from "./options.js";
import type { Runtime, TimerHandle, Timers } from "./runtime.js";

/** Answers below 500 (higher ones fail over) other than 200 that a watch retries: the rest end it. */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([408, 429]);

/** Reconnect delay until the server names one with `retry:` (ms). */
export const WATCH_RETRY_MS = 1_000;
/**
 * Longest event (or line) of the stream (bytes): 4 MiB, above a members frame of MEMBERS_MAX (4096)
 * members. Past it the stream is dropped as a bad answer and the watch reconnects.
 */
export const WATCH_EVENT_BYTES_MAX = 4 * 1024 * 1024;
/** Shortest `retry:` delay taken from a server: `retry: 0` (a proxy's) would reconnect at once, forever. */
export const WATCH_RETRY_MIN_MS = 100;
/**
 * Longest silence of an open stream (ms) before it is dropped and the watch reconnects to the next
 * management endpoint: five of a node's heartbeat intervals (one a second). A node that stopped
 * (SIGSTOP, a frozen VM) keeps its connection open and sends nothing, for ever.
 */
export const WATCH_IDLE_MS = 5_000;

export type MembersView = components["schemas"]["Members"];
export type DistMetrics = components["schemas"]["DistMetrics"];

/** One event of the stream, with the management endpoint that sent it. */
export type ClusterEvent =
  | { readonly type: "members"; readonly data: MembersView; readonly endpoint: string }
  | { readonly type: "heartbeat"; readonly data: DistMetrics; readonly endpoint: string };

/** The state of the watch's connection, as `onStatus` hears of it. */
export type WatchStatus =
  /** A stream is being opened. */
  | { readonly state: "connecting" }
  /** A stream is open on `endpoint`; events flow. */
  | { readonly state: "open"; readonly endpoint: string }
  /**
   * No stream: it ended, broke, or could not be opened (`reason` in words, `error` when there was
   * one). The next attempt, number `attempt` since the last open stream, starts in `retryInMs`, at
   * `retryAtMs` on the runtime's clock (milliseconds since the epoch with the default clock).
   */
  | { readonly state: "down"; readonly reason: string; readonly error: Error | undefined; readonly attempt: number; readonly retryInMs: number; readonly retryAtMs: number }
  /**
   * The node answered what asking again cannot change (401 or 403, another 4xx than 408 and 429,
   * a 2xx other than 200): the watch ends (the iteration throws `error`).
   */
  | { readonly state: "refused"; readonly error: HypercacheError };

export interface WatchOptions {
  readonly signal?: AbortSignal;
  /**
   * Reconnect when a stream ends or cannot be opened (default true). False ends the iteration
   * when a stream ends, and throws when none can be opened.
   */
  readonly reconnect?: boolean;
  /** Called on every change of the connection's state. Must return quickly and not throw. */
  readonly onStatus?: (status: WatchStatus) => void;
  /**
   * An open stream that sends no byte for this long (ms) is dropped, and the watch reconnects to
   * the next management endpoint; default WATCH_IDLE_MS (5 s, five heartbeat intervals).
   */
  readonly idleTimeoutMs?: number;
}

/** Why a stream is gone: `opened` tells a stream that ended from one that never opened. */
interface Drop {
  readonly reason: string;
  readonly error: Error | undefined;
  readonly opened: boolean;
}

/** The reconnect state shared by one watch's attempts. */
interface Backoff {
  /** The server's `retry:` delay (at least WATCH_RETRY_MIN_MS), or WATCH_RETRY_MS before any stream named one. */
  retryMs: number;
  /** Failed attempts since the last stream that delivered an event. */
  attempt: number;
}

export interface ClusterWatchDeps {
  readonly transport: FailoverTransport;
  readonly pool: EndpointPool;
  readonly runtime: Runtime;
  /** The client's close signal: closing the client ends the watch. */
  readonly closed?: AbortSignal | undefined;
}

export class ClusterWatch implements AsyncIterable<ClusterEvent> {
  private readonly ctrl = new AbortController();
  /** The caller's signal and the client's, which end the watch; their listeners go when it ends. */
  private readonly enders: AbortSignal[] = [];
  private readonly onEnd = (): void => this.close();

  private readonly idleMs: number;
  /** The endpoint whose stream went silent, tried last by the next attempt. */
  private silentEndpoint: string | undefined;

  constructor(
    private readonly deps: ClusterWatchDeps,
    private readonly opts: WatchOptions = {},
  ) {
    this.idleMs = positiveOption("idleTimeoutMs", opts.idleTimeoutMs, false) ?? WATCH_IDLE_MS;
    for (const s of [opts.signal, deps.closed]) {
      if (s === undefined) continue;
      if (s.aborted) {
        this.close();
        return;
      }
      s.addEventListener("abort", this.onEnd, { once: true });
      this.enders.push(s);
    }
  }

  /** Ends the iteration and the open stream. */
  close(): void {
    for (const s of this.enders) s.removeEventListener("abort", this.onEnd);
    this.enders.length = 0;
    this.ctrl.abort();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ClusterEvent> {
    const backoff: Backoff = { retryMs: WATCH_RETRY_MS, attempt: 0 };
    try {
      while (!this.ctrl.signal.aborted) {
        this.report({ state: "connecting" });
        const drop = yield* this.stream(backoff);
        if (drop === undefined || this.ctrl.signal.aborted) return;
        if (this.opts.reconnect === false) {
          if (!drop.opened && drop.error) throw drop.error;
          return;
        }
        backoff.attempt++;
        const retryInMs = reconnectDelayMs(backoff.attempt, backoff.retryMs, this.deps.runtime.random);
        this.report({ state: "down", reason: drop.reason, error: drop.error, attempt: backoff.attempt, retryInMs, retryAtMs: this.deps.runtime.clock.nowMs() + retryInMs });
        await this.pause(retryInMs);
      }
    } catch (err) {
      if (this.ctrl.signal.aborted) return;
      throw err;
    } finally {
      this.close();
    }
  }

  /**
   * Opens one stream and yields its events until it ends; undefined when the watch was closed.
   * Each attempt has its own signal, linked to the watch's only while the attempt lasts: the
   * layers below join it with their time limits (AbortSignal.any), and on Node 20 every join
   * leaves an entry on its source signal for the source's lifetime, which for the watch's own
   * signal is days of reconnects.
   */
  private async *stream(backoff: Backoff): AsyncGenerator<ClusterEvent, Drop | undefined> {
    const attempt = new AbortController();
    const link = () => attempt.abort(this.ctrl.signal.reason);
    this.ctrl.signal.addEventListener("abort", link, { once: true });
    try {
      return yield* this.attempt(backoff, attempt.signal);
    } finally {
      this.ctrl.signal.removeEventListener("abort", link);
      // However the attempt ended (a drop, close(), or a consumer that stopped iterating), its
      // request ends with it: an open response would keep its connection, and the process, alive.
      attempt.abort();
    }
  }

  private async *attempt(backoff: Backoff, signal: AbortSignal): AsyncGenerator<ClusterEvent, Drop | undefined> {
    let answer: Answer;
    try {
      // After a silent stream, its node is tried last: a stopped node accepts connections and
      // never answers, which would cost a whole attempt's time limit.
      const avoid = this.silentEndpoint;
      this.silentEndpoint = undefined;
      answer = await this.deps.transport.send({ method: "GET", path: "/cluster/events", headers: { accept: "text/event-stream" }, signal, stream: true, avoid });
    } catch (err) {
      if (this.ctrl.signal.aborted) return undefined;
      return { reason: unreachableReason(err), error: err as Error, opened: false };
    }
    const { response, endpoint } = answer;
    // The body is read once, and only from a 200: a stream taken over a refusal would be left unread.
    const body = response.status === 200 ? response.body : null;
    if (body === null) {
      const error = errorFromAnswer(response.status, await response.text(), endpoint);
      // A 200 without a body (a custom fetch's) is retried.
      if (response.status !== 200 && !RETRIED_STATUSES.has(response.status)) {
        this.report({ state: "refused", error });
        throw error;
      }
      return { reason: error.message, error, opened: false };
    }
    this.report({ state: "open", endpoint });
    const queue: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => queue.push(m), onRetry: (ms) => (backoff.retryMs = Math.max(ms, WATCH_RETRY_MIN_MS)) });
    const reader = body.getReader();
    const decoder = new TextDecoder();
    // close() ends a pending read even where the fetch implementation ignores the signal.
    const cancel = () => void reader.cancel().catch(() => undefined);
    signal.addEventListener("abort", cancel, { once: true });
    // Bytes since the last event: a line or event that never ends must not grow without bound.
    let pending = 0;
    // A stream that sends nothing for idleMs is let go (its read then ends) and the node cools down.
    const idle = new IdleTimer(this.deps.runtime.timers, this.idleMs, () => {
      this.deps.pool.failed(endpoint);
      cancel();
    });
    const silent = (): Drop => {
      this.silentEndpoint = endpoint;
      return { reason: `no data for ${this.idleMs} ms`, error: new TimeoutError(`no data for ${this.idleMs} ms`, endpoint), opened: true };
    };
    try {
      for (;;) {
        // Only the wait for bytes is timed: a consumer that takes long over an event (the
        // generator waits at its yield) must not make a live stream look silent.
        idle.arm();
        const { done, value } = await reader.read();
        if (idle.fired) return silent();
        idle.stop();
        if (done) return { reason: "the stream ended", error: undefined, opened: true };
        pending += value.byteLength;
        if (pending > WATCH_EVENT_BYTES_MAX) {
          this.deps.pool.failed(endpoint);
          void reader.cancel().catch(() => undefined);
          const error = badAnswer(200, endpoint, `an event over ${WATCH_EVENT_BYTES_MAX} bytes`);
          return { reason: error.message, error, opened: true };
        }
        parser.feed(decoder.decode(value, { stream: true }));
        if (queue.length > 0) pending = 0;
        for (const m of queue.splice(0)) {
          const event = toEvent(m, endpoint);
          if (!event) continue;
          // A stream that delivered an event starts the count again; one that opens and ends
          // without any (a proxy's `retry: 0` and close, again and again) waits longer each time.
          backoff.attempt = 0;
          yield event;
        }
      }
    } catch (err) {
      if (this.ctrl.signal.aborted) return undefined;
      if (idle.fired) return silent();
      this.deps.pool.failed(endpoint);
      return { reason: "the connection broke", error: err as Error, opened: true };
    } finally {
      idle.stop();
      signal.removeEventListener("abort", cancel);
      reader.releaseLock();
    }
  }

  private report(status: WatchStatus): void {
    this.opts.onStatus?.(status);
  }

  /**
   * Waits `ms`, or until close(); leaves no listener behind (a watch may reconnect for days). The
   * timer keeps the process alive: a watch being iterated is work under way, and between two
   * streams no socket holds Node's event loop open (with an unref'd timer Node exited with code 13,
   * the `for await` never settled).
   */
  private pause(ms: number): Promise<void> {
    const signal = this.ctrl.signal;
    return new Promise((resolve) => {
      const onAbort = () => {
        timer.cancel();
        resolve();
      };
      const timer = this.deps.runtime.timers.after(
        ms,
        () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        { keepAlive: true },
      );
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** A timer started before each read and stopped after it: it fires when a read waits longer than `ms`. */
class IdleTimer {
  fired = false;
  private timer: TimerHandle | undefined;
  constructor(
    private readonly timers: Timers,
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {}
  arm(): void {
    this.timer?.cancel();
    this.timer = this.timers.after(this.ms, () => {
      this.fired = true;
      this.onIdle();
    });
  }
  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }
}

/**
 * Why no stream could be opened, in words: the message of the last node that answered (a 5xx), or
 * that none could be reached.
 */
function unreachableReason(err: unknown): string {
  const last = err instanceof AllEndpointsFailedError ? err.last : undefined;
  if (last instanceof HypercacheError) return last.message;
  if (last) return `could not connect to ${last.endpoint}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The typed event of a frame, or undefined for a frame to skip: another event name, data that is
 * not JSON, a members frame without the members view, a heartbeat that is not an object.
 */
function toEvent(m: EventSourceMessage, endpoint: string): ClusterEvent | undefined {
  if (m.event !== "members" && m.event !== "heartbeat") return undefined;
  let data: unknown;
  try {
    data = JSON.parse(m.data);
  } catch {
    return undefined;
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined;
  if (m.event === "heartbeat") return { type: "heartbeat", data: data as DistMetrics, endpoint };
  const v = data as Partial<Record<keyof MembersView, unknown>>;
  if (typeof v.membership_version !== "number" || !Array.isArray(v.members) || !v.members.every((x) => x !== null && typeof x === "object")) return undefined;
  return { type: "members", data: data as MembersView, endpoint };
}
