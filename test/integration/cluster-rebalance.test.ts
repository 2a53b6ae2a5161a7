// Rebalance across real processes: a fourth node joins a three-node cluster loaded with 3000 keys.
// Afterwards every key reads back from all four nodes, about a quarter of the primaries moved
// (to the new node), and each node holds exactly the keys it owns.
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { FAST_TIMERS, batchPut, eventually, getRaw, mapLimit, members, metrics, ownersOf, sleep, stats, waitAllAlive, describeMembers, type Metrics } from "./cluster-helpers.js";

const KEYS = 3000;
/**
 * The hint TTL also sets the window after a ring change (or a start) in which an owner's local
 * miss is looked up on the other owners: max(hint TTL, 10 x rebalance interval). Here it is 3 s,
 * and each old node sends its ~750 keys for the new node 16 per batch, at most one batch per
 * 100 ms tick: at least 4.7 s. So the data keeps moving after that window closes, as it does with
 * the defaults (30 s TTL, 64 keys per 250 ms) once an old node has more than ~7700 keys to hand
 * over. It also makes a consistency=one read on the new node after convergence show what that
 * node really holds.
 */
const SETTLE_WINDOW_MS = 3000;
const REBALANCE_BATCH = 16;

/** Membership records (suspicions, prunes, joins) logged by `nodes` since `sinceMs`, for messages. */
function membershipNoise(nodes: readonly NodeProcess[], sinceMs: number): string[] {
  const wanted = new Set(["peer marked suspect (timeout)", "peer pruned (dead)", "peer added to membership", "peer removed from membership", "self-refuted suspect/dead claim from peer"]);
  return nodes.flatMap((n) =>
    n.logs.filter((r) => wanted.has(r.message) && Date.parse(String(r.timestamp)) >= sinceMs).map((r) => `${String(r.timestamp)} ${n.id}: ${r.message} ${String(r.peer ?? "")}`),
  );
}

