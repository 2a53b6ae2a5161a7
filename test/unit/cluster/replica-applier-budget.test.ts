// ReplicaApplier over a store past its byte budget's overshoot: a pushed record that would add
// bytes is refused ("over-budget": the pusher keeps a hint and replays it later) with nothing
// stored; a delete and a record that does not grow a value still land.
import { expect } from "chai";
import { ReplicaApplier, VersionClock } from "../../../src/cluster/index.js";
import { recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { HashRing } from "../../../src/ring/index.js";
import { ShardedStore, type VersionedRecord } from "../../../src/store/index.js";
import { overshootMaxOf } from "../../../src/store/data-budget.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { TEST_HASH_SEED } from "../../helpers/hash-seed.js";

const MiB = 1024 * 1024;

describe("ReplicaApplier over a store past its byte budget", () => {
  it("refuses pushes that add bytes (over-budget, nothing stored), takes deletes and same-size overwrites", () => {
    const clock = new ManualClock();
    const metrics = new Metrics();
    const budget = 2 * MiB;
    // No turn scheduler: nothing trims between the writes, so the store stays past its overshoot.
    const store = new ShardedStore({ shards: 2, capacity: 1_000_000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 20, maxDataBytes: budget, hashSeed: TEST_HASH_SEED, clock, metrics });
    const ring = HashRing.build(["self"], 1);
    const applier = new ReplicaApplier({ selfId: "self", store, versions: new VersionClock(clock), clock, metrics, logger: recordingLogger("error"), ring: () => ring, versionFloor: () => 0 });
    let v = clock.nowMs() * 1000;
    const rec = (key: string, bytes: number, over: Partial<VersionedRecord> = {}): VersionedRecord => ({
      key, value: "s".repeat(bytes), version: ++v, origin: "n2", lastUpdatedMs: clock.nowMs(), expiresAtMs: 0, tombstone: false, ...over,
    });
    for (let i = 0; i < 60_000; i++) store.apply(rec(`small:${i}`, 30));
    const verdicts = Array.from({ length: 12 }, (_, k) => applier.apply(rec(`big:${k}`, 256 * 1024), "push"));
    const refusedAt = verdicts.findIndex((x) => x.kind === "refused");
    expect(refusedAt, "a push is refused once the store is past its overshoot").to.be.above(0);
    expect(verdicts[refusedAt]).to.deep.equal({ kind: "refused", reason: "over-budget" });
    expect(store.peek(`big:${refusedAt}`), "nothing stored").to.equal(undefined);
    expect(store.dataBytes).to.be.at.most(budget + overshootMaxOf(budget) + 256 * 1024 + 16);
    expect(metrics.get("dist.write.over_budget")).to.equal(verdicts.filter((x) => x.kind === "refused").length);
    expect(applier.apply(rec("big:0", 0, { value: "", tombstone: true }), "push"), "a delete lands").to.deep.equal({ kind: "applied", changed: true });
    expect(applier.apply(rec("small:59999", 30), "push"), "a same-size overwrite lands").to.deep.equal({ kind: "applied", changed: true });
  });
});
