// Fault injection around any transport: seeded random drops, delays and partitions. A failing
// simulation replays exactly from its seed. Drops count dist.chaos.drops, delays
// dist.chaos.latencies (on the calling node's metrics).
import { sleep, type Timers } from "../core/clock.js";
import type { Random } from "../core/random.js";
import type { Metrics } from "../observability/index.js";
import type { VersionedRecord } from "../store/index.js";
import { NotDeliveredError } from "./delivery.js";
import type { PeerTransport } from "./peer-transport.js";
import type { ForwardRequest, LeaseRelease, LeaseRequest, OwnerChecks, PeerMember, PeerRef, TouchPush } from "./types.js";

/** Fault settings shared by every node of a simulated network. */
export class Chaos {
  private groups: Array<Set<string>> = [];
  private readonly down = new Set<string>();
  /** Directed links ("from>to") whose data calls fail while probes, gossip and syncs pass. */
  private readonly dataCuts = new Set<string>();
  dropRate = 0;
  delayMs = 0;
  /** Extra random delay, up to this many ms. */
  jitterMs = 0;

  constructor(readonly random: Random, readonly timers: Timers) {}

  /** Splits the nodes into groups that cannot reach each other; unlisted nodes reach everyone. */
  partition(...groups: string[][]): void {
    this.groups = groups.map((g) => new Set(g));
  }

  /** Cuts one node off from every other node. */
  isolate(id: string): void {
    this.down.add(id);
  }

  /** Reconnects one isolated node. */
  reconnect(id: string): void {
    this.down.delete(id);
  }

  /**
   * Fails the data calls (forward, set, remove, get, inspect) from `from` to `to` only: the link
   * is up for failure detection, so writes through `from` are promoted or hinted instead.
   */
  cutData(from: string, to: string): void {
    this.dataCuts.add(`${from}>${to}`);
  }

  /** Restores the data calls of one directed link. */
  restoreData(from: string, to: string): void {
    this.dataCuts.delete(`${from}>${to}`);
  }

  /** Removes every partition, isolation and data cut. */
  heal(): void {
    this.groups = [];
    this.down.clear();
    this.dataCuts.clear();
  }

  /** True when the data calls from `from` to `to` are cut (cutData). */
  dataCut(from: string, to: string): boolean {
    return this.dataCuts.has(`${from}>${to}`);
  }

  /** True when `from` cannot reach `to`. */
  blocked(from: string, to: string): boolean {
    if (from === to) return false;
    if (this.down.has(from) || this.down.has(to)) return true;
    const gf = this.groups.find((g) => g.has(from));
    const gt = this.groups.find((g) => g.has(to));
    return gf !== undefined && gt !== undefined && gf !== gt;
  }
}

export class ChaosTransport implements PeerTransport {
  constructor(
    private readonly inner: PeerTransport,
    private readonly chaos: Chaos,
    private readonly selfId: string,
    private readonly metrics: Metrics,
  ) {}

  /** A data call: also fails while the directed link's data calls are cut (Chaos.cutData). */
  private data<T>(to: PeerRef, call: () => Promise<T>): Promise<T> {
    if (this.chaos.dataCut(this.selfId, to.id)) {
      this.metrics.inc("dist.chaos.drops");
      return Promise.reject(new NotDeliveredError(`peer ${to.id}: data calls cut (fault injection)`));
    }
    return this.gate(to, call);
  }

  private async gate<T>(to: PeerRef, call: () => Promise<T>): Promise<T> {
    const c = this.chaos;
    if (c.blocked(this.selfId, to.id) || (c.dropRate > 0 && c.random.next() < c.dropRate)) {
      this.metrics.inc("dist.chaos.drops");
      throw new NotDeliveredError(`peer ${to.id} unreachable (fault injection)`);
    }
    const delay = c.delayMs + (c.jitterMs > 0 ? Math.floor(c.random.next() * c.jitterMs) : 0);
    if (delay > 0) {
      this.metrics.inc("dist.chaos.latencies");
      await sleep(c.timers, delay);
    }
    return call();
  }

  forward(to: PeerRef, req: ForwardRequest) {
    return this.data(to, () => this.inner.forward(to, req));
  }
  set(to: PeerRef, from: string, records: readonly VersionedRecord[], checks?: OwnerChecks) {
    return this.data(to, () => this.inner.set(to, from, records, checks));
  }
  remove(to: PeerRef, from: string, tombstones: readonly VersionedRecord[], checks?: OwnerChecks) {
    return this.data(to, () => this.inner.remove(to, from, tombstones, checks));
  }
  touch(to: PeerRef, from: string, touches: readonly TouchPush[]) {
    return this.gate(to, () => this.inner.touch(to, from, touches));
  }
  get(to: PeerRef, keys: readonly string[]) {
    return this.data(to, () => this.inner.get(to, keys));
  }
  keys(to: PeerRef, cursor: string, limit: number, q: string) {
    return this.gate(to, () => this.inner.keys(to, cursor, limit, q));
  }
  inspect(to: PeerRef, keys: readonly string[], timeoutMs?: number) {
    return this.data(to, () => this.inner.inspect(to, keys, timeoutMs));
  }
  health(to: PeerRef) {
    return this.gate(to, () => this.inner.health(to));
  }
  probe(relay: PeerRef, targetId: string) {
    return this.gate(relay, () => this.inner.probe(relay, targetId));
  }
  gossip(to: PeerRef, from: string, members: readonly PeerMember[]) {
    return this.gate(to, () => this.inner.gossip(to, from, members));
  }
  merkleRoot(to: PeerRef, requester: string, leafCount: number, pulledThroughMs: number) {
    return this.gate(to, () => this.inner.merkleRoot(to, requester, leafCount, pulledThroughMs));
  }
  merkleLeaves(to: PeerRef, requester: string, leafCount: number) {
    return this.gate(to, () => this.inner.merkleLeaves(to, requester, leafCount));
  }
  merkleRange(to: PeerRef, requester: string, leafCount: number, leaves: readonly number[], cursor: string) {
    return this.gate(to, () => this.inner.merkleRange(to, requester, leafCount, leaves, cursor));
  }
  drain(to: PeerRef) {
    return this.gate(to, () => this.inner.drain(to));
  }
  handOffHints(to: PeerRef, from: string, target: PeerRef, records: readonly VersionedRecord[]) {
    return this.gate(to, () => this.inner.handOffHints(to, from, target, records));
  }
  lease(to: PeerRef, req: LeaseRequest) {
    return this.gate(to, () => this.inner.lease(to, req));
  }
  releaseLease(to: PeerRef, req: LeaseRelease) {
    return this.gate(to, () => this.inner.releaseLease(to, req));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
