// The receiving side of a hint hand-off (acceptHandOff): hints join this node's queue under the
// address its own membership knows for the target; a target it does not know is refused (the
// sender's address was taken instead, so one peer could have this node replay, with its own
// peer credential, to any host and port it named, for as many made-up targets as it liked).
import { expect } from "chai";
import { acceptHandOff, type HandOffReceiverDeps } from "../../../../src/cluster/hints/hand-off-receiver.js";
import { HINTED_METRICS } from "../../../../src/cluster/hints/hint-metrics.js";
import { HintQueue } from "../../../../src/cluster/hints/hint-queue.js";
import { CacheError } from "../../../../src/core/errors.js";
import { recordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import { ManualClock } from "../../../helpers/manual-clock.js";

function fixture(members: Record<string, string>) {
  const clock = new ManualClock();
  const hints = new HintQueue({ clock, metrics: new Metrics(), logger: recordingLogger("error"), limits: { ttlMs: 30_000, maxPerNode: 10_000, maxBytes: 2 ** 26 }, names: HINTED_METRICS });
  const applied: VersionedRecord[] = [];
  const deps: HandOffReceiverDeps = { selfId: "self", hints, clock, addressOf: (id) => members[id], applyHere: (recs) => applied.push(...recs) };
  const rec = (key: string): VersionedRecord => ({ key, value: "v", version: clock.nowMs() * 1000, origin: "n9", lastUpdatedMs: clock.nowMs(), expiresAtMs: 0, tombstone: false });
  return { deps, hints, applied, rec };
}

describe("dist/hand-off receiver", () => {
  it("queues hints for a member under the address this node knows for it, not the one the sender names", () => {
    const f = fixture({ n2: "10.0.0.2:7946" });
    expect(acceptHandOff(f.deps, { id: "n2", address: "203.0.113.9:22" }, [f.rec("a"), f.rec("b")])).to.deep.equal([true, true]);
    expect(f.hints.targetPeers()).to.deep.equal([{ id: "n2", address: "10.0.0.2:7946" }]);
  });

  it("refuses a target this node does not know, whatever address the sender names, and queues nothing", () => {
    const f = fixture({ n2: "10.0.0.2:7946" });
    let err: unknown;
    try {
      acceptHandOff(f.deps, { id: "n7", address: "127.0.0.1:6379" }, [f.rec("a")]);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(CacheError);
    expect((err as CacheError).code).to.equal("BAD_REQUEST");
    expect((err as CacheError).message).to.match(/not a member this node knows/);
    expect(f.hints.size()).to.equal(0);
  });

  it("applies hints addressed to this node itself at once", () => {
    const f = fixture({});
    expect(acceptHandOff(f.deps, { id: "self", address: "" }, [f.rec("a")])).to.deep.equal([true]);
    expect(f.applied.map((r) => r.key)).to.deep.equal(["a"]);
    expect(f.hints.size()).to.equal(0);
  });
});
