// A cluster in one process: every node registers its PeerEndpoint under its dist address and
// transports call endpoints directly. Calls are asynchronous (they never run the receiver in the
// caller's stack), like a network. A node that is not registered is unreachable.
import type { VersionedRecord } from "../store/index.js";
import { checkAnswerer } from "./answers.js";
import { NotDeliveredError } from "./delivery.js";
import type { PeerEndpoint, PeerTransport } from "./peer-transport.js";
import type { ForwardRequest, LeaseOutcome, LeaseRelease, LeaseRequest, OwnerChecks, PeerMember, PeerRef, TouchPush } from "./types.js";

export class InMemoryNetwork {
  private readonly endpoints = new Map<string, PeerEndpoint>();

  /** Makes `endpoint` reachable at `address`. */
  register(address: string, endpoint: PeerEndpoint): void {
    this.endpoints.set(address, endpoint);
  }

  /** Makes `address` unreachable (the node crashed or stopped). */
  unregister(address: string): void {
    this.endpoints.delete(address);
  }

  /** A transport for the node `selfId`. */
  transport(): PeerTransport {
    return new InMemoryTransport(this);
  }

  endpointAt(address: string): PeerEndpoint {
    const e = this.endpoints.get(address);
    if (!e) throw new NotDeliveredError(`peer ${address} is unreachable`);
    return e;
  }
}

/** Copies records as a wire would: the receiver never shares objects with the sender. */
function copyRecords(records: readonly VersionedRecord[]): VersionedRecord[] {
  return records.map((r) => ({ ...r }));
}

class InMemoryTransport implements PeerTransport {
  constructor(private readonly network: InMemoryNetwork) {}

  private async call<T>(to: PeerRef, fn: (e: PeerEndpoint) => T | Promise<T>): Promise<T> {
    await Promise.resolve();
    return fn(this.network.endpointAt(to.address));
  }

  /** A call whose answer counts only from the node addressed (a reused address answers as another). */
  private callAddressed<T>(to: PeerRef, fn: (e: PeerEndpoint) => T | Promise<T>): Promise<T> {
    return this.call(to, (e) => {
      checkAnswerer(e.health().node, to);
      return fn(e);
    });
  }

  forward(to: PeerRef, req: ForwardRequest) {
    return this.callAddressed(to, (e) => e.forward({ ...req, writes: req.writes.map((w) => ({ ...w })) }));
  }
  set(to: PeerRef, from: string, records: readonly VersionedRecord[], checks?: OwnerChecks) {
    return this.callAddressed(to, (e) => e.applySet(from, copyRecords(records), checks && checks.map((c) => c && [...c])));
  }
  remove(to: PeerRef, from: string, tombstones: readonly VersionedRecord[], checks?: OwnerChecks) {
    return this.callAddressed(to, (e) => e.applyRemove(from, copyRecords(tombstones), checks && checks.map((c) => c && [...c])));
  }
  touch(to: PeerRef, from: string, touches: readonly TouchPush[]) {
    return this.callAddressed(to, (e) => e.applyTouches(from, touches.map((t) => ({ ...t, owners: [...t.owners] }))));
  }
  get(to: PeerRef, keys: readonly string[]) {
    return this.call(to, (e) => e.getRecords([...keys]).map((h) => (h.record ? { record: { ...h.record }, counts: h.counts } : h)));
  }
  keys(to: PeerRef, cursor: string, limit: number, q: string) {
    return this.call(to, (e) => e.keysPage(cursor, limit, q));
  }
  inspect(to: PeerRef, keys: readonly string[]) {
    return this.callAddressed(to, (e) => e.inspectRecords([...keys]).map((m) => ({ ...m })));
  }
  health(to: PeerRef) {
    return this.call(to, (e) => e.health());
  }
  probe(relay: PeerRef, targetId: string) {
    return this.call(relay, (e) => e.probe(targetId));
  }
  gossip(to: PeerRef, from: string, members: readonly PeerMember[]) {
    // As over the wire: the receiver merges the push, and its answer counts only from the node addressed.
    return this.call(to, (e) => {
      const list = e.gossip(from, members.map((m) => ({ ...m })));
      checkAnswerer(e.health().node, to);
      return list;
    });
  }
  merkleRoot(to: PeerRef, requester: string, leafCount: number, pulledThroughMs: number) {
    return this.call(to, (e) => e.merkleRoot(requester, leafCount, pulledThroughMs));
  }
  merkleLeaves(to: PeerRef, requester: string, leafCount: number) {
    return this.call(to, (e) => e.merkleLeaves(requester, leafCount));
  }
  merkleRange(to: PeerRef, requester: string, leafCount: number, leaves: readonly number[], cursor: string) {
    return this.call(to, (e) => e.merkleRange(requester, leafCount, [...leaves], cursor));
  }
  drain(to: PeerRef) {
    return this.call(to, (e) => e.drain());
  }
  handOffHints(to: PeerRef, from: string, target: PeerRef, records: readonly VersionedRecord[]) {
    return this.call(to, (e) => e.acceptHandOff(from, { ...target }, copyRecords(records)));
  }
  lease(to: PeerRef, req: LeaseRequest) {
    return this.callAddressed(to, async (e): Promise<LeaseOutcome> => {
      const out = await e.lease({ ...req });
      return out.kind === "hit" ? { kind: "hit", record: { ...out.record } } : out;
    });
  }
  releaseLease(to: PeerRef, req: LeaseRelease) {
    return this.callAddressed(to, (e) => e.releaseLease({ ...req }));
  }
  async close(): Promise<void> {}
}
