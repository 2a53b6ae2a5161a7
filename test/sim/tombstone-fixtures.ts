// The setup the tombstone-hold sims share: a key written at ALL through n1, then its first owner
// cut off from the other two (it still reaches the non-owners, so it sees a majority of 5).
import { fromUtf8 } from "../../src/core/byte-string.js";
import type { SimCluster } from "../helpers/sim-cluster.js";

/** Writes `key` ("v") at ALL through n1 after 2 s, waits `settleMs`, cuts its first owner off from the other two; returns the owners. */
export async function writeThenCutOwner(c: SimCluster, key: string, settleMs: number): Promise<[string, string, string]> {
  await c.advance(2_000);
  await c.node("n1").cache.admitWrite().set(key, fromUtf8("v"), 0, "all");
  await c.advance(settleMs);
  const owners = c.node("n1").cache.owners(key).ids as [string, string, string];
  c.chaos.partition([owners[0]], [owners[1], owners[2]]);
  await c.advance(500);
  return owners;
}
