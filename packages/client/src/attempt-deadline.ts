// The Node client's time limit over the first part of an attempt: the connection (TCP and TLS)
// and the wait for the headers. undici's own limits run on its shared timer, which ticks about
// once a second (a 200 ms limit fired after 1007 ms), and its connect limit is the Agent's, 10 s
// unless told otherwise, whatever the request's limit (a 500 ms attempt on a host that dropped the
// SYN took 10.5 s). Here the connect is bounded by the connector, and the headers by one timer per
// attempt (the runtime's, so a native one: at most a few milliseconds late) that aborts the
// request through the signal undici is given. undici ignores an abort while the connection is
// being made, so the connector's limit is what ends that phase.
// The file imports neither undici nor Node built-ins (the core's rule): node.ts hands it undici's
// connector and error.
import { timeLimitError } from "./attempt-scope.js";
import type { TimerHandle, Timers } from "./runtime.js";

/** What the connector needs of a socket: undici's net.Socket or TLSSocket. */
interface Destroyable {
  destroy(): void;
}

/** undici's connector, as far as it is used here (buildConnector.connector). */
export type Connector<O extends { hostname: string; port: string }, S extends Destroyable> = (options: O, callback: (...args: [null, S] | [Error, null]) => void) => unknown;

/**
 * `connect` ending, with `timeoutError(options)` (undici's ConnectTimeoutError, code
 * UND_ERR_CONNECT_TIMEOUT: the request never left), every connection not made within `timeoutMs`
 * (0 sets no limit); the socket is destroyed, and one that comes later is let go.
 */
export function deadlineConnector<O extends { hostname: string; port: string }, S extends Destroyable>(
  connect: Connector<O, S>,
  timeoutMs: number,
  timers: Timers,
  timeoutError: (options: O) => Error,
): Connector<O, S> {
  if (!(timeoutMs > 0)) return connect;
  return (options, callback) => {
    let settled = false;
    const timer = timers.after(timeoutMs, () => {
      if (settled) return;
      settled = true;
      socket?.destroy();
      callback(timeoutError(options), null);
    });
    // undici's connector returns the socket it is making (its type says void).
    const socket = connect(options, (...args) => {
      if (settled) {
        args[1]?.destroy();
        return;
      }
      settled = true;
      timer.cancel();
      callback(...args);
    }) as Destroyable | undefined;
    return socket;
  };
}

type Listener = () => void;

/**
 * The signal undici gets for one attempt: it aborts when the caller's signal does, and with a
 * TimeoutError when the time limit passes before the headers came (`headersCame()` stops that
 * timer). It has the part of AbortSignal undici uses (`aborted`, `reason`, one "abort" listener,
 * which undici removes when the answer's body is done): cheaper than an AbortController and
 * AbortSignal.any, and it leaves no listener on the caller's signal once undici removed its own.
 */
export class AttemptSignal {
  aborted = false;
  reason: unknown = undefined;
  private listener: Listener | undefined;
  private timer: TimerHandle | undefined;
  private readonly onCallerAbort = (): void => this.abort(this.caller?.reason);

  constructor(
    private readonly caller: AbortSignal | undefined,
    timers: Timers,
    limitMs: number,
  ) {
    if (caller?.aborted) {
      this.aborted = true;
      this.reason = caller.reason;
      return;
    }
    if (limitMs > 0) this.timer = timers.after(limitMs, () => this.abort(timeLimitError(limitMs)));
  }

  addEventListener(_type: "abort", listener: Listener): void {
    this.listener = listener;
    this.caller?.addEventListener("abort", this.onCallerAbort, { once: true });
  }

  removeEventListener(_type: "abort", listener: Listener): void {
    if (this.listener !== listener) return;
    this.listener = undefined;
    this.caller?.removeEventListener("abort", this.onCallerAbort);
  }

  /** The headers came (or the request failed): the time limit no longer applies to this phase. */
  headersCame(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.headersCame();
    const l = this.listener;
    this.removeEventListener("abort", l as Listener);
    l?.();
  }
}
