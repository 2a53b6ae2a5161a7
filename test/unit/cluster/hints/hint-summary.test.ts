// The per-target hint view of GET /dist/hints: HintQueue.summary() (count, bytes, oldest queue
// time, replay failures) kept exact through coalescing, replay, refusal, hand-off and expiry, and
// the pure summarizeHints (ages, totals, order).
import { expect } from "chai";
import { HINT_OVERHEAD_BYTES } from "../../../../src/core/limits.js";
import { HINTED_METRICS } from "../../../../src/cluster/hints/hint-metrics.js";
import { HintQueue } from "../../../../src/cluster/hints/hint-queue.js";
import { summarizeHints } from "../../../../src/cluster/hints/hint-summary.js";
import { recordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport } from "../../../../src/transport/index.js";
import { ManualClock } from "../../../helpers/manual-clock.js";
import { RecordingTransport } from "../../../helpers/recording-transport.js";

const A: PeerRef = { id: "a", address: "a:7946" };
const B: PeerRef = { id: "b", address: "b:7946" };

function rec(key: string, value: string, version: number): VersionedRecord {
  return { key, value, version, origin: "self", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false };
}
const size = (key: string, value: string) => 2 * key.length + value.length + HINT_OVERHEAD_BYTES;

function fixture(ttlMs = 60_000) {
  const clock = new ManualClock();
  const q = new HintQueue({ clock, metrics: new Metrics(), logger: recordingLogger("debug"), limits: { ttlMs, maxPerNode: 1000, maxBytes: 1 << 20 }, names: HINTED_METRICS });
  return { clock, q };
}

/** A transport whose peers refuse every pushed record (they do not own the keys in their view). */
const refusing: PeerTransport = {
  set: async (_to: PeerRef, _from: string, records: readonly VersionedRecord[]): Promise<ApplyOutcome[]> => records.map(() => ({ kind: "refused", version: 0, origin: "" })),
} as unknown as PeerTransport;

describe("dist/hint-summary", () => {
  it("reports per target the count, the bytes the caps count and when the oldest hint was queued", () => {
    const { clock, q } = fixture();
    q.add(A, rec("k1", "v1", 1));
    clock.advance(100);
    q.add(A, rec("k2", "value2", 1));
    q.add(B, rec("k3", "v", 1));
    expect(q.summary().sort((x, y) => x.target.localeCompare(y.target))).to.deep.equal([
      { target: "a", count: 2, bytes: size("k1", "v1") + size("k2", "value2"), oldestQueuedAtMs: clock.nowMs() - 100, replayFailing: false },
      { target: "b", count: 1, bytes: size("k3", "v"), oldestQueuedAtMs: clock.nowMs(), replayFailing: false },
    ]);
  });

  it("keeps the bytes exact when a newer record replaces a queued one, and the replacement counts from its own queue time", () => {
    const { clock, q } = fixture();
    q.add(A, rec("k", "short", 1));
    clock.advance(500);
    q.add(A, rec("k", "a much longer value", 2));
    const [a] = q.summary();
    expect(a).to.include({ count: 1, bytes: size("k", "a much longer value"), oldestQueuedAtMs: clock.nowMs() });
    expect(q.bytes).to.equal(a?.bytes);
  });

  it("forgets a target whose hints were replayed, and lists nothing when the queue is empty", async () => {
    const { q } = fixture();
    q.add(A, rec("k", "v", 1));
    await q.replay(new RecordingTransport().asTransport(), "self");
    expect(q.summary()).to.deep.equal([]);
    expect(summarizeHints(q.summary(), 0)).to.deep.equal({ targets: [], totalCount: 0, totalBytes: 0, oldestAgeMs: 0 });
  });

  it("finds the oldest hint after a refused one went to the back of the queue, and flags the failing target", async () => {
    const { clock, q } = fixture();
    q.add(A, rec("old", "v", 1));
    clock.advance(1000);
    // "mid" is queued while "old" is under replay; the refusal then moves "old" behind it.
    const replay = q.replay(refusing, "self");
    q.add(A, rec("mid", "v", 1));
    await replay;
    clock.advance(10);
    expect(q.peek("a", 10, 1 << 20).map((r) => r.key)).to.deep.equal(["mid", "old"]);
    const [a] = q.summary();
    expect(a).to.include({ count: 2, oldestQueuedAtMs: clock.nowMs() - 1010, replayFailing: true });
    expect(summarizeHints(q.summary(), clock.nowMs()).targets[0]).to.include({ oldestAgeMs: 1010, replayFailing: true });
  });

  it("drops expired and handed-off hints from the counts (requeued ones included)", async () => {
    const { clock, q } = fixture(1000);
    q.add(A, rec("k1", "v", 1));
    await q.replay(refusing, "self");
    clock.advance(600);
    q.add(A, rec("k2", "v", 1));
    q.add(A, rec("k3", "v", 1));
    clock.advance(600);
    expect(q.expire()).to.equal(1);
    expect(q.summary()[0]).to.include({ count: 2, bytes: 2 * size("k2", "v"), oldestQueuedAtMs: clock.nowMs() - 600 });
    const [k2] = q.peek("a", 1, 1 << 20);
    expect(q.handedOff("a", [k2 as VersionedRecord])).to.equal(1);
    expect(q.summary()[0]).to.include({ count: 1, bytes: size("k3", "v") });
    expect(q.bytes).to.equal(size("k3", "v"));
  });

  it("summarizeHints sorts targets by id, turns queue times into ages and adds up the totals", () => {
    const overview = summarizeHints(
      [
        { target: "n3", count: 2, bytes: 200, oldestQueuedAtMs: 9_000, replayFailing: false },
        { target: "n1", count: 5, bytes: 500, oldestQueuedAtMs: 4_000, replayFailing: true },
        { target: "n2", count: 1, bytes: 100, oldestQueuedAtMs: 10_500, replayFailing: false },
      ],
      10_000,
    );
    expect(overview).to.deep.equal({
      targets: [
        { node: "n1", count: 5, bytes: 500, oldestAgeMs: 6_000, replayFailing: true },
        { node: "n2", count: 1, bytes: 100, oldestAgeMs: 0, replayFailing: false },
        { node: "n3", count: 2, bytes: 200, oldestAgeMs: 1_000, replayFailing: false },
      ],
      totalCount: 8,
      totalBytes: 800,
      oldestAgeMs: 6_000,
    });
  });
});
