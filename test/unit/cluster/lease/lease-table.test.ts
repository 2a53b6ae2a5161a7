// LeaseTable (cluster/lease/lease-table.ts) on a ManualClock: one lease per key, waiters that
// get the value when a write is stored, leases that end by time, by another write or by a delete
// (the first waiter then takes a new lease over), fills checked against the lease held, and the
// node's limits (leases per node, waiters per key) enforced.
import { expect } from "chai";
import type { Clock } from "../../../../src/core/clock.js";
import { CacheError } from "../../../../src/core/errors.js";
import { LEASE_LIMITS } from "../../../../src/core/limits.js";
import { seededRandom } from "../../../../src/core/random.js";
import { LeaseTable, type LeaseTableLimits } from "../../../../src/cluster/lease/lease-table.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { LeaseOutcome } from "../../../../src/transport/index.js";
import { flush, ManualClock } from "../../../helpers/manual-clock.js";

const T0 = Date.UTC(2026, 0, 1);

function value(key: string, text = "loaded", extra: Partial<VersionedRecord> = {}): VersionedRecord {
  return { key, value: text, version: T0 * 1000 + 1, origin: "n1", lastUpdatedMs: T0, expiresAtMs: 0, tombstone: false, ...extra };
}

function tombstone(key: string): VersionedRecord {
  return { ...value(key, ""), tombstone: true };
}

interface Fixture {
  readonly clock: ManualClock;
  readonly metrics: Metrics;
  readonly table: LeaseTable;
  /** What liveRecord answers per key. */
  readonly live: Map<string, VersionedRecord>;
}

function fixture(limits: LeaseTableLimits = LEASE_LIMITS, clock: Clock = new ManualClock()): Fixture {
  const timers = clock instanceof ManualClock ? clock : new ManualClock();
  const metrics = new Metrics();
  const live = new Map<string, VersionedRecord>();
  const table = new LeaseTable({ clock, timers, random: seededRandom(7), metrics, limits, liveRecord: (k) => live.get(k) });
  return { clock: timers, metrics, table, live };
}

/** The answer of an acquire that must not wait. */
function now(a: LeaseOutcome | Promise<LeaseOutcome>): LeaseOutcome {
  expect(a).not.to.be.instanceOf(Promise);
  return a as LeaseOutcome;
}

function tokenOf(a: LeaseOutcome | Promise<LeaseOutcome>): string {
  const out = now(a);
  expect(out.kind).to.equal("granted");
  return (out as { token: string }).token;
}

/** Settles `p` into a box that a test can look at after advancing the clock. */
function track(p: LeaseOutcome | Promise<LeaseOutcome>): { answer: LeaseOutcome | undefined } {
  const box: { answer: LeaseOutcome | undefined } = { answer: undefined };
  void Promise.resolve(p).then((a) => (box.answer = a));
  return box;
}

function expectConflict(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CacheError);
    expect((err as CacheError).code).to.equal("CONFLICT");
    return;
  }
  throw new Error("expected CONFLICT");
}

