// A quorum read counts only answers that count (GetResult.abstains unset) and its own copy only
// while this node votes; an answer that does not count is still weighed (a newer record wins) and
// too few that count is QUORUM_FAILED with details.counted and details.abstained (answered: all answers). Reader over a fake transport.
import { expect } from "chai";
import { Reader, ReadRepairer, ReplicaApplier, VersionClock, type ClusterView } from "../../../../src/cluster/index.js";
import { CacheError } from "../../../../src/core/errors.js";
import { recordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import { HashRing } from "../../../../src/ring/index.js";
import { ShardedStore, type VersionedRecord } from "../../../../src/store/index.js";
import type { HeldRecord, PeerRef, PeerTransport } from "../../../../src/transport/index.js";
import { rec, text } from "../../../sim/data-path-fixtures.js";
import { ManualClock } from "../../../helpers/manual-clock.js";

const BASE = Date.UTC(2026, 0, 1) * 1000;
const OLD = rec("k", "old", BASE + 1, "self");
const NEWER = rec("k", "newer", BASE + 2, "p1");
const TOMB: VersionedRecord = { ...rec("k", "", BASE + 3, "p2"), tombstone: true };

/** Peers' answers for "k": a held record, or "down" (the call fails). */
type PeerAnswer = HeldRecord | "down";

function reader(answers: Record<"p1" | "p2", PeerAnswer>, own: VersionedRecord | undefined, votes = true) {
  const clock = new ManualClock();
  const ring = HashRing.build(["self", "p1", "p2"], 3);
  const transport = {
    async get(to: PeerRef, keys: readonly string[]) {
      const a = answers[to.id as "p1" | "p2"];
      if (a === "down") throw new CacheError("UNAVAILABLE", `${to.id} unreachable`);
      return keys.map(() => a);
    },
    async set() {
      return [];
    },
  } as unknown as PeerTransport;
  const peers = ["p1", "p2"].map((id) => ({ id, address: `${id}:7946` }));
  const view: ClusterView = {
    selfId: "self",
    ring: () => ring,
    peer: (id) => peers.find((p) => p.id === id),
    alivePeers: () => peers,
    ringPeers: () => peers,
    suspect: () => false,
    knownCount: () => 3,
    notDeadCount: () => 3,
    aliveCount: () => 3,
    unsettled: () => false,
  };
  const metrics = new Metrics();
  const logger = recordingLogger("error");
  const store = new ShardedStore({ shards: 4, capacity: 1000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 20, clock, metrics });
  if (own) store.apply(own);
  const repairer = new ReadRepairer({ transport, selfId: "self", metrics, logger, timers: clock, batchSize: 0, intervalMs: 100 });
  const applier = new ReplicaApplier({ selfId: "self", store, versions: new VersionClock(clock), clock, metrics, logger, ring: () => ring, versionFloor: () => 0 });
  return new Reader({ selfId: "self", store, clock, timers: clock, view, transport, repairer, applier, metrics, replication: 3, votes: () => votes });
}

async function outcome(r: Reader): Promise<string> {
  try {
    const { item } = await r.read("k", "quorum");
    return item ? (text(item.value) ?? "") : "absent";
  } catch (e) {
    if (!(e instanceof CacheError)) throw e;
    return `${e.code} ${JSON.stringify(e.details)}`;
  }
}

describe("cluster/read: what a quorum read counts", () => {
  it("an answer that abstains (a former owner's) does not make up the quorum with this node's copy: QUORUM_FAILED, details.counted and abstained", async () => {
    const r = reader({ p1: { record: OLD, counts: false }, p2: "down" }, OLD);
    expect(await outcome(r)).to.equal('QUORUM_FAILED {"consistency":"quorum","answered":2,"required":2,"counted":1,"abstained":1}');
  });

  it("an answer that counts makes the quorum, and its newer tombstone is the answer", async () => {
    const r = reader({ p1: { record: OLD, counts: false }, p2: { record: TOMB, counts: true } }, OLD);
    expect(await outcome(r)).to.equal("absent");
  });

  it("this node's own copy does not count while it does not vote", async () => {
    const r = reader({ p1: { record: OLD, counts: true }, p2: "down" }, OLD, false);
    expect(await outcome(r)).to.equal('QUORUM_FAILED {"consistency":"quorum","answered":2,"required":2,"counted":1,"abstained":1}');
  });

  it("an answer that abstains is still weighed: its newer record wins over the counted ones", async () => {
    const r = reader({ p1: { record: NEWER, counts: false }, p2: { record: OLD, counts: true } }, OLD);
    expect(await outcome(r)).to.equal("newer");
  });
});
