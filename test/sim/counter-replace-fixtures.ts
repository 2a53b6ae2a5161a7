// Shared by the sims of counters replaced by a PUT or DELETE: drive writes while the simulated
// clock advances, increment through a node, and describe what a node holds for a key.
import { CacheError } from "../../src/core/errors.js";
import { counterTotal, decodeCounter } from "../../src/core/counter-state.js";
import type { SimCluster } from "../helpers/sim-cluster.js";
import { text } from "./data-path-fixtures.js";

/** Settles `ps` while advancing the clock (at most 20 s); a CacheError is returned, not thrown. */
export async function drive<T>(c: SimCluster, ps: Array<Promise<T>>): Promise<Array<T | CacheError>> {
  let done = false;
  const all = Promise.all(ps.map((p) => p.catch((e: unknown) => (e instanceof CacheError ? e : Promise.reject(e))))).finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await c.advance(100);
  return all;
}

export function incrAt(c: SimCluster, via: string, key: string, delta: number, consistency: "one" | "quorum" | "all") {
  return c.node(via).cache.admitWrite().incr(key, { delta, initial: 0, ttlMs: 0 }, consistency);
}

/** What `id` holds for `key`: "nothing", a tombstone, a counter's total or a value, with its version and origin. */
export function held(c: SimCluster, id: string, key: string): string {
  const rec = c.node(id).store.peek(key);
  if (rec === undefined) return "nothing";
  if (rec.tombstone) return `tombstone@(${rec.version},${rec.origin})`;
  const s = decodeCounter(rec.value);
  return `${s === undefined ? text(rec.value) : counterTotal(s)}@(${rec.version},${rec.origin})`;
}
