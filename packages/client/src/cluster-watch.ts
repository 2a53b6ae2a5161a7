// `watch()`: the management listener's Server-Sent Events (`GET /cluster/events`) as typed events.
// It reads the stream with fetch and eventsource-parser rather than EventSource, which cannot send
// an Authorization header. When a stream ends or breaks, the watch reconnects after the server's
// `retry:` delay through the management failover transport, so it moves to another node.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { EndpointPool } from "./endpoint-pool.js";
import { errorFromAnswer } from "./errors.js";
import type { FailoverTransport } from "./failover-transport.js";
import type { components } from "./gen/management.js";
import type { Runtime } from "./runtime.js";

/** Reconnect delay until the server names one with `retry:` (ms). */
export const WATCH_RETRY_MS = 1_000;

export type MembersView = components["schemas"]["Members"];
export type DistMetrics = components["schemas"]["DistMetrics"];

/** One event of the stream, with the management endpoint that sent it. */
export type ClusterEvent =
  | { readonly type: "members"; readonly data: MembersView; readonly endpoint: string }
  | { readonly type: "heartbeat"; readonly data: DistMetrics; readonly endpoint: string };

export interface WatchOptions {
  readonly signal?: AbortSignal;
  /** Reconnect when a stream ends (default true); false ends the iteration instead. */
  readonly reconnect?: boolean;
}

export class ClusterWatch implements AsyncIterable<ClusterEvent> {
  private readonly ctrl = new AbortController();

  constructor(
    private readonly deps: { transport: FailoverTransport; pool: EndpointPool; runtime: Runtime },
    private readonly opts: WatchOptions = {},
  ) {
    opts.signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  /** Ends the iteration and the open stream. */
  close(): void {
    this.ctrl.abort();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ClusterEvent> {
    let retryMs = WATCH_RETRY_MS;
    try {
      while (!this.ctrl.signal.aborted) {
        const { response, endpoint } = await this.deps.transport.send({ method: "GET", path: "/cluster/events", headers: { accept: "text/event-stream" }, signal: this.ctrl.signal, stream: true });
        if (response.status !== 200 || !response.body) throw errorFromAnswer(response.status, await response.text(), endpoint);
        const queue: EventSourceMessage[] = [];
        const parser = createParser({ onEvent: (m) => queue.push(m), onRetry: (ms) => (retryMs = ms) });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        // close() ends a pending read even where the fetch implementation ignores the signal.
        const cancel = () => void reader.cancel().catch(() => undefined);
        this.ctrl.signal.addEventListener("abort", cancel, { once: true });
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            parser.feed(decoder.decode(value, { stream: true }));
            for (const m of queue.splice(0)) {
              const event = toEvent(m, endpoint);
              if (event) yield event;
            }
          }
        } catch (err) {
          if (this.ctrl.signal.aborted) return;
          this.deps.pool.failed(endpoint);
          void err;
        } finally {
          this.ctrl.signal.removeEventListener("abort", cancel);
          reader.releaseLock();
        }
        if (this.opts.reconnect === false || this.ctrl.signal.aborted) return;
        await this.pause(retryMs);
      }
    } catch (err) {
      if (this.ctrl.signal.aborted) return;
      throw err;
    } finally {
      this.ctrl.abort();
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = this.deps.runtime.timers.after(ms, resolve);
      this.ctrl.signal.addEventListener("abort", () => (t.cancel(), resolve()), { once: true });
    });
  }
}

function toEvent(m: EventSourceMessage, endpoint: string): ClusterEvent | undefined {
  if (m.event !== "members" && m.event !== "heartbeat") return undefined;
  try {
    const data = JSON.parse(m.data) as never;
    return { type: m.event, data, endpoint };
  } catch {
    return undefined;
  }
}
