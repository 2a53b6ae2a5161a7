// Shard tombstones: dropping the oldest for room and compacting by age cost one step each, and a
// seeded mix of writes, deletes, revivals, expirations, sweeps in slices, removals and clears
// keeps the tombstones, their order and the counts the same as a simple model.
import { expect } from "chai";
import { hash32 } from "../../../src/core/hash.js";
import { randomInt, seededRandom } from "../../../src/core/random.js";
import { LruPolicy, type VersionedRecord } from "../../../src/store/index.js";
import { OriginTable } from "../../../src/store/origin-table.js";
import { tombstoneCost, versionTimeMs } from "../../../src/store/record.js";
import { Shard } from "../../../src/store/shard.js";
import { TombstoneQueue } from "../../../src/store/tombstone-queue.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const TTL_MS = 100;

function rec(key: string, version: number, over: Partial<Omit<VersionedRecord, "key" | "version">> = {}): VersionedRecord {
  return { key, value: `v-${key}`, version, origin: "n1", lastUpdatedMs: versionTimeMs(version), expiresAtMs: 0, tombstone: false, ...over };
}

function tomb(key: string, version: number): VersionedRecord {
  return rec(key, version, { value: "", tombstone: true });
}

/** A shard whose tombstone queue the test holds, and whose budget fits `cap` tombstones of keys as long as `sizedLike`. */
function harness(cap: number, sizedLike: string) {
  const clock = new ManualClock();
  const queue = new TombstoneQueue();
  const counts = { dropped: 0 };
  const shard = new Shard(new LruPolicy(), new OriginTable(), 1_000_000, cap * tombstoneCost(sizedLike), () => counts.dropped++, queue);
  let version = clock.nowMs() * 1000;
  /** Applies the record `make` builds with the next version. */
  const put = (make: (version: number) => VersionedRecord) => {
    const r = make(++version);
    return shard.apply(r, hash32(r.key), clock.nowMs(), () => true);
  };
  return { clock, queue, counts, shard, put, find: (key: string) => shard.find(key, hash32(key)) };
}

const key = (i: number) => `k${String(i).padStart(6, "0")}`;

describe("store/shard tombstones", () => {
  it("dropping the oldest tombstone for room takes one step, however many tombstones ahead of it were revived or removed", () => {
    const { queue, counts, shard, put, find } = harness(1000, key(0));
    for (let i = 0; i < 1000; i++) put((v) => tomb(key(i), v));
    // Take 990 out at the front: 900 revived by a live write, 90 removed outright.
    for (let i = 0; i < 900; i++) put((v) => rec(key(i), v));
    for (let i = 900; i < 990; i++) shard.removeSlot(find(key(i)));
    // 1000 more deletes: the first 990 fit, each of the last 10 drops the oldest tombstone.
    for (let i = 1000; i < 1990; i++) put((v) => tomb(key(i), v));
    const before = queue.steps;
    for (let i = 1990; i < 2000; i++) put((v) => tomb(key(i), v));
    expect(counts.dropped).to.equal(10);
    expect(queue.steps - before, "one step per drop").to.equal(10);
    for (let i = 990; i < 1000; i++) expect(find(key(i)), `${key(i)}, among the oldest, is dropped`).to.equal(-1);
    expect(shard.isTombstone(find(key(1000))), "the next oldest stays").to.equal(true);
    expect([shard.tombstones, shard.live]).to.deep.equal([1000, 900]);
  });

  it("a sweep that compacts k tombstones looks at k + 1 of them, however many ahead were revived or removed", () => {
    const { clock, queue, shard, put, find } = harness(100_000, key(0));
    for (let i = 0; i < 20_000; i++) put((v) => tomb(key(i), v));
    clock.advance(TTL_MS);
    for (let i = 20_000; i < 20_010; i++) put((v) => tomb(key(i), v));
    for (let i = 0; i < 19_990; i += 2) put((v) => rec(key(i), v));
    for (let i = 1; i < 19_990; i += 2) shard.removeSlot(find(key(i)));
    const before = queue.steps;
    expect(shard.sweep(clock.nowMs(), TTL_MS, () => undefined, Number.MAX_SAFE_INTEGER)).to.deep.equal({ expired: 0, compacted: 10, work: 10, next: undefined });
    expect(queue.steps - before, "10 compacted and the first one too young").to.equal(11);
    expect(shard.tombstones).to.equal(10);
  });

  for (const seed of [1, 2, 3, 42, 1234]) {
    it(`matches a model under 4000 seeded writes, deletes, revivals, expirations, sweep slices, removals and clears (seed=${seed})`, () => {
      runModel(seed, 4000);
    });
  }
});

interface LiveEntry {
  readonly tombstone: false;
  readonly version: number;
  readonly value: string;
  readonly expiresAtMs: number;
}
interface TombEntry {
  readonly tombstone: true;
  readonly version: number;
  readonly sinceMs: number;
}

