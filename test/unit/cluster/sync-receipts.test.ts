// Sync receipts on a ManualClock: what a requester reports, which reports the answering side
// believes, and up to when it may compact its tombstones (sync-receipts.ts).
import { expect } from "chai";
import { HANDED_OUT_KEPT, SyncReceipts } from "../../../src/cluster/anti-entropy/sync-receipts.js";
import { LOG, recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const TTL = 20_000;

function harness(opts: { enabled?: boolean } = {}) {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  let peers = ["p1", "p2"];
  const receipts = new SyncReceipts({ peers: () => peers, clock, metrics, logger, tombstoneTtlMs: TTL, enabled: opts.enabled ?? true });
  /** `peer` asks for a root: its report is noted, an asOf handed out (what it reports next time). */
  const ask = (peer: string, report: number | undefined) => {
    receipts.noteReported(peer, report);
    return receipts.handOut(peer);
  };
  return { clock, metrics, logger, receipts, ask, setPeers: (ids: string[]) => (peers = ids) };
}

describe("sync receipts", () => {
  it("as requester: reports the asOf of the last completed sync with each peer, 0 before any", () => {
    const { receipts } = harness();
    expect(receipts.pulledThrough("p1")).to.equal(0);
    receipts.notePulled("p1", 1234);
    receipts.notePulled("p1", 0); // a peer from before the field names no time: nothing to report
    expect(receipts.pulledThrough("p1")).to.equal(1234);
    expect(receipts.pulledThrough("p2")).to.equal(0);
  });

  it("as answerer: a report counts for the monotonic time of the answer it names; the smallest of the known peers' holds tombstones back", () => {
    const { receipts, ask, clock } = harness();
    const m0 = clock.monotonicMs();
    expect(receipts.holdAfterMs(), "no reports yet").to.equal(0);
    const a1 = ask("p1", 0);
    clock.advance(1_000);
    const a2 = ask("p2", 0);
    clock.advance(1_000);
    ask("p1", a1);
    expect(receipts.holdAfterMs(), "p2 has reported nothing").to.equal(0);
    ask("p2", a2);
    expect(receipts.holdAfterMs()).to.equal(m0);
    expect(receipts.reportedBy("p2")).to.equal(m0 + 1_000);
  });

  it("a wall clock stepped back does not make an old report look later than a tombstone that arrived after the step", () => {
    const { receipts, ask, clock } = harness();
    const a1 = ask("p1", 0);
    ask("p2", 0);
    clock.advance(5_000);
    clock.stepWall(-60_000);
    const arrivedMono = clock.monotonicMs(); // a tombstone arriving now
    ask("p1", a1);
    expect(receipts.reportedBy("p1"), "the report names a time before the tombstone arrived").to.be.lessThan(arrivedMono);
  });

  it("a report this process never handed out (from before a restart, or a made-up time) counts as nothing pulled", () => {
    const { receipts, ask, clock } = harness();
    clock.advance(1_000);
    const a1 = ask("p1", 0);
    ask("p1", clock.nowMs() + 60_000);
    expect(receipts.reportedBy("p1")).to.equal(0);
    ask("p1", a1 - 1);
    expect(receipts.reportedBy("p1")).to.equal(0);
    ask("p1", a1);
    expect(receipts.reportedBy("p1")).to.be.greaterThan(0);
  });

  it(`remembers the last ${HANDED_OUT_KEPT} times handed out to each requester`, () => {
    const { receipts, ask, clock } = harness();
    const first = ask("p1", 0);
    for (let i = 0; i < HANDED_OUT_KEPT; i++) {
      clock.advance(10);
      ask("p1", 0);
    }
    ask("p1", first);
    expect(receipts.reportedBy("p1"), "rolled out: nothing").to.equal(0);
  });

  it("a peer from before the report field holds nothing back; peers no longer known are forgotten; with anti-entropy off nothing is held", () => {
    const { receipts, ask, setPeers } = harness();
    ask("p1", undefined);
    const a2 = ask("p2", 0);
    ask("p2", a2);
    expect(receipts.holdAfterMs()).to.equal(receipts.reportedBy("p2"));
    setPeers(["p1"]);
    expect(receipts.holdAfterMs(), "p2 removed").to.equal(Number.POSITIVE_INFINITY);
    setPeers(["p1", "p2"]);
    expect(receipts.holdAfterMs(), "p2 back: it must report again").to.equal(0);
    expect(harness({ enabled: false }).receipts.holdAfterMs()).to.equal(Number.POSITIVE_INFINITY);
  });

  it("says how long compaction is held back past the TTL, and warns once per peer that holds it back a TTL more", () => {
    const { receipts, clock, metrics, logger, ask } = harness();
    const a1 = ask("p1", 0);
    const a2 = ask("p2", 0);
    ask("p1", a1);
    ask("p2", a2);
    clock.advance(TTL + 5_000);
    receipts.holdAfterMs();
    expect(metrics.get("dist.tombstones.held_back_ns")).to.equal(5_000 * 1e6);
    const b1 = ask("p1", a1);
    ask("p1", b1);
    clock.advance(TTL);
    receipts.holdAfterMs();
    receipts.holdAfterMs();
    const warned = logger.records.filter((r) => r.message === LOG.compactionHeldBack);
    expect(warned.map((r) => r.fields.peer)).to.deep.equal(["p2"]);
    const b2 = ask("p2", a2);
    ask("p2", b2);
    receipts.holdAfterMs();
    expect(metrics.get("dist.tombstones.held_back_ns")).to.equal(0);
  });
});
