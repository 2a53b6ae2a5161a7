// The /cluster/events stream: a publisher that sends a "members" frame after membership changes
// (at most one per event-loop turn) and a "heartbeat" frame every second, and the per-request
// subscription.
import type { IncomingMessage, ServerResponse } from "node:http";
import { oncePerTurn, type TimerHandle, type Timers } from "../core/clock.js";
import type { MemberTable } from "../membership/index.js";
import { formatFrame, type SseHub } from "../observability/index.js";

/** Milliseconds between heartbeat frames. */
export const HEARTBEAT_FRAME_INTERVAL_MS = 1000;
/** Reconnect delay suggested to clients by the stream's `retry:` line. */
export const SSE_RETRY_MS = 3000;

export interface FrameSources {
  members(): string;
  heartbeat(): string;
}

/** Publishes frames to the hub: members on change, heartbeat on a timer. */
export class ClusterEventsPublisher {
  private timer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: { hub: SseHub; members: MemberTable; timers: Timers; sources: FrameSources }) {}

  start(): void {
    // Frames are built only when someone listens, and at most one members frame per event-loop
    // turn, with the list as it is then: changes come in bursts (a probe round whose timeouts fire
    // together), and each frame serializes every member.
    this.unsubscribe ??= this.deps.members.onChange(
      oncePerTurn(this.deps.timers, () => {
        if (this.deps.hub.size > 0) this.deps.hub.publish("members", this.deps.sources.members());
      }),
    );
    this.timer ??= this.deps.timers.every(HEARTBEAT_FRAME_INTERVAL_MS, () => this.runHeartbeatTick());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Sends one heartbeat frame (serialized once for every subscriber). */
  runHeartbeatTick(): void {
    if (this.deps.hub.size > 0) this.deps.hub.publish("heartbeat", this.deps.sources.heartbeat());
  }
}

/** When the stream's credential stops being accepted (Identity.expiresAtMs), and the wall clock. */
export interface StreamExpiry {
  readonly atMs: number;
  readonly nowMs: () => number;
}

/**
 * Turns a request into an event stream: retry line, one members and one heartbeat frame, then
 * live frames. A client that left before this runs (while an asynchronous authentication, a bcrypt
 * check or an OIDC key fetch, was under way) is not subscribed: its response's "close" has
 * already fired, so a subscription would never be released and would hold a slot for good.
 * With `expiry`, the first frame due once the credential expired ends the stream instead (a
 * heartbeat comes every second): a stream opened with an OIDC token went on for as long as the
 * connection lasted, after the token itself was refused. The client reconnects with a fresh one.
 */
export function subscribeEvents(req: IncomingMessage, res: ServerResponse, hub: SseHub, sources: FrameSources, expiry?: StreamExpiry): void {
  if (clientGone(req, res)) return;
  req.socket.setTimeout(0);
  req.socket.setNoDelay(true);
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  res.write(`retry: ${SSE_RETRY_MS}\n\n`);
  res.write(formatFrame("members", sources.members()));
  res.write(formatFrame("heartbeat", sources.heartbeat()));
  const unsubscribe = hub.subscribe({ write: expiry === undefined ? (chunk) => res.write(chunk) : writeUntil(expiry), onDrain: (cb) => res.on("drain", cb) });
  /** Writes a frame while the credential holds; past it, ends the stream and frees its slot. */
  function writeUntil({ atMs, nowMs }: StreamExpiry): (chunk: string) => boolean {
    return (chunk) => {
      if (nowMs() < atMs) return res.write(chunk);
      unsubscribe();
      res.end();
      return true;
    };
  }
  res.once("close", unsubscribe);
}

/** True once the client's connection or the response is closed or ended. */
function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  return req.socket.destroyed || res.destroyed || res.writableEnded;
}
