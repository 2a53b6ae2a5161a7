// Reads. ONE reads the local copy when this node owns the key, else the first reachable owner.
// QUORUM and ALL consult the owners in parallel, pick the newest (version, origin) among the
// answers and repair the owners that answered with an older copy or none.
//
// A quorum counts only answers from nodes that own the key in their own ring view, as a write's
// acknowledgements do (the ownership guard refuses the others). After a ring change, a node whose
// view is behind still lists a former owner, which may hold the value a delete replaced on the new
// owners: its answer is weighed (a newer record is kept) but never makes up the quorum. Nor does
// the answer (or the own copy) of a node that may have missed writes and has not caught up since
// (quorum-vote.ts: it lost sight of a majority, was paused, has just started, or its view
// lastingly disagrees with its peers').
import type { Clock, Timers } from "../../core/clock.js";
import { CacheError } from "../../core/errors.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Metrics } from "../../observability/index.js";
import type { Owners } from "../../ring/index.js";
import { compareVersions, isLiveAt, type LiveItem, type ShardedStore, type VersionedRecord } from "../../store/index.js";
import type { HeldRecord, PeerRef, PeerTransport } from "../../transport/index.js";
import { batchOptions, PeerBatcher } from "../write/batcher.js";
import { PEER_BATCHING } from "../../core/limits.js";
import type { ReadResult } from "../cache-service.js";
import type { ClusterView } from "../cluster-view.js";
import { hasMajority, replicaCount, requiredAcks, waitForQuorum } from "../write/quorum.js";
import type { ReadRepairer } from "./read-repair.js";
import type { ReplicaApplier } from "../replica-applier.js";
import { quotedKey } from "../../core/key-check.js";
import { isCounterValue } from "../../core/counter-state.js";
import { mergeCounterRecord } from "../counter-merge.js";

export interface ReaderDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly view: ClusterView;
  readonly transport: PeerTransport;
  readonly repairer: ReadRepairer;
  readonly applier: ReplicaApplier;
  readonly metrics: Metrics;
  readonly replication: number;
  /** True when this node's own copies count towards its quorum reads (quorum-vote.ts). */
  readonly votes: () => boolean;
}

interface Answer {
  readonly id: string;
  readonly rec: VersionedRecord | undefined;
  /** The answer counts towards the quorum (see the file comment). */
  readonly counts: boolean;
}

function countsForQuorum(a: Answer): boolean {
  return a.counts;
}

/** A record as a client read sees it: live and unexpired, or absent. */
export function liveItemOf(rec: VersionedRecord | undefined, nowMs: number): LiveItem | undefined {
  if (!isLiveAt(rec, nowMs)) return undefined;
  return { key: rec.key, value: rec.value, version: rec.version, origin: rec.origin, lastUpdatedMs: rec.lastUpdatedMs, expiresAtMs: rec.expiresAtMs };
}

export class Reader {
  private readonly gets: PeerBatcher<string, HeldRecord>;

  constructor(private readonly deps: ReaderDeps) {
    // Answers are cut by bytes on the answering side (a prefix), so keys count by their own size.
    this.gets = new PeerBatcher(
      (peer, keys) => this.getAll(peer, keys),
      batchOptions(PEER_BATCHING.get, (key: string) => key.length * 3, deps.timers, () => deps.metrics.inc("dist.peer.queue_overflow")),
    );
  }

  get calls(): number {
    return this.gets.calls;
  }

  /** Records of `keys` from a peer, asking again while it answers only a prefix (size budget). */
  private async getAll(peer: PeerRef, keys: string[]): Promise<HeldRecord[]> {
    const out: HeldRecord[] = [];
    while (out.length < keys.length) {
      const part = await this.deps.transport.get(peer, keys.slice(out.length));
      if (part.length === 0) throw new CacheError("INTERNAL", `peer ${peer.id} answered no record for ${keys.length - out.length} keys`);
      out.push(...part);
    }
    return out;
  }

  async read(key: string, level: ConsistencyLevel): Promise<ReadResult> {
    return this.readNow(key, level);
  }

