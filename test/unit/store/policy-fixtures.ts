// Helpers shared by the eviction policy tests.
import type { EvictionPolicy } from "../../../src/store/index.js";

/** Victims in order, removing each one: the full eviction order of the policy. */
export function drain(p: EvictionPolicy): number[] {
  const out: number[] = [];
  for (let v = p.victim(); v >= 0; v = p.victim()) {
    out.push(v);
    p.remove(v);
    if (out.length > 10_000) throw new Error("policy never empties");
  }
  return out;
}

/** `p` sized for `capacity` slots, with `slots` inserted in order. */
export function filled<P extends EvictionPolicy>(p: P, slots: readonly number[], capacity: number): P {
  p.resize(capacity);
  for (const s of slots) p.insert(s);
  return p;
}
