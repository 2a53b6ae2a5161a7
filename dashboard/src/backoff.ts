// Reconnect delays of the event stream: doubling from the server's `retry:` delay (or 1 s) up to
// 30 s, with up to 20% jitter so that many open dashboards do not reconnect in step.

/** Longest wait between reconnect attempts (ms). */
export const RECONNECT_MAX_MS = 30_000;

/** Delay before reconnect attempt `attempt` (1 = the first after a drop). */
export function reconnectDelayMs(attempt: number, baseMs: number, random: () => number): number {
  const raw = Math.min(RECONNECT_MAX_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(raw * (1 - 0.2 * random()));
}
