// MemberTable and the drain hand-off: a draining member holds no ring position (its own entry
// included), the flag travels with gossip (own claim at or above the known incarnation, hearsay
// only above it), a restarted node refutes its draining predecessor, peers' views of this draining
// node are recorded as confirmations, and a member's own `left` claim is a manual removal (it no
// longer counts towards quorum sizes; hearsay of it is ignored; its next own claim brings it back).
import { expect } from "chai";
import { recordingLogger } from "../../../src/log/index.js";
import { MemberTable, type Member } from "../../../src/membership/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function table(selfId = "me", peers: readonly string[] = ["a", "b"]): MemberTable {
  const members = new MemberTable({ selfId, selfAddress: `${selfId}:7946`, clock: new ManualClock(), metrics: new Metrics(), logger: recordingLogger("debug") });
  for (const p of peers) members.addPeer(p, `${p}:7946`);
  return members;
}

const claim = (id: string, incarnation: number, extra: Partial<Member> = {}): Member => ({ id, address: `${id}:7946`, state: "alive", incarnation, lastSeenMs: 0, ...extra });

describe("membership/member-table: drain and leave", () => {
  it("startDraining takes this node off its own ring, bumps its incarnation once and gossips draining", () => {
    const m = table();
    const version = m.version;
    expect(m.startDraining()).to.equal(true);
    expect(m.startDraining(), "one-way and idempotent").to.equal(false);
    expect(m.ringMembers().sort()).to.deep.equal(["a", "b"]);
    expect(m.selfIncarnation).to.equal(2);
    expect(m.version).to.equal(version + 1);
    expect(m.list().find((x) => x.id === "me")).to.include({ draining: true, incarnation: 2 });
  });

  it("a peer's own draining claim (at or above the known incarnation) takes it off the ring; hearsay needs a higher incarnation", () => {
    const m = table();
    m.merge("c", [claim("a", 1, { draining: true })]);
    expect(m.ringMembers().sort(), "hearsay at the same incarnation is ignored").to.deep.equal(["a", "b", "me"]);
    m.merge("c", [claim("a", 2, { draining: true })]);
    expect(m.ringMembers().sort(), "hearsay above it is taken").to.deep.equal(["b", "me"]);
    m.merge("b", [claim("b", 1, { draining: true })]);
    expect(m.ringMembers()).to.deep.equal(["me"]);
    expect(m.get("b")?.draining).to.equal(true);
  });

  it("a restarted member (own claim below the known incarnation) stays draining until it refutes with a higher incarnation", () => {
    const m = table();
    m.merge("a", [claim("a", 5, { draining: true })]);
    m.merge("a", [claim("a", 1)]);
    expect(m.get("a")?.draining, "an older own claim does not clear it").to.equal(true);
    m.merge("a", [claim("a", 6)]);
    expect(m.get("a")?.draining).to.equal(undefined);
    expect(m.ringMembers()).to.include("a");
  });

  it("a node refutes a claim that it drains (or left) at or above its incarnation when it does not", () => {
    const m = table();
    m.merge("a", [claim("me", 4, { draining: true })]);
    expect(m.selfIncarnation).to.equal(5);
    m.merge("a", [claim("me", 5, { left: true })]);
    expect(m.selfIncarnation).to.equal(6);
    m.startDraining();
    const inc = m.selfIncarnation;
    m.merge("a", [claim("me", inc, { draining: true })]);
    expect(m.selfIncarnation, "a claim that agrees is not refuted").to.equal(inc);
  });

  it("records which peers have shown this draining node as draining", () => {
    const m = table();
    m.merge("a", [claim("me", 1, { draining: true })]);
    m.startDraining();
    expect(m.seesSelfDraining("a"), "confirmations before the drain do not count").to.equal(false);
    m.merge("a", [claim("me", 1)]);
    expect(m.seesSelfDraining("a")).to.equal(false);
    m.merge("a", [claim("me", m.selfIncarnation, { draining: true })]);
    expect(m.seesSelfDraining("a")).to.equal(true);
    expect(m.seesSelfDraining("b")).to.equal(false);
  });

  it("a member's own left claim removes it like a manual removal; hearsay of it is ignored; its next own claim brings it back", () => {
    const m = table("me", ["a", "b", "c"]);
    expect(m.knownCount()).to.equal(4);
    m.merge("b", [claim("a", 3, { left: true })]);
    expect(m.get("a"), "hearsay").to.not.equal(undefined);
    m.merge("a", [claim("a", 3, { left: true }), claim("b", 1)]);
    expect(m.get("a")).to.equal(undefined);
    expect(m.knownCount()).to.equal(3);
    expect(m.isRemoved("a")).to.equal(true);
    m.merge("b", [claim("a", 3)]);
    expect(m.get("a"), "hearsay does not bring a left member back").to.equal(undefined);
    m.merge("a", [claim("a", 1)]);
    expect(m.get("a")?.state).to.equal("alive");
    expect(m.knownCount()).to.equal(4);
  });

  it("leave() makes this node's own entry carry left at a higher incarnation", () => {
    const m = table();
    m.startDraining();
    m.leave();
    expect(m.list().find((x) => x.id === "me")).to.include({ left: true, draining: true, incarnation: 3 });
  });

  it("contacted turns true once a peer answers a probe or sends its own claim, not on hearsay", () => {
    const m = table();
    expect(m.contacted).to.equal(false);
    m.merge("a", [claim("b", 1)]);
    expect(m.contacted).to.equal(false);
    m.merge("a", [claim("a", 1)]);
    expect(m.contacted).to.equal(true);
    const n = table();
    n.probeSucceeded("a");
    expect(n.contacted).to.equal(true);
  });
});

describe("membership/member-table: a ring of draining members only", () => {
  it("when every live member drains they keep their ring positions (writes admitted before the drain still have owners)", () => {
    const m = table("me", []);
    m.startDraining();
    expect(m.ringMembers()).to.deep.equal(["me"]);
    const n = table("me", ["a"]);
    n.startDraining();
    n.merge("a", [claim("a", 2, { draining: true })]);
    expect(n.ringMembers().sort()).to.deep.equal(["a", "me"]);
  });
});
