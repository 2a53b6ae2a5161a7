// Sync receipts on a ManualClock: what a requester reports, and up to when the answering side may
// compact its tombstones (sync-receipts.ts).
import { expect } from "chai";
import { SyncReceipts } from "../../../src/cluster/anti-entropy/sync-receipts.js";
import { LOG, recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const TTL = 20_000;

function harness(opts: { enabled?: boolean } = {}) {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  let peers = ["p1", "p2"];
  const receipts = new SyncReceipts({ view: { ringPeers: () => peers.map((id) => ({ id, address: `${id}:7946` })) }, clock, metrics, logger, tombstoneTtlMs: TTL, enabled: opts.enabled ?? true });
  const t0 = clock.nowMs();
  return { clock, metrics, logger, receipts, t0, setPeers: (ids: string[]) => (peers = ids) };
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

  it("as answerer: holds back every tombstone that arrived after the smallest report of the ring peers; one that never reported holds everything", () => {
    const { receipts, t0 } = harness();
    expect(receipts.holdAfterMs(), "no reports yet").to.equal(0);
    receipts.noteReported("p1", t0 - 500);
    expect(receipts.holdAfterMs(), "p2 has reported nothing").to.equal(0);
    receipts.noteReported("p2", t0 - 100);
    expect(receipts.holdAfterMs()).to.equal(t0 - 500);
    receipts.noteReported("p1", t0 - 50);
    expect(receipts.holdAfterMs()).to.equal(t0 - 100);
    expect(receipts.reportedBy("p1")).to.equal(t0 - 50);
  });

  it("a report from the future is not believed past now; a lower report (the peer restarted) replaces a higher one", () => {
    const { receipts, t0 } = harness();
    receipts.noteReported("p1", t0 + 60_000);
    expect(receipts.reportedBy("p1")).to.equal(t0);
    receipts.noteReported("p1", 0);
    expect(receipts.reportedBy("p1")).to.equal(0);
  });

  it("a peer from before the report field holds nothing back; peers off the ring are forgotten; with anti-entropy off nothing is held", () => {
    const { receipts, t0, setPeers } = harness();
    receipts.noteReported("p1", undefined);
    receipts.noteReported("p2", t0 - 10);
    expect(receipts.holdAfterMs()).to.equal(t0 - 10);
    setPeers(["p1"]);
    expect(receipts.holdAfterMs(), "p2 left the ring").to.equal(Number.POSITIVE_INFINITY);
    setPeers(["p1", "p2"]);
    expect(receipts.holdAfterMs(), "p2 back: it must report again").to.equal(0);
    expect(harness({ enabled: false }).receipts.holdAfterMs()).to.equal(Number.POSITIVE_INFINITY);
  });

  it("says how long compaction is held back past the TTL, and warns once per peer that holds it back a TTL more", () => {
    const { receipts, clock, metrics, logger, t0 } = harness();
    receipts.noteReported("p1", t0);
    receipts.noteReported("p2", t0);
    clock.advance(TTL + 5_000);
    receipts.holdAfterMs();
    expect(metrics.get("dist.tombstones.held_back_ns")).to.equal(5_000 * 1e6);
    receipts.noteReported("p1", clock.nowMs());
    clock.advance(TTL);
    receipts.holdAfterMs();
    receipts.holdAfterMs();
    const warned = logger.records.filter((r) => r.message === LOG.compactionHeldBack);
    expect(warned.map((r) => r.fields.peer)).to.deep.equal(["p2"]);
    receipts.noteReported("p2", clock.nowMs());
    receipts.holdAfterMs();
    expect(metrics.get("dist.tombstones.held_back_ns")).to.equal(0);
  });
});