/** What the shard should hold: records by key, and the tombstone keys oldest first. */
class Model {
  readonly records = new Map<string, LiveEntry | TombEntry>();
  order: string[] = [];
  dropped = 0;

  constructor(readonly tombstoneBytesMax: number) {}

  get tombstoneBytes(): number {
    return this.order.reduce((n, k) => n + tombstoneCost(k), 0);
  }

  /** A version-gated apply, as Shard.apply: makeRoom for tombstones, order by arrival here. */
  apply(r: VersionedRecord, nowMs: number): void {
    const old = this.records.get(r.key);
    if (old !== undefined && r.version <= old.version) return;
    if (old?.tombstone === true) this.order = this.order.filter((k) => k !== r.key);
    if (r.tombstone) {
      if (old?.tombstone !== true) this.makeRoom(tombstoneCost(r.key));
      this.addTombstone(r.key, r.version, nowMs);
    } else {
      this.records.set(r.key, { tombstone: false, version: r.version, value: r.value, expiresAtMs: r.expiresAtMs });
    }
  }

  /** A live record turns into a tombstone of its own version. */
  expire(key: string, nowMs: number): void {
    const old = this.records.get(key);
    if (old === undefined || old.tombstone) throw new Error(`model: ${key} is no live record`);
    this.makeRoom(tombstoneCost(key));
    this.addTombstone(key, old.version, nowMs);
  }

  remove(key: string): void {
    this.records.delete(key);
    this.order = this.order.filter((k) => k !== key);
  }

  /** The oldest tombstone, taken out: what compaction and the budget remove. */
  popOldest(): string {
    const k = this.order[0] as string;
    this.remove(k);
    return k;
  }

  clear(): void {
    this.records.clear();
    this.order = [];
  }

  private makeRoom(cost: number): void {
    while (this.tombstoneBytes + cost > this.tombstoneBytesMax && this.order.length > 0) {
      this.popOldest();
      this.dropped++;
    }
  }

  private addTombstone(key: string, version: number, nowMs: number): void {
    this.records.set(key, { tombstone: true, version, sinceMs: nowMs });
    this.order.push(key);
  }
}

/** Keys of 2 to 8 characters, so tombstones cost different amounts. */
const KEYS = Array.from({ length: 40 }, (_, i) => `k${i}${"x".repeat(i % 7)}`);

