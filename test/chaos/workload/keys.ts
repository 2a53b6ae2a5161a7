// The key plan: single-writer keys (each written by one worker only, so their history is
// sequential), contended keys (written and deleted by every worker), conditional keys (written by
// every worker with If-Match on the ETag it read), counter keys (incremented by every worker) and
// lease keys (read with a stampede lease by every worker, written only by the lease holders' fills).
import type { KeyPlan } from "../checker/history.js";

export interface KeyPlanOptions {
  single: number;
  contended: number;
  cas: number;
  counters: number;
  leases: number;
  workers: number;
}

const name = (prefix: string, i: number) => `${prefix}${String(i).padStart(3, "0")}`;

/** Single-writer key i belongs to worker i mod workers. */
export function planKeys(o: KeyPlanOptions): KeyPlan[] {
  const keys: KeyPlan[] = [];
  for (let i = 0; i < o.single; i++) keys.push({ key: name("s", i), kind: "single", writer: i % o.workers });
  for (let i = 0; i < o.contended; i++) keys.push({ key: name("c", i), kind: "contended" });
  for (let i = 0; i < o.cas; i++) keys.push({ key: name("x", i), kind: "cas" });
  for (let i = 0; i < o.counters; i++) keys.push({ key: name("n", i), kind: "counter" });
  for (let i = 0; i < o.leases; i++) keys.push({ key: name("l", i), kind: "lease" });
  return keys;
}
