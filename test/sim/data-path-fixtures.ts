// Shared helpers of the data-path simulation tests (data-path-*.test.ts): key pickers by
// ownership, records as a peer would push them, and error assertions on CacheError codes.
import { expect } from "chai";
import { fromUtf8, toBuffer, type ByteString } from "../../src/core/byte-string.js";
import { CacheError, type ErrorCode } from "../../src/core/errors.js";
import type { Owners } from "../../src/ring/index.js";
import type { VersionedRecord } from "../../src/store/index.js";
import type { SimCluster } from "../helpers/sim-cluster.js";

/** A base version in the hybrid-clock range (ManualClock starts at 2026-01-01). */
export const BASE_VERSION = Date.UTC(2026, 0, 1) * 1000;

/** The UTF-8 text of a byte string (undefined stays undefined). */
export function text(value: ByteString | undefined): string | undefined {
  return value === undefined ? undefined : toBuffer(value).toString("utf8");
}

/**
 * The first key `${prefix}-${i}` whose owners (as node `viewer` sees them) satisfy `pred`.
 * Deterministic: the ring is a pure function of the member ids.
 */
export function keyWhere(c: SimCluster, pred: (owners: Owners) => boolean, prefix = "k", viewer = "n1"): string {
  const node = c.node(viewer);
  for (let i = 0; i < 100_000; i++) {
    const key = `${prefix}-${i}`;
    if (pred(node.cache.owners(key))) return key;
  }
  throw new Error(`no key with prefix ${prefix} satisfies the ownership predicate (seed=${c.seed})`);
}

/** `count` distinct keys whose owners satisfy `pred`. */
export function keysWhere(c: SimCluster, count: number, pred: (owners: Owners) => boolean, prefix = "k", viewer = "n1"): string[] {
  const node = c.node(viewer);
  const out: string[] = [];
  for (let i = 0; out.length < count && i < 100_000; i++) {
    const key = `${prefix}-${i}`;
    if (pred(node.cache.owners(key))) out.push(key);
  }
  if (out.length < count) throw new Error(`only ${out.length} keys with prefix ${prefix} satisfy the predicate (seed=${c.seed})`);
  return out;
}

/** Owners of `key`, primary first, and the replicas (the other owners). */
export function ownersOf(c: SimCluster, key: string): { primary: string; replicas: string[]; ids: string[] } {
  const o = c.node("n1").cache.owners(key);
  return { primary: o.primary, replicas: o.ids.filter((id) => id !== o.primary), ids: [...o.ids] };
}

/** Node ids of the cluster that do not own `key`. */
export function nonOwnersOf(c: SimCluster, key: string): string[] {
  const ids = c.node("n1").cache.owners(key).ids;
  return c.nodes.map((n) => n.id).filter((id) => !ids.includes(id));
}

/** A record as a peer pushes it (value given as text). */
export function rec(key: string, value: string, version: number, origin: string, extra: Partial<VersionedRecord> = {}): VersionedRecord {
  return {
    key,
    value: fromUtf8(value),
    version,
    origin,
    lastUpdatedMs: Math.floor(version / 1000),
    expiresAtMs: 0,
    tombstone: false,
    ...extra,
  };
}

/** A tombstone as a peer pushes it. */
export function tomb(key: string, version: number, origin: string): VersionedRecord {
  return { key, value: "", version, origin, lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: true };
}

/** Awaits `p` and asserts it rejects with a CacheError of `code`; returns the error. */
export async function expectCacheError(p: Promise<unknown>, code: ErrorCode): Promise<CacheError> {
  let outcome: unknown;
  try {
    outcome = await p;
  } catch (err) {
    expect(err, `expected a CacheError ${code}, got ${String(err)}`).to.be.instanceOf(CacheError);
    expect((err as CacheError).code, (err as CacheError).message).to.equal(code);
    return err as CacheError;
  }
  expect.fail(`expected a CacheError ${code}, but the call succeeded with ${JSON.stringify(outcome, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`);
}

/** What each node's store holds for `key`: value text, or "<tombstone>", or undefined. */
export function storedEverywhere(c: SimCluster, key: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const n of c.nodes) {
    const r = n.node.store.peek(key);
    out[n.id] = r === undefined ? undefined : r.tombstone ? "<tombstone>" : text(r.value);
  }
  return out;
}

/** Log records of node `id` with `message`. */
export function logRecords(c: SimCluster, id: string, message: string): Array<{ level: string; fields: Record<string, unknown> }> {
  return c.sim(id).logger.records.filter((r) => r.message === message);
}

/**
 * Makes node `id` apply every forward it receives and then lose the answer, as a timed-out call or
 * a connection reset after delivery looks to the sender; returns the function that restores it.
 */
export function loseForwardAnswers(c: SimCluster, id: string): () => void {
  const real = c.node(id).endpoint;
  c.network.register(c.sim(id).address, {
    ...real,
    forward: async (req) => {
      await real.forward(req);
      throw new CacheError("UNAVAILABLE", "peer call timed out after 5000 ms");
    },
  });
  return () => c.network.register(c.sim(id).address, real);
}
