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
import { TEST_HASH_SEED } from "../../helpers/hash-seed.js";

function setup(selfId = "self") {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const store = new ShardedStore({ shards: 2, capacity: 1000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 20, hashSeed: TEST_HASH_SEED, clock, metrics });
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

  it("the same version from another origin: the tie goes to the smaller origin (stale, a conflict counted) or the touch wins (base-missing), never a duplicate", () => {
    const { store, applier, touch, item, metrics } = setup();
    store.apply({ ...item, version: touch.version, origin: "n1" });
    expect(applier.applyTouches([touch])).to.deep.equal([{ kind: "stale", version: touch.version, origin: "n1" }]);
    expect(metrics.get("dist.version.conflicts")).to.equal(1);
    const later = setup();
    later.store.apply({ ...later.item, version: later.touch.version, origin: "n3" });
    expect(later.applier.applyTouches([later.touch])).to.deep.equal([{ kind: "base-missing" }]);
    expect(later.store.peek("k")?.origin, "nothing stored").to.equal("n3");
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
    const deleted = setup();
    const tomb = { ...deleted.item, value: "", expiresAtMs: 0, tombstone: true, version: deleted.touch.version + 1 };
    deleted.store.apply(tomb);
    expect(deleted.applier.applyTouches([deleted.touch])).to.deep.equal([{ kind: "stale", version: tomb.version, origin: tomb.origin }]);
    expect(deleted.store.peek("k")).to.include({ tombstone: true, version: tomb.version });
  });

  it("a node that does not own the key (its owner list is the sender's, without it): refused by the ownership guard, not counted as applied in place", () => {
    const clock = new ManualClock();
    const metrics = new Metrics();
    const store = new ShardedStore({ shards: 2, capacity: 1000, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 1 << 20, hashSeed: TEST_HASH_SEED, clock, metrics });
    const ring = HashRing.build(["self", "n2", "n3"], 2);
    const applier = new ReplicaApplier({ selfId: "self", store, versions: new VersionClock(clock), clock, metrics, logger: recordingLogger("error"), ring: () => ring, versionFloor: () => 0 });
    let key = "k0";
    for (let i = 0; ring.isOwner(key, "self"); i++) key = `k${i}`;
    const base = clock.nowMs() * 1000;
    store.apply({ key, value: "v", version: base + 1, origin: "n2", lastUpdatedMs: clock.nowMs(), expiresAtMs: 0, tombstone: false });
    const t: TouchPush = { key, baseVersion: base + 1, baseOrigin: "n2", version: base + 2, origin: "n2", expiresAtMs: 0, lastUpdatedMs: clock.nowMs(), owners: ring.ownersOf(key).ids };
    expect(applier.applyTouches([t])).to.deep.equal([{ kind: "refused", reason: "not-owner" }]);
    expect(metrics.get("dist.replica.touches_in_place")).to.equal(0);
  });

  it("bounds: more than 512 touches is 400; one call copies at most 8 MiB of values (the first touch always), the rest answer base-missing", () => {
    const { store, applier, item, touch } = setup();
    expect(() => applier.applyTouches(new Array<TouchPush>(513).fill(touch)))
      .to.throw(CacheError)
      .with.property("code", "BAD_REQUEST");
    const big = "b".repeat(5 * 1024 * 1024);
    const keys = ["big-1", "big-2", "big-3"];
    const ring = HashRing.build(["self", "n2", "n3"], 3);
    for (const key of keys) store.apply({ ...item, key, value: big });
    const touches = keys.map((key) => ({ ...touch, key, owners: ring.ownersOf(key).ids }));
    expect(applier.applyTouches(touches).map((v) => v.kind)).to.deep.equal(["applied", "base-missing", "base-missing"]);
    expect(store.peek("big-1")?.version).to.equal(touch.version);
    expect(store.peek("big-2")?.version).to.equal(item.version);
    // A single touch larger than the budget still applies (it is the first of its call).
    const huge = "h".repeat(9 * 1024 * 1024);
    store.apply({ ...item, key: "huge", value: huge });
    expect(applier.applyTouches([{ ...touch, key: "huge", owners: ring.ownersOf("huge").ids }]).map((v) => v.kind)).to.deep.equal(["applied"]);
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
