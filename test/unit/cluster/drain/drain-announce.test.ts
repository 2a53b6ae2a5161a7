// A draining node pushes its member list to at most DRAIN_LIMITS.announcePerTick unconfirmed
// peers per tick, taking turns until every one has confirmed. Found by a review: with thousands
// of members, pushing to all of them at once (each push carrying every member) held the event
// loop for seconds and grew memory by hundreds of MB.
import { expect } from "chai";
import { DRAIN_LIMITS } from "../../../../src/core/limits.js";
import { DrainHandoff, type DrainHandoffDeps } from "../../../../src/cluster/drain/drain-handoff.js";
import type { PeerRef } from "../../../../src/transport/index.js";
import { ManualClock } from "../../../helpers/manual-clock.js";

function handoff(peerCount: number) {
  const peers: PeerRef[] = Array.from({ length: peerCount }, (_, i) => ({ id: `p${String(i).padStart(3, "0")}`, address: `127.0.0.1:${i + 1}` }));
  const confirmed = new Set<string>();
  const announced: string[][] = [[]];
  const stub = <T>(v: T) => v as never;
  const deps: DrainHandoffDeps = {
    view: { alivePeers: () => peers, knownCount: () => peerCount + 1, ring: () => stub({}) },
    lifecycle: { draining: true, inFlightWrites: 0 } as never,
    membership: { seesSelfDraining: (id) => confirmed.has(id), left: false, peersLeaving: () => false },
    announce: (p) => {
      (announced.at(-1) as string[]).push(p.id);
      confirmed.add(p.id);
      return Promise.resolve(true);
    },
    hints: stub({}),
    migrations: stub({ size: () => 0 }),
    keys: stub({ running: true, done: false, notQueued: 0, run: () => Promise.resolve() }),
    hintHandoff: stub({ runPass: () => Promise.resolve() }),
    replay: () => Promise.resolve(),
    repairsQueued: () => 0,
    timers: new ManualClock(),
    intervalMs: DRAIN_LIMITS.tickMs,
  };
  return { drain: new DrainHandoff(deps), announced, confirmed };
}

describe("cluster/drain: announcing the drain", () => {
  it(`pushes to at most ${DRAIN_LIMITS.announcePerTick} unconfirmed peers per tick, and reaches every peer once in turn`, async () => {
    const h = handoff(100);
    for (let tick = 0; tick < 7; tick++) {
      await h.drain.runDrainTick();
      h.announced.push([]);
    }
    const perTick = h.announced.filter((t) => t.length > 0);
    expect(perTick.map((t) => t.length)).to.deep.equal([16, 16, 16, 16, 16, 16, 4]);
    expect(new Set(perTick.flat()).size, "each peer once").to.equal(100);
    expect(h.confirmed.size).to.equal(100);
  });

  it("a small cluster is announced to in one tick", async () => {
    const h = handoff(5);
    await h.drain.runDrainTick();
    expect(h.announced[0]).to.have.length(5);
  });
});
