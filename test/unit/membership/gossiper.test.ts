// Joining and gossip: bare-address seeds learn their id from the peer's health answer; a failed
// push to a peer logs `gossip push failed`; nodes the local node lost (pruned) are knocked on.
import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { seededRandom } from "../../../src/core/random.js";
import { LOG, recordingLogger } from "../../../src/log/index.js";
import { Gossiper, MemberTable } from "../../../src/membership/index.js";
import { Metrics } from "../../../src/observability/index.js";
import type { PeerMember, PeerRef, PeerTransport } from "../../../src/transport/index.js";
import { ManualClock, flush } from "../../helpers/manual-clock.js";

interface FakePeer {
  id: string;
  up: boolean;
}

function fakeTransport(peers: Record<string, FakePeer>, calls: string[]): PeerTransport {
  const at = (to: PeerRef) => {
    const p = peers[to.address];
    if (!p || !p.up) throw new CacheError("UNAVAILABLE", `${to.address} unreachable`);
    return p;
  };
  return {
    health: async (to: PeerRef) => {
      calls.push(`health ${to.address}`);
      return { node: at(to).id, draining: false, incarnation: 1 };
    },
    gossip: async (to: PeerRef, _from: string, _members: readonly PeerMember[]) => {
      calls.push(`gossip ${to.address}`);
      const p = at(to);
      return [{ id: p.id, address: to.address, state: "alive", incarnation: 1, lastSeenMs: 0 }] as PeerMember[];
    },
  } as unknown as PeerTransport;
}

describe("Gossiper", () => {
  const setup = (seeds: Array<{ id: string; address: string }>, peers: Record<string, FakePeer>) => {
    const clock = new ManualClock();
    const logger = recordingLogger("debug");
    const members = new MemberTable({ selfId: "n1", selfAddress: "n1:1", clock, metrics: new Metrics(), logger });
    for (const s of seeds) if (s.id !== "") members.addPeer(s.id, s.address);
    const calls: string[] = [];
    const g = new Gossiper({ members, transport: fakeTransport(peers, calls), timers: clock, random: seededRandom(3), logger, intervalMs: 1000, seeds, timeoutMs: 500 });
    return { clock, logger, members, calls, g };
  };

  it("a bare-address seed is asked who it is and joins the member list under the id it answers with", async () => {
    const { members, g, calls } = setup([{ id: "", address: "seed:1" }], { "seed:1": { id: "n7", up: true } });
    await g.join();
    expect(calls[0]).to.equal("health seed:1");
    expect(members.get("n7")).to.include({ address: "seed:1", state: "alive" });
  });

  it("an unreachable bare seed is retried on the next rounds until it answers", async () => {
    const peers = { "seed:1": { id: "n7", up: false } };
    const { members, g } = setup([{ id: "", address: "seed:1" }], peers);
    await g.join();
    expect(members.get("n7")).to.equal(undefined);
    peers["seed:1"].up = true;
    await g.runGossipTick();
    expect(members.get("n7")?.state).to.equal("alive");
  });

  it("a failed push to an alive peer logs warn `gossip push failed`; failures to knock on absent nodes do not", async () => {
    const { logger, g } = setup([{ id: "n2", address: "n2:1" }], { "n2:1": { id: "n2", up: false } });
    await g.runGossipTick();
    const failed = logger.records.filter((r) => r.message === LOG.gossipPushFailed);
    expect(failed.map((r) => [r.level, r.fields.peer])).to.deep.equal([["warn", "n2"]]);
  });

  it("each round also knocks on one pruned member, so a healed partition rejoins", async () => {
    const peers = { "n2:1": { id: "n2", up: true } };
    const { members, g, calls } = setup([], peers);
    members.addPeer("n2", "n2:1");
    members.markSuspect("n2");
    members.prune("n2");
    expect(members.get("n2")).to.equal(undefined);
    await g.runGossipTick();
    expect(calls).to.include("gossip n2:1");
    expect(members.get("n2")?.state, "its own claim brings it back").to.equal("alive");
    await flush();
  });
});
