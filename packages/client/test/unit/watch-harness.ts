// A management-only client on a ManualClock whose watch is iterated in the background, collecting
// what onStatus reports and the events, for the watch tests.
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import type { ClusterEvent, WatchStatus } from "../../src/cluster-watch.js";
import { seededRandom } from "../../src/runtime.js";
import type { FakeFetch } from "./fake-fetch.js";

export type Down = Extract<WatchStatus, { state: "down" }>;

/** The last `down` status reported, if any. */
export const lastDown = (statuses: readonly WatchStatus[]): Down | undefined => statuses.filter((s): s is Down => s.state === "down").at(-1);

export async function watchInBackground(f: FakeFetch, managementEndpoints: string[], o: { timeoutMs?: number } = {}) {
  const clock = new ManualClock();
  const c = new HypercacheClient({ managementEndpoints, fetch: f.fetch, randomStart: false, ...o, runtime: { clock, timers: clock, random: seededRandom(1) } });
  const statuses: WatchStatus[] = [];
  const events: ClusterEvent[] = [];
  const w = await c.watch({ onStatus: (s) => statuses.push(s) });
  const ended = (async () => {
    for await (const e of w) events.push(e);
  })().catch((err: unknown) => err);
  return { c, clock, w, statuses, events, ended };
}
