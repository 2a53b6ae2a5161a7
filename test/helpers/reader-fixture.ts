// A Reader over a fake transport on a ManualClock, for unit tests: node "self" with fixed peers,
// every one alive and settled, and an empty store (4 shards).
import { Reader, ReadRepairer, ReplicaApplier, VersionClock, type ClusterView } from "../../src/cluster/index.js";
import { recordingLogger } from "../../src/log/index.js";
import { Metrics } from "../../src/observability/index.js";
import type { HashRing } from "../../src/ring/index.js";
import { ShardedStore } from "../../src/store/index.js";
import type { PeerTransport } from "../../src/transport/index.js";
import { ManualClock } from "./manual-clock.js";
import { TEST_HASH_SEED } from "./hash-seed.js";

export interface ReaderFixture {
  readonly reader: Reader;
  readonly store: ShardedStore;
  readonly clock: ManualClock;
}

/** A reader on "self" whose peers are `peerIds` (addresses `<id>:7946`), calling them through `transport`. */
export function readerFixture(o: { transport: PeerTransport; ring: HashRing; peerIds: readonly string[]; replication: number; votes?: () => boolean }): ReaderFixture {
  const clock = new ManualClock();
  const peers = o.peerIds.map((id) => ({ id, address: `${id}:7946` }));
  const view: ClusterView = {
    selfId: "self",
    ring: () => o.ring,
    peer: (id) => peers.find((p) => p.id === id),
    alivePeers: () => peers,
    ringPeers: () => peers,
    suspect: () => false,
    knownCount: () => peers.length + 1,
    notDeadCount: () => peers.length + 1,
    aliveCount: () => peers.length + 1,
    unsettled: () => false,
  };
  const metrics = new Metrics();
  const logger = recordingLogger("error");
  const store = new ShardedStore({ shards: 4, capacity: 100_000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 64 * 1024 * 1024, hashSeed: TEST_HASH_SEED, clock, metrics });
  const repairer = new ReadRepairer({ transport: o.transport, selfId: "self", metrics, logger, timers: clock, batchSize: 0, intervalMs: 100 });
  const applier = new ReplicaApplier({ selfId: "self", store, versions: new VersionClock(clock), clock, metrics, logger, ring: () => o.ring, versionFloor: () => 0 });
  const reader = new Reader({ selfId: "self", store, clock, timers: clock, view, transport: o.transport, repairer, applier, metrics, replication: o.replication, votes: o.votes ?? (() => true) });
  return { reader, store, clock };
}