describe("cluster/lease/lease-table", () => {
  it("the node's limits: lease 100 ms to 60 s, wait up to 10 s, 10,000 leases per node, 1,000 waiters per key, tokens of at most 64 characters", () => {
    expect(LEASE_LIMITS).to.deep.equal({ leaseMsMin: 100, leaseMsMax: 60_000, waitMsMax: 10_000, leasesMax: 10_000, waitersPerKey: 1_000, tokenCharsMax: 64 });
  });

  it("a live record is a hit; the first miss gets the lease (a fresh token each time); a miss that will not wait is held with the time the lease has left", () => {
    const f = fixture();
    f.live.set("warm", value("warm"));
    expect(now(f.table.acquire("warm", 10_000, 0))).to.deep.equal({ kind: "hit", record: value("warm") });
    const token = tokenOf(f.table.acquire("cold", 10_000, 0));
    expect(token).to.match(/^[0-9a-z]+\.[0-9a-z]+$/);
    f.clock.advance(4_000);
    expect(now(f.table.acquire("cold", 10_000, 0))).to.deep.equal({ kind: "held", retryAfterMs: 6_000 });
    expect(tokenOf(f.table.acquire("other", 10_000, 0))).not.to.equal(token);
    expect(f.table.size).to.equal(2);
    expect([f.metrics.get("dist.lease.granted"), f.metrics.get("dist.lease.held")]).to.deep.equal([2, 1]);
  });

  it("the fill: checkFill passes for the lease's token only; the stored fill ends the lease and answers every waiter with the value at once", async () => {
    const f = fixture();
    const token = tokenOf(f.table.acquire("k", 10_000, 0));
    const waiters = Array.from({ length: 5 }, () => track(f.table.acquire("k", 10_000, 2_000)));
    expect(f.table.waitersOn("k")).to.equal(5);
    expectConflict(() => f.table.checkFill("k", `${token}x`));
    expectConflict(() => f.table.checkFill("elsewhere", token));
    f.table.checkFill("k", token);
    f.table.stored(value("k"));
    await flush();
    expect(waiters.map((w) => w.answer)).to.deep.equal(Array(5).fill({ kind: "hit", record: value("k") }));
    expect(f.table.size).to.equal(0);
    // Every timer (the lease's end, each waiter's deadline) was cancelled.
    expect(f.clock.pending).to.equal(0);
    expect(f.metrics.get("dist.lease.filled")).to.equal(1);
    expectConflict(() => f.table.checkFill("k", token));
  });

  it("a miss waits at most `wait`: then it answers held with the time the lease has left", async () => {
    const f = fixture();
    tokenOf(f.table.acquire("k", 5_000, 0));
    const w = track(f.table.acquire("k", 5_000, 2_000));
    await f.clock.advanceAsync(1_999);
    expect(w.answer).to.equal(undefined);
    await f.clock.advanceAsync(1);
    expect(w.answer).to.deep.equal({ kind: "held", retryAfterMs: 3_000 });
    expect(f.table.waitersOn("k")).to.equal(0);
  });

  it("an unfilled lease expires: a later miss gets a new lease, and the old token's fill is a conflict", () => {
    const f = fixture();
    const first = tokenOf(f.table.acquire("k", 1_000, 0));
    f.clock.advance(999);
    expect(now(f.table.acquire("k", 1_000, 0)).kind).to.equal("held");
    f.clock.advance(1);
    expect(f.table.size).to.equal(0);
    expect(f.metrics.get("dist.lease.expired")).to.equal(1);
    const second = tokenOf(f.table.acquire("k", 1_000, 0));
    expect(second).not.to.equal(first);
    expectConflict(() => f.table.checkFill("k", first));
    f.table.checkFill("k", second);
  });

  it("an expiry with waiters hands the lease to the first waiter (a new token); the others wait on and get the value of its fill", async () => {
    const f = fixture();
    tokenOf(f.table.acquire("k", 1_000, 0));
    const a = track(f.table.acquire("k", 3_000, 5_000));
    const b = track(f.table.acquire("k", 3_000, 5_000));
    await f.clock.advanceAsync(1_000);
    expect(a.answer?.kind).to.equal("granted");
    expect(b.answer).to.equal(undefined);
    expect(f.table.waitersOn("k")).to.equal(1);
    // The new lease is the waiter's own (3 s), so a miss now is held for that long.
    expect(now(f.table.acquire("k", 1_000, 0))).to.deep.equal({ kind: "held", retryAfterMs: 3_000 });
    f.table.checkFill("k", (a.answer as { token: string }).token);
    f.table.stored(value("k", "by the second loader"));
    await flush();
    expect(b.answer).to.deep.equal({ kind: "hit", record: value("k", "by the second loader") });
    expect([f.metrics.get("dist.lease.granted"), f.metrics.get("dist.lease.expired"), f.metrics.get("dist.lease.filled")]).to.deep.equal([2, 1, 1]);
  });

  it("another write stored before the fill ends the lease: waiters get that value, the fill is a conflict", async () => {
    const f = fixture();
    const token = tokenOf(f.table.acquire("k", 10_000, 0));
    const w = track(f.table.acquire("k", 10_000, 2_000));
    f.table.stored(value("k", "someone else's PUT"));
    await flush();
    expect(w.answer).to.deep.equal({ kind: "hit", record: value("k", "someone else's PUT") });
    expectConflict(() => f.table.checkFill("k", token));
    expect(f.metrics.get("dist.lease.invalidated")).to.equal(1);
  });

  it("a delete before the fill ends the lease: the fill is a conflict and the first waiter takes over a new lease", async () => {
    const f = fixture();
    const token = tokenOf(f.table.acquire("k", 10_000, 0));
    const w = track(f.table.acquire("k", 10_000, 2_000));
    f.table.stored(tombstone("k"));
    await flush();
    expect(w.answer?.kind).to.equal("granted");
    expectConflict(() => f.table.checkFill("k", token));
    f.table.checkFill("k", (w.answer as { token: string }).token);
    // A write stored already expired (it expired since the lease was granted) counts as a delete.
    const next = track(f.table.acquire("k", 10_000, 2_000));
    f.clock.advance(5);
    f.table.stored(value("k", "stale", { expiresAtMs: f.clock.nowMs() - 1 }));
    await flush();
    expect(next.answer?.kind).to.equal("granted");
    expect(f.metrics.get("dist.lease.invalidated")).to.equal(2);
  });

  it("a copy of a value that had expired before the lease was granted leaves the lease held", async () => {
    // A restarted primary catching up, an anti-entropy round or a late hint can bring an old write
    // whose TTL ran out long ago: readers see nothing new, so the holder keeps its lease (chaos
    // seed 8485 saw a second lease granted 0.13 s after the first when such a copy ended it).
    const f = fixture();
    f.clock.advance(10_000);
    const token = tokenOf(f.table.acquire("k", 10_000, 0));
    const w = track(f.table.acquire("k", 10_000, 2_000));
    f.table.stored(value("k", "old", { expiresAtMs: f.clock.nowMs() - 1_000 }));
    await flush();
    expect(w.answer, "the waiter still waits").to.equal(undefined);
    expect(f.metrics.get("dist.lease.invalidated")).to.equal(0);
    f.table.checkFill("k", token);
    f.table.stored(value("k", "loaded"));
    await flush();
    expect(w.answer?.kind).to.equal("hit");
  });

  it("a live write ends the lease even when its expiry falls before the grant because the wall clock stepped back", async () => {
    // Found by a review of 9220fc0: the old-copy test ran before the liveness check, so after an
    // NTP step back a fresh write with a short TTL was taken for an old copy; its waiters kept
    // waiting and the holder's fill, loaded before that write, would have overwritten it.
    const timers = new ManualClock();
    let stepMs = 0;
    const f = fixture(LEASE_LIMITS, { nowMs: () => timers.nowMs() + stepMs, monotonicMs: () => timers.monotonicMs() });
    timers.advance(10_000);
    const token = tokenOf(f.table.acquire("k", 10_000, 0));
    const w = track(f.table.acquire("k", 10_000, 5_000));
    stepMs = -5_000;
    const now = timers.nowMs() + stepMs;
    f.table.stored(value("k", "newer", { lastUpdatedMs: now, expiresAtMs: now + 2_000 }));
    await flush();
    expect(w.answer?.kind, "the waiter gets the live value at once").to.equal("hit");
    expect(() => f.table.checkFill("k", token), "the old holder's fill is refused").to.throw(CacheError);
  });

  it("writes of other keys, and writes while no lease is held, change nothing", () => {
    const f = fixture();
    f.table.stored(value("k"));
    const token = tokenOf(f.table.acquire("k", 10_000, 0));
    f.table.stored(value("other"));
    f.table.stored(tombstone("other"));
    f.table.checkFill("k", token);
    expect(f.metrics.get("dist.lease.invalidated")).to.equal(0);
  });

  it("release: the holder's token ends the lease at once, the first waiter takes a new one, the others wait on it; the released token's fill is a conflict", async () => {
    const f = fixture();
    const first = tokenOf(f.table.acquire("k", 10_000, 0));
    const a = track(f.table.acquire("k", 3_000, 5_000));
    const b = track(f.table.acquire("k", 3_000, 5_000));
    await f.clock.advanceAsync(100);
    expect(f.table.release("k", "1.other"), "another token").to.equal(false);
    expect(f.table.release("other-key", first), "another key").to.equal(false);
    expect(a.answer).to.equal(undefined);
    expect(f.table.release("k", first)).to.equal(true);
    await flush();
    expect(a.answer?.kind, "no wait for the 10 s lease to run out").to.equal("granted");
    expect(b.answer).to.equal(undefined);
    expect(f.table.release("k", first), "released already").to.equal(false);
    expectConflict(() => f.table.checkFill("k", first));
    f.table.checkFill("k", (a.answer as { token: string }).token);
    f.table.stored(value("k", "by the second loader"));
    await flush();
    expect(b.answer).to.deep.equal({ kind: "hit", record: value("k", "by the second loader") });
    expect([f.metrics.get("dist.lease.released"), f.metrics.get("dist.lease.filled"), f.metrics.get("dist.lease.expired")]).to.deep.equal([1, 1, 0]);
  });

  it("release of a lease that is filled, being filled, expired or ended by a write changes nothing", () => {
    const f = fixture();
    const filled = tokenOf(f.table.acquire("a", 1_000, 0));
    f.table.checkFill("a", filled);
    expect(f.table.release("a", filled), "its fill is being stored").to.equal(false);
    f.table.stored(value("a"));
    expect(f.table.release("a", filled), "filled").to.equal(false);
    const expired = tokenOf(f.table.acquire("b", 1_000, 0));
    f.clock.advance(1_000);
    expect(f.table.release("b", expired), "expired").to.equal(false);
    const overwritten = tokenOf(f.table.acquire("c", 1_000, 0));
    f.table.stored(value("c", "another writer"));
    expect(f.table.release("c", overwritten), "ended by a write").to.equal(false);
    expect(f.metrics.get("dist.lease.released")).to.equal(0);
    expect(f.table.size).to.equal(0);
  });

  it("a lease whose time ran out before its timer ran is ended when looked at: its fill is a conflict", () => {
    let mono = 0;
    const clock: Clock = { nowMs: () => T0 + mono, monotonicMs: () => mono };
    const f = fixture(LEASE_LIMITS, clock);
    const token = tokenOf(f.table.acquire("k", 1_000, 0));
    mono = 1_000;
    expectConflict(() => f.table.checkFill("k", token));
    expect(f.metrics.get("dist.lease.expired")).to.equal(1);
    expect(tokenOf(f.table.acquire("k", 1_000, 0))).not.to.equal(token);
  });

  it("limits: past `leasesMax` leases a miss gets no lease (refused); past `waitersPerKey` waiters a miss is held at once", () => {
    const f = fixture({ leasesMax: 2, waitersPerKey: 2 });
    tokenOf(f.table.acquire("a", 10_000, 0));
    tokenOf(f.table.acquire("b", 10_000, 0));
    expect(now(f.table.acquire("c", 10_000, 0))).to.deep.equal({ kind: "none" });
    expect(f.metrics.get("dist.lease.refused")).to.equal(1);
    expect(f.table.acquire("a", 10_000, 1_000)).to.be.instanceOf(Promise);
    expect(f.table.acquire("a", 10_000, 1_000)).to.be.instanceOf(Promise);
    expect(now(f.table.acquire("a", 10_000, 1_000))).to.deep.equal({ kind: "held", retryAfterMs: 10_000 });
    expect(f.table.waitersOn("a")).to.equal(2);
    // A lease that ends makes room for another key.
    f.table.stored(value("b"));
    expect(tokenOf(f.table.acquire("c", 10_000, 0))).to.be.a("string");
  });

  it("the node's own limits are enforced: 10,000 leases, then no lease; 1,000 waiters on a key, then held at once", () => {
    const f = fixture();
    for (let i = 0; i < LEASE_LIMITS.leasesMax; i++) expect(now(f.table.acquire(`k${i}`, 60_000, 0)).kind).to.equal("granted");
    expect(now(f.table.acquire("one-more", 60_000, 0))).to.deep.equal({ kind: "none" });
    for (let i = 0; i < LEASE_LIMITS.waitersPerKey; i++) expect(f.table.acquire("k0", 60_000, 10_000)).to.be.instanceOf(Promise);
    expect(now(f.table.acquire("k0", 60_000, 10_000)).kind).to.equal("held");
    expect(f.table.waitersOn("k0")).to.equal(LEASE_LIMITS.waitersPerKey);
    f.table.stop();
  });

  it("stop: every waiter answers none and no timer is left", async () => {
    const f = fixture();
    tokenOf(f.table.acquire("k", 10_000, 0));
    const w = track(f.table.acquire("k", 10_000, 5_000));
    f.table.stop();
    await flush();
    expect(w.answer).to.deep.equal({ kind: "none" });
    expect(f.table.size).to.equal(0);
    expect(f.clock.pending).to.equal(0);
  });
});
