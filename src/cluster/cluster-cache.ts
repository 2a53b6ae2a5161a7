// The node's data path as the client API sees it (CacheService): reads through the Reader,
// writes through the WritePath once admitted, owners from the ring, and the cluster-wide key
// listing.
import type { ByteString } from "../core/byte-string.js";
import type { Clock } from "../core/clock.js";
import type { Mutable } from "../core/mutable.js";
import { isCounterValue } from "../core/counter-state.js";
import { badRequest, toCacheError, type CacheError } from "../core/errors.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { Owners } from "../ring/index.js";
import { isConditional, type ClientWrite, type WriteCondition } from "../transport/index.js";
import { counterAsText, counterLookalike } from "./counter-view.js";
import type { AdmittedWrites, CacheService, IncrRequest, KeyListing, LeaseAsk, LeaseResult, ReadResult, RemoveItem, SetItem, TouchExpiry, WriteResult } from "./cache-service.js";
import type { ClusterView } from "./cluster-view.js";
import type { KeyLister } from "./key-listing.js";
import type { Leases } from "./lease/leases.js";
import type { Lifecycle } from "./lifecycle.js";
import { liveItemOf, type Reader } from "./read/reader.js";
import type { WritePath } from "./write/write-path.js";

export interface ClusterCacheDeps {
  readonly nodeId: string;
  readonly lifecycle: Lifecycle;
  readonly view: ClusterView;
  readonly reader: Reader;
  readonly writes: WritePath;
  readonly keys: KeyLister;
  readonly leases: Leases;
  readonly clock: Clock;
  readonly writeConsistency: ConsistencyLevel;
  readonly readConsistency: ConsistencyLevel;
  /** Bytes of this node's own copy of `key`'s value (0: none), nothing copied. */
  readonly localValueBytes: (key: string) => number;
}

export class ClusterCache implements CacheService {
  readonly nodeId: string;
  private readonly admitted: AdmittedWrites;

  constructor(private readonly deps: ClusterCacheDeps) {
    this.nodeId = deps.nodeId;
    const write = (w: ClientWrite, consistency?: ConsistencyLevel): Promise<WriteResult> => {
      try {
        return deps.lifecycle.track(deps.writes.write(w, writeLevel(isConditional(w), consistency, deps.writeConsistency)));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    const each = <T>(items: readonly T[], one: (item: T) => Promise<WriteResult>) => Promise.all(items.map((it) => one(it).catch(toCacheError)));
    // The hot writes are built without spreads: a spread into an object literal made V8 build
    // each one on a slow path (the conditional writer measured it).
    const set = (key: string, value: ByteString, ttlMs: number, consistency?: ConsistencyLevel, condition?: WriteCondition, leaseToken?: string) => {
      if (isCounterValue(value)) return Promise.reject(counterLookalike(key));
      const w: Mutable<ClientWrite> = { kind: "set", key, value, ttlMs };
      if (condition !== undefined) w.condition = condition;
      if (leaseToken !== undefined) w.leaseToken = leaseToken;
      return write(w, consistency);
    };
    const remove = (key: string, consistency?: ConsistencyLevel, condition?: WriteCondition) => {
      const w: Mutable<ClientWrite> = { kind: "remove", key, value: "", ttlMs: 0 };
      if (condition !== undefined) w.condition = condition;
      return write(w, consistency);
    };
    this.admitted = Object.freeze({
      set,
      remove,
      touch: (key: string, expiry: TouchExpiry, consistency?: ConsistencyLevel, condition?: WriteCondition) => {
        const w: Mutable<ClientWrite> = { kind: "touch", key, value: "", ttlMs: "persist" in expiry ? 0 : expiry.ttlMs };
        if ("persist" in expiry) w.persist = true;
        if (condition !== undefined) w.condition = condition;
        return write(w, consistency);
      },
      incr: (key: string, incr: IncrRequest, consistency?: ConsistencyLevel) => {
        const w: Mutable<ClientWrite> = { kind: "incr", key, value: "", ttlMs: incr.ttlMs, delta: incr.delta, initial: incr.initial };
        if (incr.idempotencyKey !== undefined) w.idempotencyKey = incr.idempotencyKey;
        if (incr.condition !== undefined) w.condition = incr.condition;
        return write(w, consistency);
      },
      setMany: (items: readonly SetItem[], consistency?: ConsistencyLevel) => each(items, (it) => set(it.key, it.value, it.ttlMs, consistency, it.condition)),
      removeMany: (keys: ReadonlyArray<string | RemoveItem>, consistency?: ConsistencyLevel) =>
        each(keys, (k) => (typeof k === "string" ? remove(k, consistency) : remove(k.key, consistency, k.condition))),
      track: <T>(work: Promise<T>) => deps.lifecycle.track(work),
    });
  }

  owners(key: string): Owners {
    return this.deps.view.ring().ownersOf(key);
  }

  get(key: string, consistency?: ConsistencyLevel): Promise<ReadResult> {
    return this.deps.reader.read(key, consistency ?? this.deps.readConsistency).then(counterAsText);
  }

  localValueBytes(key: string): number {
    return this.deps.localValueBytes(key);
  }

  read(key: string, consistency?: ConsistencyLevel): ReadResult | Promise<ReadResult> {
    const r = this.deps.reader.readNow(key, consistency ?? this.deps.readConsistency);
    return r instanceof Promise ? r.then(counterAsText) : counterAsText(r);
  }

  getMany(keys: readonly string[], consistency?: ConsistencyLevel): Promise<Array<ReadResult | CacheError>> {
    return Promise.all(keys.map((k) => this.get(k, consistency).catch(toCacheError)));
  }

  async lease(key: string, ask: LeaseAsk): Promise<LeaseResult> {
    const out = await this.deps.leases.ask(key, ask.leaseMs, ask.waitMs);
    const owners = this.owners(key);
    switch (out.kind) {
      case "hit":
        return counterAsText({ item: liveItemOf(out.record, this.deps.clock.nowMs()), owners });
      case "granted":
        return { item: undefined, owners, token: out.token };
      case "held":
        return { item: undefined, owners, heldMs: out.retryAfterMs };
      default:
        return { item: undefined, owners };
    }
  }

  releaseLease(key: string, token: string): Promise<boolean> {
    return this.deps.leases.release(key, token);
  }

  admitWrite(): AdmittedWrites {
    this.deps.lifecycle.admitWrite();
    return this.admitted;
  }

  listKeys(q: string, max: number, abandoned?: AbortSignal): Promise<KeyListing> {
    return this.deps.keys.list(q, max, abandoned);
  }
}

/**
 * The consistency of a write: the request's, else the default. Conditional writes and touches
 * need QUORUM or ALL: an explicit ONE is 400, and a default of ONE becomes QUORUM for them.
 */
export function writeLevel(conditional: boolean, requested: ConsistencyLevel | undefined, fallback: ConsistencyLevel): ConsistencyLevel {
  if (!conditional) return requested ?? fallback;
  if (requested === "one") throw badRequest("conditional writes and touches need consistency quorum or all, not one", { consistency: "one" });
  const level = requested ?? fallback;
  return level === "one" ? "quorum" : level;
}