describe("rebalance across real processes: a fourth node joins a loaded three-node cluster", function () {
  this.timeout(90_000);
  // Fast data movement and gossip; the default 1 s heartbeat and 6 s dead window keep a busy
  // (CPU-starved) node from being pruned by mistake, which would change the ring under the test.
  const env = {
    SERVICE_GOSSIP_INTERVAL: FAST_TIMERS.SERVICE_GOSSIP_INTERVAL as string,
    SERVICE_REBALANCE_INTERVAL: FAST_TIMERS.SERVICE_REBALANCE_INTERVAL as string,
    SERVICE_HINT_REPLAY: FAST_TIMERS.SERVICE_HINT_REPLAY as string,
    SERVICE_HINT_TTL: `${SETTLE_WINDOW_MS}ms`,
    SERVICE_REBALANCE_BATCH_SIZE: String(REBALANCE_BATCH),
  };
  let layout: ClusterPorts[];
  let nodes: NodeProcess[] = [];
  const keys = Array.from({ length: KEYS }, (_, i) => `rb-${String(i).padStart(4, "0")}`);
  const values = new Map<string, Buffer>(keys.map((k) => [k, randomBytes(24)]));
  const primaryBefore = new Map<string, string>();
  const ownersAfter = new Map<string, string[]>();
  let convergedAt = 0;
  const node = (id: string) => nodes.find((n) => n.id === id) as NodeProcess;

  before(async () => {
    layout = await clusterPorts(4);
    const first3 = layout.slice(0, 3);
    // The first three nodes know only each other; the fourth is seeded with all three.
    nodes = await Promise.all(first3.map((p) => startMember(first3, p.id, env)));
    await waitAllAlive(nodes, ["n1", "n2", "n3"]);
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it(`three nodes store ${KEYS} keys through batch put and agree on each key's primary`, async () => {
    for (let b = 0; b < KEYS / 1000; b++) {
      const slice = keys.slice(b * 1000, (b + 1) * 1000);
      const results = await batchPut(
        nodes[b % 3] as NodeProcess,
        slice.map((key) => ({ key, value: (values.get(key) as Buffer).toString("base64"), value_encoding: "base64" as const })),
      );
      const failed = results.filter((r) => r.status !== 200);
      expect(failed, `failed items of batch ${b}`).to.deep.equal([]);
    }
    const owners = await mapLimit(keys, 32, (k) => ownersOf(node("n1"), k));
    keys.forEach((k, i) => primaryBefore.set(k, (owners[i] as string[])[0] as string));
    for (const k of keys.slice(0, 50)) {
      for (const n of nodes) expect((await ownersOf(n, k))[0], `primary of ${k} seen by ${n.id}`).to.equal(primaryBefore.get(k));
    }
  });

  // Reads while the data moves are proven by the simulation (test/sim/rebalance-join.test.ts);
  // here real processes join and converge over the wire.
  it("a fourth process joins: every node lists four alive members, agrees on the owners, and the rebalance converges (each node holds exactly the keys it owns)", async () => {
    const startedN4At = Date.now();
    const n4 = await startMember(layout, "n4", env);
    nodes.push(n4);
    const ids = ["n1", "n2", "n3", "n4"];
    const views = await waitAllAlive(nodes, ids, 15_000);
    for (const v of views) expect(v.members.map((m) => m.id), describeMembers(v)).to.deep.equal(ids);

    // Every node's ring includes n4: they agree on the owners of every key.
    const lists = await eventually(
      () => Promise.all(nodes.map((n) => mapLimit(keys.slice(0, 200), 32, (k) => ownersOf(n, k)))),
      (per) => per.every((l) => JSON.stringify(l) === JSON.stringify(per[0])),
      10_000,
    );
    for (const l of lists) expect(l, "owner lists of the first 200 keys, per node").to.deep.equal(lists[0]);
    const after = await mapLimit(keys, 32, (k) => ownersOf(n4, k));
    keys.forEach((k, i) => ownersAfter.set(k, after[i] as string[]));

    // Converged: each node holds exactly the keys it owns and the rebalance counters are still.
    const expected = new Map(ids.map((id) => [id, keys.filter((k) => (ownersAfter.get(k) as string[]).includes(id)).length]));
    let lastCounters = "";
    const convergence = await eventually(
      async () => {
        const held = await Promise.all(nodes.map(async (n) => [n.id, (await stats(n)).items] as const));
        const counters = JSON.stringify(await Promise.all(nodes.map(async (n) => [(await metrics(n))["dist.rebalance.batches"]])));
        const still = counters === lastCounters;
        lastCounters = counters;
        return { held, still };
      },
      (s) => s.still && s.held.every(([id, items]) => items === expected.get(id)),
      20_000,
      300,
    );
    convergedAt = Date.now();
    const noise = membershipNoise(nodes, startedN4At).filter((l) => !(l.includes("added to membership n4") || / n4: peer added/.test(l)));
    if (noise.length > 0) console.log(`      membership changes besides n4 joining:\n        ${noise.join("\n        ")}`);
    const heldNow = convergence.held.map(([id, n]) => `${id}:${n}/${expected.get(id)}`).join(" ");
    expect(convergence.held.every(([id, n]) => n === expected.get(id)), `rebalance converged within 20 s (items held/owned: ${heldNow}; +${convergedAt - startedN4At} ms)`).to.equal(true);
  });

  it(`after convergence all ${KEYS} keys read back with the right bytes from each of the 4 nodes`, async () => {
    const wrong: string[] = [];
    for (const n of nodes) {
      await mapLimit(keys, 64, async (key) => {
        const r = await getRaw(n, key);
        if (r.status !== 200 || !r.body.equals(values.get(key) as Buffer)) wrong.push(`${n.id} ${key}: ${r.status} ${r.body.toString("hex").slice(0, 48)}`);
      });
    }
    expect(wrong.slice(0, 40), `${wrong.length} of ${KEYS * nodes.length} reads wrong`).to.deep.equal([]);
  });

  it("about 1/4 of the primaries moved, all of them to the new node, and every old node migrated keys (dist.rebalance.keys > 0)", async () => {
    const moved = keys.filter((k) => (ownersAfter.get(k) as string[])[0] !== primaryBefore.get(k));
    const fraction = moved.length / KEYS;
    console.log(`      primaries moved: ${moved.length} of ${KEYS} = ${fraction.toFixed(3)}`);
    expect(fraction, "fraction of keys whose primary changed").to.be.within(0.15, 0.35);
    const elsewhere = moved.filter((k) => (ownersAfter.get(k) as string[])[0] !== "n4");
    expect(elsewhere.slice(0, 10), `${elsewhere.length} keys whose primary moved to an old node`).to.deep.equal([]);
    for (const k of keys) expect(ownersAfter.get(k), `owners of ${k}`).to.have.length(3);
    for (const id of ["n1", "n2", "n3"]) {
      const m: Metrics = await metrics(node(id));
      expect(m["dist.rebalance.keys"], `${id} dist.rebalance.keys`).to.be.greaterThan(0);
      expect(m["dist.rebalance.batches"], `${id} dist.rebalance.batches`).to.be.greaterThan(0);
    }
  });

  it("each node holds exactly the keys it owns: the new node serves its keys from its own copies, the old nodes released the keys they lost", async () => {
    const ids = ["n1", "n2", "n3", "n4"];
    for (const id of ids) {
      const own = keys.filter((k) => (ownersAfter.get(k) as string[]).includes(id)).length;
      expect((await stats(node(id))).items, `items held by ${id} (owner of ${own} keys); membership records since convergence: ${membershipNoise(nodes, convergedAt).join(" | ") || "none"}`).to.equal(own);
    }
    // Past the settle window a local miss on an owner is not looked up elsewhere any more, so a
    // consistency=one read on n4 answers from n4's own copy.
    await sleep(Math.max(0, convergedAt + SETTLE_WINDOW_MS + 500 - Date.now()));
    const n4 = node("n4");
    const mine = keys.filter((k) => (ownersAfter.get(k) as string[]).includes("n4"));
    const sample = mine.filter((_, i) => i % 10 === 0);
    const wrong: string[] = [];
    await mapLimit(sample, 16, async (key) => {
      const r = await getRaw(n4, key, "?consistency=one");
      if (r.status !== 200 || !r.body.equals(values.get(key) as Buffer)) wrong.push(`${key}: ${r.status}`);
    });
    expect(wrong, `local reads on n4 of ${sample.length} keys it owns`).to.deep.equal([]);
    expect((await members(n4)).members.every((m) => m.state === "alive")).to.equal(true);
  });
});