  /**
   * Like read, but a ONE read that this node answers from its own settled copy returns the
   * result itself, without a promise (the client hot path); every other read returns a promise.
   */
  readNow(key: string, level: ConsistencyLevel): ReadResult | Promise<ReadResult> {
    const { store, selfId, view } = this.deps;
    const owners = view.ring().ownersOf(key);
    if (level !== "one") return this.readQuorum(key, owners, level).then((item) => ({ item, owners }));
    if (owners.ids.includes(selfId)) {
      const local = store.get(key);
      // The hot path: no promise. Hits and misses are counted in store.counters where decided.
      if (local !== undefined || !view.unsettled()) return { item: local, owners };
      return this.readPastLocalMiss(key, owners).then((item) => ({ item, owners }));
    }
    return this.readRemote(key, owners).then((item) => ({ item, owners }));
  }


  /** A ONE read of a key this node does not own: the first reachable owner answers. */
  private async readRemote(key: string, owners: Owners): Promise<LiveItem | undefined> {
    const { view } = this.deps;
    let lastError: unknown;
    let reached = false;
    // While data may be moving, an owner's "absent" is not conclusive (a new owner may not have
    // its copy yet): ask the next owners too and keep the newest record.
    const conclusive = !view.unsettled();
    let best: VersionedRecord | undefined;
    // Suspect owners are tried last (a stable sort keeps the ring order otherwise).
    const order = [...owners.ids].sort((a, b) => Number(view.suspect(a)) - Number(view.suspect(b)));
    for (const id of order) {
      const peer = view.peer(id);
      if (!peer) continue;
      try {
        const rec = (await this.gets.enqueue(peer, key)).record;
        reached = true;
        if (rec && (!best || compareVersions(rec.version, rec.origin, best.version, best.origin) > 0)) best = rec;
        if (conclusive || rec) break;
      } catch (err) {
        lastError = err;
      }
    }
    if (reached) {
      const item = liveItemOf(best, this.deps.clock.nowMs());
      this.count(item !== undefined);
      return item;
    }
    throw new CacheError("UNAVAILABLE", `no owner of key ${quotedKey(key)} could be reached`, { owners: [...owners.ids] }, { cause: lastError });
  }

  /**
   * A local miss while data may still be moving (after a restart, a ring change or during a
   * rebalance): ask the other owners and keep the newest answer, this node's own record (a
   * tombstone, or an expired value) included, so a read never answers a value older than a
   * tombstone held here. A newer answer is stored here (this node owns the key) and served.
   */
  private async readPastLocalMiss(key: string, owners: Owners): Promise<LiveItem | undefined> {
    const { selfId, view } = this.deps;
    const answers = await Promise.all(
      owners.ids
        .filter((id) => id !== selfId)
        .map(async (id): Promise<Answer> => {
          const peer = view.peer(id);
          if (!peer) return { id, rec: undefined, counts: false };
          try {
            const held = await this.gets.enqueue(peer, key);
            return { id, rec: held.record, counts: held.counts };
          } catch {
            return { id, rec: undefined, counts: false };
          }
        }),
    );
    const mine = this.deps.store.peek(key);
    const best = newest([{ id: selfId, rec: mine, counts: true }, ...answers]);
    if (!best) return undefined;
    if (best !== mine) this.deps.applier.apply(best, "read-fallback");
    return liveItemOf(best, this.deps.clock.nowMs());
  }

  private async readQuorum(key: string, owners: Owners, level: ConsistencyLevel): Promise<LiveItem | undefined> {
    const chosen = await this.newestRecord(key, owners, level);
    const item = liveItemOf(chosen, this.deps.clock.nowMs());
    this.count(item !== undefined);
    return item;
  }

