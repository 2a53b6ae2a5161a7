// GET /cluster/events read with fetch and eventsource-parser (EventSource cannot send an
// Authorization header). When the stream cannot open or drops, the status says so and a new
// attempt follows after a growing delay (backoff.ts); an open stream resets the delay.
import { createParser } from "eventsource-parser";
import type { ApiError } from "./api.js";
import { envelopeError } from "./api.js";
import { reconnectDelayMs } from "./backoff.js";

export type StreamStatus =
  | { readonly state: "connecting" }
  | { readonly state: "open" }
  | { readonly state: "down"; readonly reason: string; readonly retryAtMs: number; readonly attempt: number }
  /** 401/403: retrying cannot help. */
  | { readonly state: "refused"; readonly error: ApiError };

export interface StreamHandlers {
  onEvent(type: string, data: string): void;
  onStatus(status: StreamStatus): void;
}

/** First reconnect delay before the server named one with `retry:` (ms). */
const RETRY_DEFAULT_MS = 1_000;

/** Opens the stream and keeps it open until the returned function is called. */
export function openEventStream(url: string, authorization: string | undefined, h: StreamHandlers): () => void {
  const ctrl = new AbortController();
  let retryMs = RETRY_DEFAULT_MS;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = async (): Promise<void> => {
    h.onStatus({ state: "connecting" });
    let reason = "the stream ended";
    try {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (authorization !== undefined) headers.authorization = authorization;
      const r = await fetch(url, { headers, cache: "no-store", signal: ctrl.signal });
      if (r.status === 401 || r.status === 403) {
        h.onStatus({ state: "refused", error: envelopeError(r.status, await r.text()) });
        return;
      }
      if (!r.ok || !r.body) {
        reason = envelopeError(r.status, await r.text()).message;
      } else {
        attempt = 0;
        h.onStatus({ state: "open" });
        const parser = createParser({ onEvent: (m) => h.onEvent(m.event ?? "message", m.data), onRetry: (ms) => (retryMs = ms) });
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      }
    } catch {
      if (ctrl.signal.aborted) return;
      reason = "the connection to the node broke";
    }
    if (ctrl.signal.aborted) return;
    attempt++;
    const delay = reconnectDelayMs(attempt, retryMs, Math.random);
    h.onStatus({ state: "down", reason, retryAtMs: Date.now() + delay, attempt });
    timer = setTimeout(() => void connect(), delay);
  };

  void connect();
  return () => {
    ctrl.abort();
    if (timer !== undefined) clearTimeout(timer);
  };
}
