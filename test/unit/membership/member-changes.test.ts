// Membership changes reach the version and the observers once per batch: a gossip message of
// 1,000 new members, or a prune loop, is one change for them. Found by a review: merge() told
// the observers (a snapshot of every member, the event stream's JSON of it) once per entry, so
// one message of 1,023 members held the event loop 0.8 s, 5 s with one /cluster/events subscriber.
import { expect } from "chai";
import { recordingLogger } from "../../../src/log/index.js";
import { MemberTable, type Member } from "../../../src/membership/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function table() {
  const clock = new ManualClock();
  const members = new MemberTable({ selfId: "me", selfAddress: "me:7946", clock, metrics: new Metrics(), logger: recordingLogger("error") });
  const snapshots: number[] = [];
  members.onChange(() => snapshots.push(members.list().length));
  return { clock, members, snapshots };
}

const claim = (id: string, state: Member["state"] = "alive", incarnation = 1): Member => ({ id, address: `${id}:7946`, state, incarnation, lastSeenMs: 0 });

describe("membership/member-changes: one change per batch", () => {
  it("a gossip message adding 1,000 members is one version bump and one observer call, with every member in it", () => {
    const t = table();
    const before = t.members.version;
    const claims = [claim("g"), ...Array.from({ length: 1_000 }, (_, i) => claim(`m${i}`))];
    expect(t.members.merge("g", claims)).to.equal(true);
    expect(t.members.version).to.equal(before + 1);
    expect(t.snapshots).to.deep.equal([1_002]);
    expect(t.members.aliveCount(), "the counts are settled when the merge returns").to.equal(1_002);
  });

  it("a merge that changes nothing bumps nothing and tells no observer", () => {
    const t = table();
    t.members.merge("g", [claim("g")]);
    t.snapshots.length = 0;
    const before = t.members.version;
    expect(t.members.merge("g", [claim("g")])).to.equal(false);
    expect(t.members.version).to.equal(before);
    expect(t.snapshots).to.deep.equal([]);
  });

  it("changes inside batch() (the prober's prune loop) are one change; batches nest", () => {
    const t = table();
    for (let i = 0; i < 50; i++) t.members.addPeer(`p${i}`, `p${i}:7946`);
    for (let i = 0; i < 50; i++) t.members.markSuspect(`p${i}`);
    t.snapshots.length = 0;
    const before = t.members.version;
    t.clock.advance(60_000);
    t.members.batch(() => {
      for (const id of t.members.overdueSuspects(30_000)) t.members.batch(() => t.members.prune(id));
    });
    expect(t.members.version).to.equal(before + 1);
    expect(t.snapshots).to.deep.equal([1]);
    expect(t.members.notDeadCount()).to.equal(1);
  });

  it("a single change outside a batch still reaches the observers at once (in the caller's stack)", () => {
    const t = table();
    t.members.addPeer("p", "p:7946");
    expect(t.snapshots).to.deep.equal([2]);
  });
});
