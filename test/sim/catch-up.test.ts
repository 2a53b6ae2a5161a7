// Catch-up of a restarted node (review fix dce0726). Suspect peers keep their ring positions, so
// they are co-owners to catch up from: a node restarted (empty) during a network blip that makes
// it suspect its peers does not report caught up (AntiEntropy.caughtUp, management /health
// `catching_up`) until it has synced with them, and then holds every key it owns. A node whose
// peers are all pruned is alone and caught up. "caught up with peers" is logged (info) when it is.
import http from "node:http";
import type net from "node:net";
import { expect } from "chai";
import { fromUtf8 } from "../../src/core/byte-string.js";
import { LOG } from "../../src/log/index.js";
import type { HypercacheNode } from "../../src/node.js";
import { simCluster, withSeed, type SimCluster, type SimNode } from "../helpers/sim-cluster.js";
import { text } from "./data-path-fixtures.js";

const KEYS = Array.from({ length: 50 }, (_, i) => `k${i}`);
const value = (k: string) => `v-${k}`;

/** GET /health of `node`'s management app, served on a loopback port for the call. */
async function managementHealth(node: HypercacheNode): Promise<{ catching_up: boolean; status: string }> {
  const server = http.createServer(node.managementApp.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/health`);
    return (await res.json()) as { catching_up: boolean; status: string };
  } finally {
    server.close();
  }
}

const caughtUpRecords = (n: SimNode) => n.logger.records.filter((r) => r.message === LOG.caughtUp);
const states = (n: SimNode) => n.node.members.list().filter((m) => m.id !== n.id).map((m) => `${m.id}:${m.state}`).sort();

describe("sim/catch-up: a restarted node catches up from alive and suspect co-owners", () => {
  let c: SimCluster | undefined;
  afterEach(async () => {
    await c?.stop();
    c = undefined;
  });

  /** 3 nodes (replication 3, auto-sync off: only catch-up moves data) holding KEYS on every owner. */
  async function loaded(seed: number): Promise<SimCluster> {
    c = await simCluster({ nodes: 3, seed, env: { SERVICE_AUTO_SYNC_INTERVAL: "0" } });
    await c.advance(3_000);
    for (const k of KEYS) await c.node("n1").cache.admitWrite().set(k, fromUtf8(value(k)), 0, "all");
    await c.advance(1_000);
    return c;
  }

  it(
    "restarted during a blip that makes it suspect both peers, it reports catching up (caughtUp false, /health catching_up true) until it has synced with them, then holds every key and logs 'caught up with peers' once",
    withSeed(321, async () => {
      const c = await loaded(321);
      c.chaos.partition(["n3"], ["n1", "n2"]);
      const n3 = await c.restart("n3");
      await c.advance(2_500);
      expect(states(n3), "n3 suspects its peers (the dead window is 6 s)").to.deep.equal(["n1:suspect", "n2:suspect"]);
      expect(n3.node.store.items).to.equal(0);
      expect(n3.node.loops.catchUp.caughtUp, "caught up while its co-owners are only suspect and it holds nothing").to.equal(false);
      expect((await managementHealth(n3.node)).catching_up).to.equal(true);
      await c.advance(2_000);
      expect(n3.node.loops.catchUp.caughtUp, "still not caught up 4.5 s in").to.equal(false);
      expect(caughtUpRecords(n3)).to.deep.equal([]);

      c.chaos.heal();
      await c.advance(3_000);
      expect(states(n3)).to.deep.equal(["n1:alive", "n2:alive"]);
      expect(n3.node.loops.catchUp.caughtUp).to.equal(true);
      expect((await managementHealth(n3.node)).catching_up).to.equal(false);
      expect(KEYS.filter((k) => text(n3.node.store.peek(k)?.value) !== value(k)), "keys n3 owns but does not hold").to.deep.equal([]);
      const records = caughtUpRecords(n3);
      expect(records.map((r) => ({ level: r.level, peers: r.fields.peers }))).to.deep.equal([{ level: "info", peers: 2 }]);
    }),
  );

  it(
    "restarted while both peers are down, it is not caught up while they are suspect, and is caught up (alone, 'caught up with peers' with peers 0) once they are pruned",
    withSeed(322, async () => {
      const c = await loaded(322);
      c.crash("n1");
      c.crash("n2");
      const n3 = await c.restart("n3");
      await c.advance(3_000);
      expect(states(n3)).to.deep.equal(["n1:suspect", "n2:suspect"]);
      expect(n3.node.loops.catchUp.caughtUp, "caught up with suspect co-owners it never reached").to.equal(false);
      expect((await managementHealth(n3.node)).catching_up).to.equal(true);
      expect(caughtUpRecords(n3)).to.deep.equal([]);

      await c.advance(6_000); // past SERVICE_DEAD_AFTER (6 s): both pruned, n3 is alone on its ring
      expect(n3.node.members.list().filter((m) => m.id !== "n3" && m.state !== "dead")).to.deep.equal([]);
      expect(n3.node.loops.catchUp.caughtUp).to.equal(true);
      expect((await managementHealth(n3.node)).catching_up).to.equal(false);
      const records = caughtUpRecords(n3).map((r) => ({ level: r.level, peers: r.fields.peers }));
      expect(records.length).to.be.at.least(1);
      expect(records.filter((r) => r.level !== "info" || r.peers !== 0)).to.deep.equal([]);
    }),
  );
  it(
    "caught_up stays ok after a ring change starts a new catch-up, even when /readyz was never polled in between",
    withSeed(323, async () => {
      c = await simCluster({ nodes: 3, seed: 323, env: { SERVICE_AUTO_SYNC_INTERVAL: "0" } });
      await c.advance(3_000);
      const n1 = c.sim("n1");
      expect(n1.node.loops.catchUp.caughtUp, "the start-up catch-up ended").to.equal(true);
      c.crash("n2"); // a suspect co-owner: the next catch-up cannot finish
      c.join("n4");
      await c.advance(1_500);
      expect(n1.node.members.list().map((m) => m.id), "n1 knows n4 (a ring change)").to.include("n4");
      expect(n1.node.loops.catchUp.caughtUp, "the catch-up after the ring change is still running").to.equal(false);
      expect(n1.node.readiness.checks().caught_up).to.deep.equal({ ok: true, detail: "caught up with peers" });
    }),
  );
});
