// Shard: one store shard: version-gated apply, making room (makeRoom, evictOne), tombstones and sweeping.
import { expect } from "chai";
import { Applied, LfuPolicy, LruPolicy, type EvictionPolicy, type VersionedRecord } from "../../../src/store/index.js";
import { OriginTable } from "../../../src/store/origin-table.js";
import { Shard } from "../../../src/store/shard.js";
import { tombstoneCost, versionTimeMs } from "../../../src/store/record.js";
import { hash32 } from "../../../src/core/hash.js";

const T0 = Date.UTC(2026, 0, 1);
/** A hybrid-clock version stamped at T0 + `ms` (wall ms x 1000 + counter). */
const at = (ms: number, counter = 0) => (T0 + ms) * 1000 + counter;

function rec(key: string, version: number, over: Partial<Omit<VersionedRecord, "key" | "version">> = {}): VersionedRecord {
  return { key, value: `v-${key}`, version, origin: "n1", lastUpdatedMs: versionTimeMs(version), expiresAtMs: 0, tombstone: false, ...over };
}

function tomb(key: string, version: number, origin = "n1"): VersionedRecord {
  return rec(key, version, { value: "", origin, tombstone: true });
}

/**
 * A shard plus helpers that hash keys the way the store does, and a recorder of evicted keys.
 * The shard evicts only when its store says so (makeRoom): here makeRoom records each call and
 * evicts the shard's victim once the shard holds `limit` live records (never, by default).
 */
function harness(opts: { policy?: EvictionPolicy; share?: number; tombstoneCap?: number; limit?: number } = {}) {
  // The budget is in bytes: `tombstoneCap` tombstones of two-character keys fit it exactly.
  const dropped: number[] = [];
  const shard = new Shard(opts.policy ?? new LruPolicy(), new OriginTable(), opts.share ?? 100, (opts.tombstoneCap ?? 100) * tombstoneCost("t1"), () => dropped.push(1));
  const evicted: string[] = [];
  const onEvict = (slot: number) => void evicted.push(shard.keyAt(slot));
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  /** The shard each makeRoom call for a new item was given. */
  const makeRoomCalls: Shard[] = [];
  /** The replaced value's bytes of each makeRoom call for an overwrite. */
  const overwriteCalls: number[] = [];
  const makeRoom = (s: Shard, _rec: VersionedRecord, replacedBytes?: number) => {
    if (replacedBytes !== undefined) overwriteCalls.push(replacedBytes);
    else makeRoomCalls.push(s);
    if (replacedBytes === undefined && s.live >= limit) s.evictOne(onEvict);
    return true;
  };
  return {
    shard,
    dropped,
    evicted,
    onEvict,
    makeRoomCalls,
    overwriteCalls,
    put: (r: VersionedRecord, nowMs = T0, room: (s: Shard, rec: VersionedRecord, replacedBytes?: number) => boolean = makeRoom) => shard.apply(r, hash32(r.key), nowMs, room),
    find: (key: string) => shard.find(key, hash32(key)),
    liveKeys(nowMs = T0): string[] {
      const out: string[] = [];
      shard.scanLiveKeys(0, nowMs, (k) => (out.push(k), true));
      return out;
    },
  };
}

