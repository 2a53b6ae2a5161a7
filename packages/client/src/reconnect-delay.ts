// How long `watch()` waits before it opens the event stream again: the server's `retry:` delay
// first (1 s until a stream named one, at least 100 ms), doubled on each further failed attempt
// up to 30 s as an endpoint's cooldown is (cooldownMs), less up to 20% at random so that many
// watchers (dashboards) that lost the same node do not all come back in the same millisecond.
// A stream that delivers an event starts the count again.
import { COOLDOWN_MAX_MS, cooldownMs } from "./endpoint-pool.js";
import type { Random } from "./runtime.js";

/** Longest wait between two attempts to open the event stream (ms). */
export const WATCH_RETRY_MAX_MS = COOLDOWN_MAX_MS;
/** Largest share of a reconnect delay taken off at random. */
export const WATCH_RETRY_JITTER = 0.2;

/**
 * The delay before reconnect attempt `attempt` (1 = the first after a drop): `baseMs` (the
 * server's `retry:`) doubled per attempt after the first, capped at {@link WATCH_RETRY_MAX_MS},
 * less up to {@link WATCH_RETRY_JITTER} of it at random; rounded to whole milliseconds.
 */
export function reconnectDelayMs(attempt: number, baseMs: number, random: Random): number {
  return Math.round(cooldownMs(attempt, baseMs, WATCH_RETRY_MAX_MS) * (1 - WATCH_RETRY_JITTER * random.next()));
}
