// The key plan: single-writer keys (each written by one worker only, so their history is
// sequential) and contended keys (written by every worker).
import type { KeyPlan } from "../checker/history.js";

export interface KeyPlanOptions {
  single: number;
  contended: number;
  workers: number;
}

/** Single-writer key i belongs to worker i mod workers. */
export function planKeys(o: KeyPlanOptions): KeyPlan[] {
  const keys: KeyPlan[] = [];
  for (let i = 0; i < o.single; i++) keys.push({ key: `s${String(i).padStart(3, "0")}`, kind: "single", writer: i % o.workers });
  for (let i = 0; i < o.contended; i++) keys.push({ key: `c${String(i).padStart(3, "0")}`, kind: "contended" });
  return keys;
}