describe("store/shard Shard", () => {
  it("versionTimeMs() is the wall-clock part of a hybrid-clock version", () => {
    expect(versionTimeMs(at(1234, 999))).to.equal(T0 + 1234);
    expect(versionTimeMs(0)).to.equal(0);
  });

  describe("apply", () => {
    it("stores a new live record as fresh and returns every field from recordAt()", () => {
      const { shard, put, find } = harness();
      const r = rec("a", at(5, 7), { value: "hello", origin: "n2", expiresAtMs: T0 + 1000 });
      expect(put(r)).to.deep.equal({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });
      const slot = find("a");
      expect(slot).to.be.at.least(0);
      expect(shard.isLive(slot)).to.equal(true);
      expect(shard.recordAt(slot)).to.deep.equal({ ...r, lastUpdatedMs: T0 + 5 });
      expect([shard.live, shard.tombstones, shard.bytes, shard.size]).to.deep.equal([1, 0, 5, 1]);
    });

    it("derives lastUpdatedMs from the version, whatever the record carried", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(42), { lastUpdatedMs: 1 }));
      expect(shard.updatedAt(find("a"))).to.equal(T0 + 42);
    });

    it("reports the replaced live value's size when a newer version overwrites it", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(1), { value: "abc" }));
      expect(put(rec("a", at(2), { value: "abcdefg" }))).to.deep.equal({ applied: Applied.Stored, previousLive: true, previousBytes: 3 });
      expect(shard.valueAt(find("a"))).to.equal("abcdefg");
      expect([shard.live, shard.bytes]).to.deep.equal([1, 7]);
    });

    it("ignores an older version (Older) and a duplicate (Duplicate) without changing the record", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(5), { value: "five", origin: "n2" }));
      expect(put(rec("a", at(4), { value: "four" })).applied).to.equal(Applied.Older);
      expect(put(rec("a", at(5), { value: "other", origin: "n3" })).applied).to.equal(Applied.Older);
      expect(put(rec("a", at(5), { value: "same", origin: "n2" })).applied).to.equal(Applied.Duplicate);
      expect(shard.recordAt(find("a"))).to.include({ value: "five", version: at(5), origin: "n2" });
      expect(shard.bytes).to.equal(4);
    });

    it("on a version tie stores the record of the lexicographically smaller origin", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(5), { origin: "n2", value: "x" }));
      expect(put(rec("a", at(5), { origin: "n1", value: "y" })).applied).to.equal(Applied.Stored);
      expect(shard.recordAt(find("a"))).to.include({ origin: "n1", value: "y" });
    });

    it("does not report an expired value as previously live when it is overwritten", () => {
      const { shard, put } = harness();
      put(rec("a", at(1), { value: "old", expiresAtMs: T0 + 10 }));
      expect(put(rec("a", at(2), { value: "new" }), T0 + 10)).to.deep.equal({ applied: Applied.Stored, previousLive: false, previousBytes: 0 });
      expect([shard.live, shard.bytes]).to.deep.equal([1, 3]);
    });

    it("keeps distinct keys apart, also keys of the same length and similar text", () => {
      const { shard, put, find } = harness({ share: 10_000 });
      const keys = Array.from({ length: 2000 }, (_, i) => `key-${i.toString(36)}`);
      for (const k of keys) put(rec(k, at(1), { value: k }));
      for (const k of keys) expect(shard.valueAt(find(k)), k).to.equal(k);
      expect(find("key-")).to.equal(-1);
      expect(shard.size).to.equal(2000);
    });
  });

  describe("tombstones", () => {
    it("a delete turns the live record into a tombstone with no value and no expiry", () => {
      const { shard, put, find, liveKeys } = harness();
      put(rec("a", at(1), { value: "abcd", expiresAtMs: T0 + 1000 }));
      expect(put(tomb("a", at(2)))).to.deep.equal({ applied: Applied.Stored, previousLive: true, previousBytes: 4 });
      const slot = find("a");
      expect(shard.isTombstone(slot)).to.equal(true);
      expect(shard.isLive(slot)).to.equal(false);
      expect(shard.recordAt(slot)).to.include({ tombstone: true, value: "", expiresAtMs: 0, version: at(2) });
      expect([shard.live, shard.tombstones, shard.bytes]).to.deep.equal([0, 1, 0]);
      expect(liveKeys()).to.deep.equal([]);
    });

    it("a tombstone rejects an older set and a newer set revives the key", () => {
      const { shard, put, find } = harness();
      put(tomb("a", at(5)));
      expect(put(rec("a", at(4))).applied).to.equal(Applied.Older);
      expect(shard.isTombstone(find("a"))).to.equal(true);
      expect(put(rec("a", at(6), { value: "back" })).applied).to.equal(Applied.Stored);
      expect(shard.isLive(find("a"))).to.equal(true);
      expect([shard.live, shard.tombstones, shard.bytes]).to.deep.equal([1, 0, 4]);
    });

    it("drops the oldest tombstone when the tombstone cap is reached", () => {
      const { shard, put, find } = harness({ tombstoneCap: 3 });
      for (const [i, k] of ["t1", "t2", "t3", "t4"].entries()) put(tomb(k, at(i)));
      expect(shard.tombstones).to.equal(3);
      expect(find("t1")).to.equal(-1);
      for (const k of ["t2", "t3", "t4"]) expect(shard.isTombstone(find(k)), k).to.equal(true);
    });

    it("a delete of a live key also respects the tombstone cap", () => {
      const { shard, put, find } = harness({ tombstoneCap: 2 });
      put(tomb("t1", at(1)));
      put(tomb("t2", at(1)));
      put(rec("a", at(1)));
      put(tomb("a", at(2)));
      expect(shard.tombstones).to.equal(2);
      expect(find("t1")).to.equal(-1);
      expect(shard.isTombstone(find("a"))).to.equal(true);
    });

    it("a newer tombstone over an older one restarts its age, so it is dropped last", () => {
      const { put, find, shard } = harness({ tombstoneCap: 2 });
      put(tomb("t1", at(1)));
      put(tomb("t2", at(1)));
      put(tomb("t1", at(2)));
      put(tomb("t3", at(3)));
      expect(find("t2")).to.equal(-1);
      expect(shard.isTombstone(find("t1"))).to.equal(true);
      expect(shard.tombstones).to.equal(2);
    });
  });

  describe("makeRoom and evictOne", () => {
    it("calls makeRoom with itself before storing a new live key, while the key is not there yet", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(1)));
      const seen: Array<{ same: boolean; live: number; found: number }> = [];
      put(rec("b", at(1)), T0, (s) => seen.push({ same: s === shard, live: s.live, found: find("b") }) > 0);
      expect(seen).to.deep.equal([{ same: true, live: 1, found: -1 }]);
      expect(shard.live).to.equal(2);
    });

    it("calls makeRoom before reviving a tombstone, while the key is still a tombstone", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(1)));
      put(tomb("a", at(2)));
      const seen: Array<{ live: number; tombstone: boolean }> = [];
      put(rec("a", at(3)), T0, (s) => seen.push({ live: s.live, tombstone: s.isTombstone(find("a")) }) > 0);
      expect(seen).to.deep.equal([{ live: 0, tombstone: true }]);
      expect(shard.isLive(find("a"))).to.equal(true);
    });

    it("calls makeRoom for an overwrite with the bytes it replaces, and not for a delete, a tombstone or an ignored write", () => {
      const { put, makeRoomCalls, overwriteCalls } = harness();
      put(rec("a", at(1)));
      put(rec("e", at(1), { expiresAtMs: T0 + 10 }));
      expect(makeRoomCalls).to.have.length(2);
      put(rec("a", at(2))); // overwrite of a live key
      put(rec("e", at(2)), T0 + 10); // overwrite of an expired, unswept key: it still counts as live
      put(tomb("a", at(3))); // delete
      put(tomb("t", at(3))); // tombstone of a key never seen
      put(rec("a", at(2))); // older than the tombstone: ignored
      put(rec("e", at(2))); // duplicate: ignored
      expect(makeRoomCalls).to.have.length(2);
      expect(overwriteCalls, "the two overwrites, each with the size of the value it replaced").to.deep.equal([rec("a", at(1)).value.length, rec("e", at(1)).value.length]);
    });

    it("a makeRoom that refuses leaves everything as it was: a new key, a revived tombstone, a grown overwrite", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(1)));
      put(tomb("t", at(1)));
      const refuse = () => false;
      expect(put(rec("n", at(2)), T0, refuse).applied).to.equal(Applied.Refused);
      expect(find("n")).to.equal(-1);
      expect(put(rec("t", at(2)), T0, refuse).applied).to.equal(Applied.Refused);
      expect(shard.isTombstone(find("t"))).to.equal(true);
      expect(shard.tombstones).to.equal(1);
      expect(put(rec("a", at(2), { value: "a longer value" }), T0, refuse).applied).to.equal(Applied.Refused);
      expect([shard.versionAt(find("a")), shard.live]).to.deep.equal([at(1), 1]);
    });

    it("grows past its share when makeRoom evicts nothing: the shard itself never evicts", () => {
      const { shard, put, evicted, makeRoomCalls } = harness({ share: 2 });
      for (let i = 0; i < 10; i++) put(rec(`k${i}`, at(1)));
      expect([shard.live, evicted.length, makeRoomCalls.length]).to.deep.equal([10, 0, 10]);
    });

    it("a makeRoom that evicts takes the policy's victim before the new key is stored", () => {
      const { shard, put, find, evicted, liveKeys } = harness({ limit: 4 });
      for (const k of ["a", "b", "c", "d"]) put(rec(k, at(1)));
      expect(evicted, "makeRoom evicts only once the shard holds the limit").to.deep.equal([]);
      shard.touchRead(find("a"));
      put(rec("e", at(1)));
      expect(evicted).to.deep.equal(["b"]);
      expect(shard.live).to.equal(4);
      expect(liveKeys().sort()).to.deep.equal(["a", "c", "d", "e"]);
    });

    it("never evicts the record it is storing, even when that record would be the policy's victim", () => {
      // With LFU a newcomer always has the lowest count: it must still survive its own insert.
      // makeRoom keeps the shard at 3: three hot keys fill it.
      const { shard, put, find, evicted } = harness({ policy: new LfuPolicy(), limit: 3, tombstoneCap: 10 });
      put(rec("hot1", at(1)));
      put(rec("hot2", at(1)));
      put(rec("hot3", at(1)));
      for (let i = 0; i < 5; i++) {
        shard.touchRead(find("hot1"));
        shard.touchRead(find("hot2"));
        shard.touchRead(find("hot3"));
      }
      for (const k of ["n1", "n2", "n3"]) {
        put(rec(k, at(1)));
        expect(shard.isLive(find(k)), `${k} survives its insert`).to.equal(true);
        expect(shard.live).to.equal(3);
      }
      expect(evicted).to.deep.equal(["hot1", "n1", "n2"]);
    });

    it("reviving a tombstone in a full shard evicts another live key, not the revived one", () => {
      const { shard, put, find, evicted } = harness({ limit: 3 });
      put(rec("a", at(1)));
      put(tomb("a", at(2)));
      put(rec("b", at(1)));
      put(rec("c", at(1)));
      put(rec("d", at(1))); // the shard holds the limit
      put(rec("a", at(3), { value: "revived" }));
      expect(evicted).to.deep.equal(["b"]);
      expect(shard.valueAt(find("a"))).to.equal("revived");
      expect([shard.live, shard.tombstones]).to.deep.equal([3, 0]);
    });

    it("an overwrite of a live key in a full shard evicts nothing", () => {
      const { shard, put, evicted } = harness({ limit: 2 });
      put(rec("a", at(1)));
      put(rec("b", at(1)));
      put(rec("a", at(2)));
      expect(evicted).to.deep.equal([]);
      expect(shard.live).to.equal(2);
    });

    it("tombstones are outside the capacity: storing them in a full shard evicts no live item", () => {
      const { shard, put, evicted } = harness({ limit: 2, tombstoneCap: 10 });
      put(rec("a", at(1)));
      put(rec("b", at(1)));
      put(tomb("x", at(1)));
      put(tomb("y", at(1)));
      expect(evicted).to.deep.equal([]);
      expect([shard.live, shard.tombstones]).to.deep.equal([2, 2]);
    });

    it("evictOne evicts the policy's victim through onEvict, frees its bytes and leaves no tombstone", () => {
      const { shard, put, find, evicted, onEvict, liveKeys } = harness();
      put(rec("a", at(1), { value: "aa" }));
      put(rec("b", at(1), { value: "bbb" }));
      put(rec("c", at(1), { value: "c" }));
      shard.touchRead(find("a"));
      expect(shard.evictOne(onEvict)).to.equal(true);
      expect(evicted).to.deep.equal(["b"]);
      expect(find("b")).to.equal(-1);
      expect(liveKeys().sort()).to.deep.equal(["a", "c"]);
      expect([shard.live, shard.bytes, shard.tombstones, shard.size]).to.deep.equal([2, 3, 0, 2]);
    });

    it("evictOne called repeatedly empties the shard in the policy's order", () => {
      const { shard, put, find, evicted, onEvict } = harness();
      for (const k of ["a", "b", "c", "d"]) put(rec(k, at(1)));
      shard.touchRead(find("a"));
      shard.touchRead(find("c"));
      const results: boolean[] = [];
      for (let i = 0; i < 5; i++) results.push(shard.evictOne(onEvict));
      expect(results).to.deep.equal([true, true, true, true, false]);
      expect(evicted).to.deep.equal(["b", "d", "a", "c"]);
      expect([shard.live, shard.bytes, shard.size]).to.deep.equal([0, 0, 0]);
    });

    it("evictOne skips tombstones and returns false, calling nothing, when the shard holds no live record", () => {
      const { shard, put, find, evicted, onEvict } = harness();
      expect(shard.evictOne(onEvict), "an empty shard").to.equal(false);
      put(tomb("t", at(1)));
      put(rec("a", at(1)));
      expect(shard.evictOne(onEvict)).to.equal(true);
      expect(shard.evictOne(onEvict), "only a tombstone left").to.equal(false);
      expect(evicted).to.deep.equal(["a"]);
      expect(shard.isTombstone(find("t"))).to.equal(true);
    });
  });

  describe("sweep", () => {
    it("turns expired live records into tombstones of their version and reports each through onExpire", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(0), { value: "aa", expiresAtMs: T0 + 100 }));
      put(rec("b", at(0), { value: "bbb", expiresAtMs: T0 + 200 }));
      put(rec("c", at(0), { value: "c" }));
      const expired: string[] = [];
      const r = shard.sweep(T0 + 100, 60_000, (slot) => void expired.push(shard.keyAt(slot)));
      expect(r).to.deep.equal({ expired: 1, compacted: 0, work: 1, next: undefined });
      expect(expired).to.deep.equal(["a"]);
      expect(shard.recordAt(find("a"))).to.include({ tombstone: true, value: "", version: at(0), expiresAtMs: 0 });
      expect([shard.live, shard.bytes, shard.tombstones]).to.deep.equal([2, 4, 1]);
      expect(put(rec("a", at(0) - 1, { value: "older copy" })).applied, "the tombstone of the expired version refuses an older copy").to.equal(Applied.Older);
    });

    it("keeps a tombstone past its TTL unless it arrived before holdAfterMs (a peer has not pulled it), and tells when it arrived", () => {
      const { shard, put, find } = harness();
      put(tomb("t1", at(0)));
      put(tomb("t2", at(0)), T0 + 50);
      expect(shard.tombstoneSinceAt(find("t2"))).to.equal(T0 + 50);
      expect(shard.sweep(T0 + 5000, 1000, () => undefined, 0, Infinity, T0), "nothing pulled yet (an answer in t1's millisecond may not hold it)").to.deep.include({ compacted: 0 });
      expect(shard.sweep(T0 + 5000, 1000, () => undefined, 0, Infinity, T0 + 50), "t1 pulled, t2 not").to.deep.include({ compacted: 1 });
      expect(shard.isTombstone(find("t2"))).to.equal(true);
      expect(shard.sweep(T0 + 5000, 1000, () => undefined, 0, Infinity, T0 + 51)).to.deep.include({ compacted: 1 });
      expect(shard.tombstones).to.equal(0);
    });

    it("compacts a tombstone once the time it became a tombstone here + ttl has passed, and not a millisecond before", () => {
      const { shard, put, find } = harness();
      put(tomb("t1", at(0)));
      put(tomb("t2", at(0)), T0 + 50);
      expect(shard.sweep(T0 + 999, 1000, () => undefined)).to.deep.equal({ expired: 0, compacted: 0, work: 0, next: undefined });
      expect(shard.sweep(T0 + 1000, 1000, () => undefined)).to.deep.equal({ expired: 0, compacted: 1, work: 1, next: undefined });
      expect(find("t1")).to.equal(-1);
      expect(shard.isTombstone(find("t2"))).to.equal(true);
      expect(shard.sweep(T0 + 1050, 1000, () => undefined)).to.deep.equal({ expired: 0, compacted: 1, work: 1, next: undefined });
      expect(shard.tombstones).to.equal(0);
    });

    it("with a budget, stops at it and says where to go on: the next expired slot, or the high water for the compaction", () => {
      const { shard, put } = harness();
      for (let i = 0; i < 5; i++) put(rec(`e${i}`, at(0), { expiresAtMs: T0 + 100 }));
      for (let i = 0; i < 3; i++) put(tomb(`t${i}`, at(0)));
      const first = shard.sweep(T0 + 60_000, 1000, () => undefined, 0, 3);
      expect(first).to.include({ expired: 3, compacted: 0 });
      expect(first.next).to.be.a("number");
      const second = shard.sweep(T0 + 60_000, 1000, () => undefined, first.next, 3);
      expect(second).to.include({ expired: 2, compacted: 1 });
      expect(second.next, "the compaction goes on").to.be.a("number");
      expect(shard.sweep(T0 + 60_000, 1000, () => undefined, second.next, 3)).to.deep.equal({ expired: 0, compacted: 2, work: 2, next: undefined });
      expect(shard.live).to.equal(0);
    });

    it("looking at slots costs a unit per 64: a budget stops a sweep over a long run of live records too", () => {
      const { shard, put } = harness();
      for (let i = 0; i < 640; i++) put(rec(`l${i}`, at(0)));
      const first = shard.sweep(T0 + 1, 1000, () => undefined, 0, 4);
      expect(first).to.deep.equal({ expired: 0, compacted: 0, work: 4, next: 255 });
      const rest = shard.sweep(T0 + 1, 1000, () => undefined, first.next, 100);
      expect(rest).to.deep.equal({ expired: 0, compacted: 0, work: 6, next: undefined });
    });

    it("compacts every old tombstone in one sweep", () => {
      const { shard, put } = harness();
      for (let i = 0; i < 50; i++) put(tomb(`t${i}`, at(i)), T0 + i);
      expect(shard.sweep(T0 + 1049, 1000, () => undefined).compacted).to.equal(50);
      expect([shard.tombstones, shard.size]).to.deep.equal([0, 0]);
    });
  });

  describe("slots", () => {
    it("grows past its initial 16 slots without losing records", () => {
      const { shard, put, find } = harness({ share: 1000 });
      for (let i = 0; i < 100; i++) put(rec(`k${i}`, at(i), { value: "x".repeat(i) }));
      expect(shard.live).to.equal(100);
      for (let i = 0; i < 100; i++) expect(shard.recordAt(find(`k${i}`))).to.include({ version: at(i), value: "x".repeat(i) });
      expect(shard.bytes).to.equal((99 * 100) / 2);
    });

    it("keeps LRU order across a growth of its slot arrays", () => {
      // makeRoom keeps the shard at 21: the 17th insert grows the 16 initial slots.
      const { shard, put, find, evicted } = harness({ limit: 21 });
      for (let i = 0; i < 21; i++) put(rec(`k${i}`, at(1)));
      expect(evicted).to.deep.equal([]);
      shard.touchRead(find("k0"));
      put(rec("new", at(1)));
      expect(evicted).to.deep.equal(["k1"]);
    });

    it("removeSlot frees a live record or a tombstone without leaving anything behind", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(1), { value: "abc" }));
      put(tomb("t", at(1)));
      shard.removeSlot(find("a"));
      shard.removeSlot(find("t"));
      expect([find("a"), find("t")]).to.deep.equal([-1, -1]);
      expect([shard.live, shard.tombstones, shard.bytes, shard.size]).to.deep.equal([0, 0, 0, 0]);
    });

    it("a freed slot is reused by the next record and the old key stays gone", () => {
      const { shard, put, find } = harness();
      put(rec("a", at(1)));
      const slot = find("a");
      shard.removeSlot(slot);
      put(rec("b", at(1), { origin: "n9" }));
      expect(find("b")).to.equal(slot);
      expect(find("a")).to.equal(-1);
      expect(shard.recordAt(slot)).to.include({ key: "b", origin: "n9" });
    });

    it("scanLiveKeys skips tombstones and expired records and returns the resume slot when stopped", () => {
      const { shard, put, find, liveKeys } = harness();
      put(rec("a", at(1)));
      put(tomb("t", at(1)));
      put(rec("e", at(1), { expiresAtMs: T0 }));
      put(rec("b", at(1)));
      put(rec("c", at(1)));
      expect(liveKeys()).to.deep.equal(["a", "b", "c"]);
      const seen: string[] = [];
      const resume = shard.scanLiveKeys(0, T0, (k) => {
        seen.push(k);
        return seen.length < 2;
      });
      expect(seen).to.deep.equal(["a", "b"]);
      expect(resume).to.equal(find("b") + 1);
      const rest: string[] = [];
      expect(shard.scanLiveKeys(resume, T0, (k) => (rest.push(k), true))).to.equal(-1);
      expect(rest).to.deep.equal(["c"]);
    });

    it("scanSlots visits live, expired and tombstone records", () => {
      const { shard, put } = harness();
      put(rec("a", at(1)));
      put(tomb("t", at(1)));
      put(rec("e", at(1), { expiresAtMs: T0 }));
      const keys: string[] = [];
      const resume = shard.scanSlots(0, (slot) => keys.push(shard.keyAt(slot)) > 0);
      expect(keys.sort()).to.deep.equal(["a", "e", "t"]);
      expect(resume).to.equal(-1);
    });

    it("clear() empties the shard, returns the live count and leaves it usable", () => {
      const { shard, put, find, evicted } = harness({ limit: 3 });
      put(rec("a", at(1), { value: "12" }));
      put(rec("b", at(1)));
      put(tomb("t", at(1)));
      expect(shard.clear()).to.equal(2);
      expect([shard.live, shard.tombstones, shard.bytes, shard.size]).to.deep.equal([0, 0, 0, 0]);
      expect(find("a")).to.equal(-1);
      expect(put(rec("a", at(0))).applied).to.equal(Applied.Stored);
      put(rec("c", at(1)));
      put(rec("d", at(1)));
      expect(evicted, "at the limit, not past it").to.deep.equal([]);
      put(rec("e", at(1)));
      expect(evicted).to.deep.equal(["a"]);
    });
  });
});
