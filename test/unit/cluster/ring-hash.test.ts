// The ring and the Merkle leaves hash keys with hash32, which every node computes alike, and never
// with the store's own hash, which is keyed per process (src/core/keyed-hash.ts). Two stores with
// different hash keys hold the same records here: what a node tells or sends its peers about them
// (Merkle summaries and range pages, rebalance moves, the ownership census) must not differ, or
// nodes would compare different leaves and send keys to the wrong owners.
import { expect } from "chai";
import { MerkleScan } from "../../../src/cluster/anti-entropy/merkle-scan.js";
import { MerkleBuilder } from "../../../src/cluster/anti-entropy/merkle.js";
import { MIGRATION_METRICS, HintQueue, Rebalancer, type ClusterView } from "../../../src/cluster/index.js";
import { OwnershipCensus } from "../../../src/cluster/ownership-census.js";
import { hash32 } from "../../../src/core/hash.js";
import type { HashSeed } from "../../../src/core/keyed-hash.js";
import { recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { HashRing } from "../../../src/ring/index.js";
import { ShardedStore, type VersionedRecord } from "../../../src/store/index.js";
import { OTHER_HASH_SEED, TEST_HASH_SEED } from "../../helpers/hash-seed.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { RecordingTransport } from "../../helpers/recording-transport.js";

const SELF = "n1";
const THREE = HashRing.build(["n1", "n2", "n3"], 2);
const FOUR = HashRing.build(["n1", "n2", "n3", "n4"], 2);
const LEAVES = 16;

/** 600 records, one in ten a tombstone, in a store hashing with `hashSeed`. */
function storeWith(hashSeed: HashSeed, clock: ManualClock): ShardedStore {
  const store = new ShardedStore({ shards: 8, capacity: 10_000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 26, hashSeed, clock, metrics: new Metrics() });
  const version = clock.nowMs() * 1000;
  for (let i = 0; i < 600; i++) {
    const tombstone = i % 10 === 0;
    store.apply({ key: `key-${i}`, value: tombstone ? "" : `v${i}`, version: version + i, origin: SELF, lastUpdatedMs: 0, expiresAtMs: 0, tombstone });
  }
  return store;
}

function bothStores(): { clock: ManualClock; stores: ShardedStore[] } {
  const clock = new ManualClock();
  const stores = [storeWith(TEST_HASH_SEED, clock), storeWith(OTHER_HASH_SEED, clock)];
  expect(stores[0]!.shardOf("key-1") !== stores[0]!.shardOf("key-2") || stores[0]!.shardOf("key-1") !== stores[1]!.shardOf("key-1"), "the stores place keys differently").to.equal(true);
  return { clock, stores };
}

function merkleScan(store: ShardedStore, clock: ManualClock): MerkleScan {
  return new MerkleScan({ selfId: SELF, store, clock, ring: () => THREE, yieldToLoop: () => Promise.resolve(), chunkSize: 64, tombstoneTtlMs: 600_000, reportedBy: () => 0 });
}

/** A view of a two-state cluster: `ring()` answers what the test sets. */
function viewOf(ring: () => HashRing): ClusterView {
  const peer = (id: string) => (id === SELF ? undefined : { id, address: `${id}:7946` });
  return {
    selfId: SELF,
    ring,
    peer,
    alivePeers: () => ring().nodes.filter((id) => id !== SELF).map((id) => ({ id, address: `${id}:7946` })),
    ringPeers: () => ring().nodes.filter((id) => id !== SELF).map((id) => ({ id, address: `${id}:7946` })),
    suspect: () => false,
    knownCount: () => ring().nodes.length,
    notDeadCount: () => ring().nodes.length,
    aliveCount: () => ring().nodes.length,
    unsettled: () => false,
  };
}

/** What a rebalance from THREE to FOUR sends, as "peer:key" sorted, and the keys it releases. */
async function rebalanceMoves(store: ShardedStore, clock: ManualClock): Promise<{ sent: string[]; kept: number }> {
  let ring = THREE;
  const transport = new RecordingTransport();
  const metrics = new Metrics();
  const logger = recordingLogger("error");
  const migrations = new HintQueue({ clock, metrics, logger, limits: { ttlMs: 30_000, maxPerNode: 10_000, maxBytes: 1 << 26 }, names: MIGRATION_METRICS });
  const rebalancer = new Rebalancer({
    selfId: SELF, store, view: viewOf(() => ring), transport: transport.asTransport(), migrations, metrics, logger, clock, timers: clock,
    intervalMs: 100, batchSize: 50, maxConcurrent: 2, removalGraceMs: 0, holdMaxMs: 600_000, yieldToLoop: () => Promise.resolve(),
  });
  ring = FOUR;
  for (let i = 0; i < 100 && rebalancer.busy; i++) await rebalancer.runRebalanceTick();
  expect(rebalancer.busy, "the rebalance finished").to.equal(false);
  const sent = transport.sent.flatMap((c) => c.records.map((r) => `${c.to}:${r.key}`)).sort();
  return { sent, kept: store.items + store.tombstones };
}

describe("cluster: the ring hash is hash32, whatever the store's hash key", () => {
  it("Merkle summaries of the same records are equal, leaf by leaf, and leaves go by hash32", async () => {
    const { clock, stores } = bothStores();
    const [a, b] = await Promise.all(stores.map((s) => merkleScan(s, clock).summarize("n2", LEAVES)));
    // The compared set (keys n1 and n2 both own), each record in the leaf of its key's hash32.
    const want = new MerkleBuilder(LEAVES);
    for (let i = 0; i < 600; i++) {
      const key = `key-${i}`;
      const owners = THREE.ownersOf(key).ids;
      if (owners.includes(SELF) && owners.includes("n2")) want.add(stores[0]!.peek(key) as VersionedRecord, hash32(key));
    }
    expect(a!.leaves()).to.deep.equal(want.leaves());
    expect(b!.leaves()).to.deep.equal(want.leaves());
    expect(a!.records).to.be.above(100);
  });

  it("Merkle range pages of the same leaves hold the same records", async () => {
    const { clock, stores } = bothStores();
    const pages = await Promise.all(stores.map((s) => merkleScan(s, clock).range("n2", LEAVES, [0, 5, 11], "")));
    const keys = pages.map((p) => p.records.map((r) => r.key).sort());
    expect(keys[0]).to.have.length.above(10);
    expect(keys[1]).to.deep.equal(keys[0]);
  });

  it("a rebalance sends the same records to the same nodes and releases the same copies", async () => {
    const { clock, stores } = bothStores();
    const a = await rebalanceMoves(stores[0]!, clock);
    const b = await rebalanceMoves(stores[1]!, clock);
    expect(a.sent).to.have.length.above(50);
    expect(b).to.deep.equal(a);
  });

  it("the ownership census counts the same records in the same roles", async () => {
    const { clock, stores } = bothStores();
    const counts = [];
    for (const store of stores) {
      const census = new OwnershipCensus({ selfId: SELF, store, view: { ring: () => THREE }, clock, timers: clock, yieldToLoop: () => Promise.resolve() });
      await census.runCensusTick();
      counts.push(census.last);
    }
    expect(counts[0]?.primary.items).to.be.above(0);
    expect(counts[1]).to.deep.equal(counts[0]);
  });
});
