// The ring follows membership: a change that leaves the ring's members as they are (a member
// turning suspect keeps its positions) builds nothing; one that adds or removes a member builds
// the ring once, on the next read, and tells the ring-change observers. Found by a review: a
// probe round's suspect marks among 2,000 members rebuilt the whole ring for each (2.5 s of CPU
// in one profile).
import { expect } from "chai";
import { RingFollower } from "../../../src/cluster/ring-follower.js";
import { HashRing } from "../../../src/ring/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

describe("cluster/ring-follower", () => {
  let builds = 0;
  const realBuild = HashRing.build.bind(HashRing);
  beforeEach(() => {
    builds = 0;
    (HashRing as { build: typeof HashRing.build }).build = (...args: Parameters<typeof HashRing.build>) => {
      builds++;
      return realBuild(...args);
    };
  });
  afterEach(() => ((HashRing as { build: typeof HashRing.build }).build = realBuild));

  function follower(ids: string[]) {
    let members = ids;
    const observers: Array<() => void> = [];
    const f = new RingFollower({ members: { ringMembers: () => members, onChange: (l) => void observers.push(l) }, replication: 3, clock: new ManualClock() });
    let ringChanges = 0;
    f.onRingChange(() => ringChanges++);
    return {
      f,
      change(next: string[]) {
        members = next;
        for (const o of observers) o();
      },
      ringChanges: () => ringChanges,
    };
  }

  it("a change that keeps the ring's members (in any order) builds nothing and moves nothing", () => {
    const t = follower(["a", "b", "c"]);
    const ring = t.f.current();
    builds = 0;
    for (let i = 0; i < 100; i++) {
      t.change(i % 2 ? ["c", "b", "a"] : ["a", "b", "c"]);
      expect(t.f.current()).to.equal(ring);
    }
    expect(builds).to.equal(0);
    expect(t.ringChanges()).to.equal(0);
  });

  it("a member added or removed: one build on the next read, however many changes came before it, and one ring change", () => {
    const t = follower(["a", "b", "c"]);
    const ring = t.f.current();
    builds = 0;
    t.change(["a", "b", "c", "d"]);
    t.change(["a", "b", "c", "d"]);
    const next = t.f.current();
    expect(builds).to.equal(1);
    expect(next).to.not.equal(ring);
    expect(next.nodes).to.deep.equal(["a", "b", "c", "d"]);
    expect(t.ringChanges()).to.equal(1);
    t.change(["a", "b", "d"]);
    expect(t.f.current().nodes).to.deep.equal(["a", "b", "d"]);
    expect(builds).to.equal(2);
  });
});
