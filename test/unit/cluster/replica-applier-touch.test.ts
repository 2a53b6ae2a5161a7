// ReplicaApplier.applyTouches: a touch pushed without its value is stored on top of the item it
// names (same value, the touch's version and expiry) only when this node holds exactly that item;
// otherwise nothing changes here and the answer says why (base-missing, stale, duplicate,
// refused). A batch with an invalid touch is refused as a whole before anything is stored.
import { expect } from "chai";
import { ReplicaApplier, VersionClock } from "../../../src/cluster/index.js";
import { CacheError } from "../../../src/core/errors.js";
import { recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { HashRing } from "../../../src/ring/index.js";
import { ShardedStore, type VersionedRecord } from "../../../src/store/index.js";
import type { TouchPush } from "../../../src/transport/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function setup(selfId = "self") {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const store = new ShardedStore({ shards: 2, capacity: 1000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 20, clock, metrics });
  const ring = HashRing.build([selfId, "n2", "n3"], 3);
  const applier = new ReplicaApplier({ selfId, store, versions: new VersionClock(clock), clock, metrics, logger: recordingLogger("error"), ring: () => ring, versionFloor: () => 0 });
  const base = clock.nowMs() * 1000;
  const item: VersionedRecord = { key: "k", value: "the value \u00ff", version: base + 1, origin: "n2", lastUpdatedMs: clock.nowMs(), expiresAtMs: clock.nowMs() + 10_000, tombstone: false };
  const touch: TouchPush = {
    key: "k",
    baseVersion: item.version,
    baseOrigin: item.origin,
    version: base + 5,
    origin: "n2",
    expiresAtMs: clock.nowMs() + 60_000,
    lastUpdatedMs: clock.nowMs(),
    owners: ring.ownersOf("k").ids,
  };
  return { clock, metrics, store, ring, applier, item, touch };
}

describe("ReplicaApplier.applyTouches (touches pushed without their values)", () => {
  it("holding the item touched: stores its value with the touch's version, origin and expiry, and counts it", () => {
    const { store, applier, item, touch, metrics } = setup();
    store.apply(item);
    expect(applier.applyTouches([touch])).to.deep.equal([{ kind: "applied", changed: true }]);
    expect(store.peek("k")).to.deep.include({ value: item.value, version: touch.version, origin: touch.origin, expiresAtMs: touch.expiresAtMs, lastUpdatedMs: touch.lastUpdatedMs, tombstone: false });
    expect(metrics.get("dist.replica.touches_in_place")).to.equal(1);
    expect(applier.applyTouches([touch]), "a second delivery holds it already").to.deep.equal([{ kind: "applied", changed: false }]);
  });

  it("the item touched has expired here: the touch still applies on it (the primary saw it live) and makes it live again with the new expiry", () => {
    const { store, applier, item, touch, clock } = setup();
    store.apply(item);
    clock.advance(20_000);
    expect(applier.applyTouches([{ ...touch, expiresAtMs: clock.nowMs() + 60_000 }])[0]).to.deep.equal({ kind: "applied", changed: true });
    expect(store.peek("k")?.value).to.equal(item.value);
  });

  it("persist: expiry 0 applies as no expiry", () => {
    const { store, applier, item, touch } = setup();
    store.apply(item);
    applier.applyTouches([{ ...touch, expiresAtMs: 0 }]);
    expect(store.peek("k")).to.deep.include({ version: touch.version, expiresAtMs: 0 });
  });

  it("no item, another version of it, or a tombstone: base-missing and nothing stored", () => {
    const { store, applier, item, touch } = setup();
    expect(applier.applyTouches([touch])).to.deep.equal([{ kind: "base-missing" }]);
    expect(store.peek("k")).to.equal(undefined);
    const older = { ...item, version: item.version - 1 };
    store.apply(older);
    expect(applier.applyTouches([touch])).to.deep.equal([{ kind: "base-missing" }]);
    expect(store.peek("k")?.version).to.equal(older.version);
    const otherOrigin = setup();
    otherOrigin.store.apply({ ...otherOrigin.item, origin: "n1" });
    expect(otherOrigin.applier.applyTouches([otherOrigin.touch])).to.deep.equal([{ kind: "base-missing" }]);
    const tomb = setup();
    tomb.store.apply({ ...tomb.item, value: "", expiresAtMs: 0, tombstone: true });
    expect(tomb.applier.applyTouches([tomb.touch])).to.deep.equal([{ kind: "base-missing" }]);
    expect(tomb.store.peek("k")?.tombstone, "a touch never resurrects").to.equal(true);
  });

  it("a newer version held here (a write after the touch, or a newer tombstone): stale with it, nothing changed", () => {
    const { store, applier, item, touch, metrics } = setup();
    const newer = { ...item, value: "newer", version: touch.version + 1 };
    store.apply(newer);
    expect(applier.applyTouches([touch])).to.deep.equal([{ kind: "stale", version: newer.version, origin: newer.origin }]);
    expect(store.peek("k")?.value).to.equal("newer");
    expect(metrics.get("dist.version.conflicts")).to.equal(1);
  });

  it("an owner list other than this node's (another ring view): refused, nothing stored", () => {
    const { store, applier, item, touch, metrics } = setup();
    store.apply(item);
    expect(applier.applyTouches([{ ...touch, owners: [...touch.owners].reverse() }])).to.deep.equal([{ kind: "refused", reason: "owners-differ" }]);
    expect(store.peek("k")?.version).to.equal(item.version);
    expect(metrics.get("dist.write.apply_refused")).to.equal(1);
  });

  it("an invalid touch refuses the whole batch with a 400 before anything is stored", () => {
    const { store, applier, item, touch } = setup();
    store.apply(item);
    const bad: Array<[string, Partial<TouchPush>]> = [
      ["base at the touch's version", { baseVersion: touch.version }],
      ["base version 0", { baseVersion: 0 }],
      ["empty base origin", { baseOrigin: "" }],
      ["no owner list", { owners: [] }],
      ["65 owners", { owners: Array.from({ length: 65 }, (_, i) => `n${i}`) }],
      ["bad key", { key: "" }],
      ["version far ahead", { version: touch.version + 25 * 3_600_000_000 }],
      ["bad expiry", { expiresAtMs: -1 }],
    ];
    for (const [what, change] of bad) {
      expect(() => applier.applyTouches([touch, { ...touch, ...change }]), what).to.throw(CacheError).with.property("code", "BAD_REQUEST");
      expect(store.peek("k")?.version, what).to.equal(item.version);
    }
  });
});