  /**
   * The newest record of `key` (tombstones and expired values included) among `level` owners,
   * this node's own copy among them when it owns the key; owners that answered with an older copy
   * or none are repaired, this node included. The primary of a conditional write reads this way
   * when it is unsure its own copy is the newest. QUORUM_FAILED when too few owners answer.
   */
  async newestRecord(key: string, owners: Owners, level: ConsistencyLevel): Promise<VersionedRecord | undefined> {
    const { store, selfId, view } = this.deps;
    const known = view.knownCount();
    const need = requiredAcks(level, replicaCount(this.deps.replication, known));
    // The minority side of a partition may have re-owned keys it never held, or missed deletes
    // (the majority acknowledged them on owners it cannot see): its quorum answer is no better
    // than ONE. Only alive members count: suspect ones are already unreachable, and waiting until
    // they are declared dead left a window in which the minority answered deleted values.
    const alive = view.aliveCount();
    if (!hasMajority(alive, known)) {
      this.deps.metrics.inc("dist.read.quorum_failures");
      throw new CacheError("QUORUM_FAILED", `read needs ${level} but this node sees only ${alive} of ${known} known nodes alive: it may be on the minority side`, {
        consistency: level,
        visible_nodes: alive,
        known_nodes: known,
      });
    }
    const inHand: Answer[] = [];
    const calls: Array<Promise<Answer>> = [];
    for (const id of owners.ids) {
      if (id === selfId) {
        inHand.push({ id, rec: store.peek(key), counts: this.deps.votes() });
        continue;
      }
      const peer = view.peer(id);
      if (peer) calls.push(this.gets.enqueue(peer, key).then((held) => ({ id, rec: held.record, counts: held.counts })));
    }
    const wait = await waitForQuorum(calls, need, inHand, countsForQuorum);
    if (!wait.reached) {
      const counted = wait.answers.filter(countsForQuorum).length;
      const abstained = wait.answers.length - counted;
      this.deps.metrics.inc("dist.read.quorum_failures");
      if (abstained > 0) this.deps.metrics.inc("dist.read.abstained_failures");
      const because = abstained > 0 ? ` (${abstained} more answered without counting: not an owner in their ring view, or not caught up)` : "";
      throw new CacheError("QUORUM_FAILED", `read reached ${counted} of the ${need} owners its ${level} consistency needs${because}`, {
        consistency: level,
        answered: wait.answers.length,
        required: need,
        ...(abstained > 0 ? { counted, abstained } : {}),
      });
    }
    const chosen = this.withCounterAnswers(newest(wait.answers), wait.answers);
    for (const a of wait.answers) this.repairIfStale(a, chosen);
    // Owners that answer after the quorum are repaired too.
    void wait.late.then((late) => {
      for (const a of late) this.repairIfStale(a, chosen);
    });
    return chosen;
  }

  /**
   * The newest copy, with the other answers' counter slots merged in when it is a counter: a copy
   * under a newer version (another writer's increment, or a merge) may lack an increment
   * other owners acknowledged, and the newest by version alone hid it (a review's suspicion,
   * reproduced: an increment acknowledged at QUORUM read back one short). A merged state no
   * owner holds is stamped just above the copies it joins (counter-merge.ts), so the repairs that
   * follow take it to every owner.
   */
  private withCounterAnswers(chosen: VersionedRecord | undefined, answers: readonly Answer[]): VersionedRecord | undefined {
    if (chosen === undefined || chosen.tombstone || !isCounterValue(chosen.value)) return chosen;
    let best = chosen;
    for (const a of answers) {
      if (a.rec === undefined || a.rec === chosen) continue;
      const m = mergeCounterRecord(a.rec, best, this.deps.selfId);
      if (m.kind === "store") best = m.record;
    }
    return best;
  }

  /**
   * Sends `chosen` to an owner whose answer was older or empty, whether its answer counted or not
   * (one that no longer owns the key drops the repair: its ownership guard).
   */
  private repairIfStale(a: Answer, chosen: VersionedRecord | undefined): void {
    if (!chosen) return;
    if (a.rec && compareVersions(a.rec.version, a.rec.origin, chosen.version, chosen.origin) >= 0) return;
    if (a.id === this.deps.selfId) {
      this.deps.applier.apply(chosen, "read-repair");
      return;
    }
    const peer = this.deps.view.peer(a.id);
    if (peer) this.deps.repairer.repair(peer, chosen);
  }

  private count(hit: boolean): void {
    if (hit) this.deps.store.counters.hits++;
    else this.deps.store.counters.misses++;
  }
}

function newest(answers: readonly Answer[]): VersionedRecord | undefined {
  let best: VersionedRecord | undefined;
  for (const a of answers) {
    if (a.rec && (!best || compareVersions(a.rec.version, a.rec.origin, best.version, best.origin) > 0)) best = a.rec;
  }
  return best;
}

export type { PeerRef };