function runModel(seed: number, ops: number): void {
  const random = seededRandom(seed);
  const clock = new ManualClock();
  const queue = new TombstoneQueue();
  const model = new Model(12 * tombstoneCost("k10xxx"));
  let dropped = 0;
  const shard = new Shard(new LruPolicy(), new OriginTable(), 1_000_000, model.tombstoneBytesMax, () => dropped++, queue);
  const slotOf = (k: string) => shard.find(k, hash32(k));
  let version = clock.nowMs() * 1000;
  /** Where the expiration pass under way goes on (one shard: ExpirySweep's slot). */
  let from = 0;
  /** What the mix did, so the test fails if a change of the mix stops exercising a path. */
  const tally = { revived: 0, expiredBySweep: 0, expiredByRead: 0, compacted: 0, removedTombstones: 0, evicted: 0, clears: 0 };

  const apply = (r: VersionedRecord) => {
    if (!r.tombstone && model.records.get(r.key)?.tombstone === true && r.version > (model.records.get(r.key) as TombEntry).version) tally.revived++;
    shard.apply(r, hash32(r.key), clock.nowMs(), () => true);
    model.apply(r, clock.nowMs());
  };

  /** One slice of the expiration pass, checked against the model: expirations in the order the shard made them, then the oldest tombstones compacted. */
  const sweepSlice = (where: string) => {
    const now = clock.nowMs();
    const expired: string[] = [];
    const r = shard.sweep(now, TTL_MS, (slot) => void expired.push(shard.keyAt(slot)), from, 1 + randomInt(random, 8));
    for (const k of expired) model.expire(k, now);
    tally.expiredBySweep += expired.length;
    tally.compacted += r.compacted;
    for (let i = 0; i < r.compacted; i++) {
      const oldest = model.order[0] as string;
      expect((model.records.get(oldest) as TombEntry).sinceMs + TTL_MS, `${where}: compacted ${oldest} only once old`).to.be.at.most(now);
      model.popOldest();
    }
    if (r.next === undefined && model.order.length > 0) {
      expect((model.records.get(model.order[0] as string) as TombEntry).sinceMs + TTL_MS, `${where}: a finished sweep leaves no old tombstone`).to.be.above(now);
    }
    from = r.next ?? 0;
  };

  /** The shard's record of each key as the model would say it (null: none); one comparison per check, chai's diff only on a mismatch. */
  const held = (k: string) => {
    const slot = slotOf(k);
    if (slot < 0) return null;
    const r = shard.recordAt(slot);
    return r.tombstone ? { k, tombstone: true, version: r.version, value: r.value, expiresAtMs: r.expiresAtMs } : { k, tombstone: false, version: r.version, value: r.value, expiresAtMs: r.expiresAtMs };
  };
  const modelled = (k: string) => {
    const m = model.records.get(k);
    if (m === undefined) return null;
    return m.tombstone ? { k, tombstone: true, version: m.version, value: "", expiresAtMs: 0 } : { k, tombstone: false, version: m.version, value: m.value, expiresAtMs: m.expiresAtMs };
  };
  const check = (where: string) => {
    const actual = KEYS.map(held);
    const expected = KEYS.map(modelled);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, `${where}: the records`).to.deep.equal(expected);
    const live = model.records.size - model.order.length;
    let bytes = 0;
    let keyBytes = 0;
    for (const [k, m] of model.records) {
      if (m.tombstone) continue;
      bytes += m.value.length;
      keyBytes += k.length;
    }
    const oldest = queue.oldest();
    const counts = { tombstones: shard.tombstones, tombstoneBytes: shard.tombstoneBytes, dropped, live: shard.live, bytes: shard.bytes, keyBytes: shard.keyBytes, size: shard.size, oldest: oldest < 0 ? undefined : shard.keyAt(queue.slotOf(oldest)) };
    const want = { tombstones: model.order.length, tombstoneBytes: model.tombstoneBytes, dropped: model.dropped, live, bytes, keyBytes, size: model.records.size, oldest: model.order[0] };
    if (JSON.stringify(counts) !== JSON.stringify(want)) expect(counts, `${where}: counts and the oldest tombstone`).to.deep.equal(want);
    if (shard.tombstoneBytes > model.tombstoneBytesMax) expect.fail(`${where}: ${shard.tombstoneBytes} tombstone bytes, over the budget`);
  };

  for (let op = 0; op < ops; op++) {
    const where = `seed=${seed} op ${op}`;
    const k = KEYS[randomInt(random, KEYS.length)] as string;
    const roll = random.next();
    if (roll < 0.3) {
      const expiresAtMs = random.next() < 0.5 ? clock.nowMs() + 1 + randomInt(random, 60) : 0;
      apply(rec(k, ++version, { value: "v".repeat(randomInt(random, 20)), expiresAtMs }));
    } else if (roll < 0.6) {
      apply(tomb(k, ++version));
    } else if (roll < 0.65) {
      // An older or duplicate copy: ignored, whatever it is.
      const held = model.records.get(k);
      if (held !== undefined) apply(random.next() < 0.5 ? rec(k, held.version - 1) : tomb(k, held.version));
    } else if (roll < 0.72) {
      // A read that finds the item expired turns it into a tombstone (ShardedStore.get).
      const slot = slotOf(k);
      const held = model.records.get(k);
      const due = held !== undefined && !held.tombstone && held.expiresAtMs !== 0 && held.expiresAtMs <= clock.nowMs();
      expect(slot >= 0 && shard.isExpired(slot, clock.nowMs()), `${where}: ${k} expired`).to.equal(due);
      if (due) {
        shard.expireSlot(slot, clock.nowMs());
        model.expire(k, clock.nowMs());
        tally.expiredByRead++;
      }
    } else if (roll < 0.85) {
      sweepSlice(where);
    } else if (roll < 0.89) {
      const slot = slotOf(k);
      if (slot >= 0) shard.removeSlot(slot);
      if (model.records.get(k)?.tombstone === true) tally.removedTombstones++;
      model.remove(k);
    } else if (roll < 0.92) {
      let victim: string | undefined;
      shard.evictOne((slot) => void (victim = shard.keyAt(slot)));
      if (victim !== undefined) {
        expect(model.records.get(victim)?.tombstone, `${where}: evicted ${victim} was live`).to.equal(false);
        model.remove(victim);
        tally.evicted++;
      }
    } else if (roll < 0.925) {
      shard.clear();
      model.clear();
      from = 0;
      tally.clears++;
    } else {
      clock.advance(randomInt(random, 40));
    }
    check(where);
  }
  // The rest by age: each compaction of one takes the oldest left.
  clock.advance(TTL_MS);
  while (model.order.length > 0) {
    const r = shard.sweep(clock.nowMs(), TTL_MS, () => expect.fail("nothing expires here"), Number.MAX_SAFE_INTEGER, 1);
    expect(r.compacted, `seed=${seed} drain`).to.equal(1);
    model.popOldest();
    check(`seed=${seed} drain`);
  }
  expect(shard.tombstones).to.equal(0);
  for (const [what, n] of Object.entries({ ...tally, dropped: model.dropped })) expect(n, `seed=${seed}: ${what}`).to.be.above(0);
}
