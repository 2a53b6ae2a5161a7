// ReadRepairer.drain() and the interval flush (review fix dce0726): a flush started by the
// batching timer is tracked like any other send, so a clean stop (drain) waits until the repairs
// that flush took from the queue were delivered, not just until the queue is empty.
import { expect } from "chai";
import { ReadRepairer } from "../../../../src/cluster/read/read-repair.js";
import { recordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { PeerRef } from "../../../../src/transport/index.js";
import { flush, ManualClock } from "../../../helpers/manual-clock.js";
import { RecordingTransport } from "../../../helpers/recording-transport.js";

const B: PeerRef = { id: "n2", address: "n2:7946" };
const C: PeerRef = { id: "n3", address: "n3:7946" };

function rec(key: string, version: number, tombstone = false): VersionedRecord {
  return { key, value: tombstone ? "" : `v-${key}`, version, origin: "n1", lastUpdatedMs: 0, expiresAtMs: 0, tombstone };
}

describe("dist/read-repair: drain after an interval flush", () => {
  it("drain() does not resolve while a flush started by the interval timer is still sending; it resolves once those repairs were delivered", async () => {
    const clock = new ManualClock();
    const t = new RecordingTransport();
    t.hold = true;
    const metrics = new Metrics();
    const rr = new ReadRepairer({ transport: t.asTransport(), selfId: "n1", metrics, logger: recordingLogger("error"), timers: clock, batchSize: 10, intervalMs: 100 });
    rr.start();
    rr.repair(B, rec("k1", 1));
    rr.repair(B, rec("k2", 2, true));
    rr.repair(C, rec("k3", 3));
    expect(t.summary(t.sent, false), "queued, nothing sent before the interval").to.deep.equal([]);

    await clock.advanceAsync(100);
    expect(t.summary(t.sent, false), "the timer's flush took the queue and is sending").to.deep.equal(["set->n2:k1", "set->n3:k3"]);
    expect(rr.queued).to.equal(0);

    let drained = false;
    const draining = rr.drain().then(() => (drained = true));
    await flush(5);
    expect(drained, "drain resolved while the timer's repairs were still in flight").to.equal(false);

    t.release(); // the two sets complete; the remove of k2 to n2 follows
    await flush(5);
    expect(drained, "drain resolved before the remove of the same flush was delivered").to.equal(false);
    t.release();
    await draining;
    expect(t.summary(t.delivered, false)).to.deep.equal(["set->n2:k1", "set->n3:k3", "remove->n2:k2"]);
    expect(metrics.get("dist.read_repair")).to.equal(3);
  });
});
