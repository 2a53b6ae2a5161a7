// Large values across real processes (review fix dce0726): every peer batch, page and answer is
// cut at 8 MiB, so migrations, catch-up pages and Get answers stay under the 16 MiB peer body
// cap however many large values they carry. A join moving 20 MiB of values to the newcomer loses
// no key (a single 20 MiB migration batch used to be refused and the keys lost once the migration
// queue expired); a restarted node catches up from co-owners holding more than 16 MiB each; many
// concurrent GETs of 256 KiB values through a non-owner all answer 200 (the Get answer used to
// pass the cap and fail them all with 503).
import { expect } from "chai";
import { hash32 } from "../../src/core/hash.js";
import { HashRing } from "../../src/ring/index.js";
import { call } from "../helpers/http-call.js";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { eventually, FAST_TIMERS, sleep, waitAllAlive } from "./cluster-helpers.js";

const MIB = 1024 * 1024;
/** Read settle window after a ring change: SERVICE_HINT_TTL (3 s here, at least 10 rebalance intervals). */
const HINT_TTL_MS = 3_000;

/** A value of `bytes` bytes whose content depends on `key`. */
function valueFor(key: string, bytes: number): Buffer {
  return Buffer.alloc(bytes, hash32(key) & 0xff);
}

async function health(n: NodeProcess): Promise<{ catching_up: boolean }> {
  return (await call(`${n.mgmt}/health`)).json<{ catching_up: boolean }>();
}

async function items(n: NodeProcess): Promise<number> {
  return (await call(`${n.mgmt}/stats`)).json<{ items: number }>().items;
}

async function putValue(n: NodeProcess, key: string, body: Buffer, query = ""): Promise<void> {
  const r = await call(`${n.api}/v1/cache/${encodeURIComponent(key)}${query}`, { method: "PUT", body });
  expect(r.status, `PUT ${key} via ${n.id}: ${r.body.toString().slice(0, 200)}`).to.equal(200);
}

/** "node:key:status" of every key whose GET through `nodes` does not answer 200 with its value. */
async function unreadable(nodes: readonly NodeProcess[], keys: readonly string[], bytesOf: (key: string) => number): Promise<string[]> {
  const bad: string[] = [];
  for (const n of nodes) {
    for (const k of keys) {
      const r = await call(`${n.api}/v1/cache/${encodeURIComponent(k)}`);
      if (r.status !== 200 || !r.body.equals(valueFor(k, bytesOf(k)))) bad.push(`${n.id}:${k}:${r.status}`);
    }
  }
  return bad;
}

/** `count` keys `${prefix}-i` whose owners in `ring` satisfy `pred`. */
function keysWhere(ring: HashRing, count: number, prefix: string, pred: (ids: readonly string[]) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) if (pred(ring.ownersOf(`${prefix}-${i}`).ids)) out.push(`${prefix}-${i}`);
  return out;
}

describe("cluster: large values over real processes", function () {
  this.timeout(60_000);
  const running: NodeProcess[] = [];
  const start = async (layout: readonly ClusterPorts[], id: string, env: Record<string, string>) => {
    const n = await startMember(layout, id, env);
    running.push(n);
    return n;
  };
  after(async () => {
    for (const n of running) await n.stop("SIGKILL");
  });

  it("replication 1: a node holding 24 x 1 MiB values is joined by a second node that now owns 20 of them; every key stays readable through both nodes and each node holds exactly the keys it owns", async () => {
    const layout = await clusterPorts(2, "j");
    const env = { ...FAST_TIMERS, SERVICE_REPLICATION: "1", SERVICE_HINT_TTL: `${HINT_TTL_MS}ms` };
    const j1 = await start(layout, "j1", { ...env, SERVICE_SEEDS: "" });
    const ring = HashRing.build(["j1", "j2"], 1);
    const moving = keysWhere(ring, 20, "mv", (ids) => ids[0] === "j2");
    const staying = keysWhere(ring, 4, "st", (ids) => ids[0] === "j1");
    const keys = [...moving, ...staying];
    for (const k of keys) await putValue(j1, k, valueFor(k, MIB), "?consistency=one");
    expect(await items(j1)).to.equal(24);

    const j2 = await start(layout, "j2", env);
    await waitAllAlive([j1, j2], ["j1", "j2"]);
    const counts = await eventually(
      async () => ({ j1: await items(j1), j2: await items(j2) }),
      (v) => v.j1 === staying.length && v.j2 === moving.length,
      15_000,
      200,
    );
    expect(counts, "items per node once the migration is over").to.deep.equal({ j1: staying.length, j2: moving.length });
    await sleep(HINT_TTL_MS + 500); // past the read settle window: a miss is now conclusive
    expect(await unreadable([j1, j2], keys, () => MIB)).to.deep.equal([]);
    const warns = j1.logs.filter((r) => r.message === "rebalance migration forward failed; queued for hint replay");
    expect(warns.map((r) => String(r.error).slice(0, 160)), "failed migrations").to.deep.equal([]);
  });

  describe("three nodes, replication 2", () => {
    let layout: ClusterPorts[];
    let nodes: NodeProcess[];
    // One store shard: a shard's scan goes in slot order, which is insertion order while nothing is
    // removed, so the co-owner scans the 15 MiB value of the last test after its 1 MiB values.
    const env = { ...FAST_TIMERS, SERVICE_REPLICATION: "2", SERVICE_DEAD_AFTER: "10s", SERVICE_MAX_VALUE_BYTES: "15MiB", SERVICE_EVICTION_SHARDS: "1" };
    const ring = HashRing.build(["r1", "r2", "r3"], 2);
    // Primary r2, replica r3: r1 is a non-owner of every one of them.
    const readKeys = keysWhere(ring, 100, "rd", (ids) => ids[0] === "r2" && ids[1] === "r3");
    // Owned by r1 and r3.
    const catchUpKeys = keysWhere(ring, 20, "cu", (ids) => ids.includes("r1") && ids.includes("r3"));

    before(async () => {
      layout = await clusterPorts(3, "r");
      nodes = await Promise.all(layout.map((p) => start(layout, p.id, env)));
      await waitAllAlive(nodes, ["r1", "r2", "r3"]);
    });

    const node = (id: string) => nodes.find((n) => n.id === id) as NodeProcess;
    /** Kills r3 (SIGKILL), starts it empty and waits until it caught up and holds `owned` items. */
    const restartEmpty = async (owned: number) => {
      await node("r3").stop("SIGKILL");
      const r3 = await start(layout, "r3", env);
      nodes[nodes.indexOf(node("r3"))] = r3;
      const state = await eventually(
        async () => ({ catching_up: (await health(r3)).catching_up, items: await items(r3) }),
        (v) => !v.catching_up && v.items === owned,
        20_000,
        200,
      );
      return { r3, state };
    };

    it("100 concurrent GETs of 256 KiB values (25 MiB, one owner) through a non-owner all answer 200 with their values", async () => {
      const r1 = node("r1");
      for (const k of readKeys) await putValue(node("r2"), k, valueFor(k, 256 * 1024), "?consistency=all");
      const owners = (await call(`${r1.api}/v1/owners/${readKeys[0]}`)).json<{ owners: string[] }>().owners;
      expect(owners, "the test's ring matches the node's").to.deep.equal(["r2", "r3"]);
      const reads = await Promise.all(readKeys.map((k) => call(`${r1.api}/v1/cache/${k}`)));
      const bad = reads.map((r, i) => ({ key: readKeys[i] as string, r })).filter(({ key, r }) => r.status !== 200 || !r.body.equals(valueFor(key, 256 * 1024)));
      expect(bad.map(({ key, r }) => `${key}:${r.status}:${r.body.toString().slice(0, 120)}`)).to.deep.equal([]);
    });

    it("a node restarted empty (SIGKILL) catches up from co-owners each holding more than 16 MiB of values it owns: /health reports catching_up false and it holds every key it owns", async () => {
      for (const k of catchUpKeys) await putValue(node("r1"), k, valueFor(k, MIB), "?consistency=all");
      const owned = readKeys.length + catchUpKeys.length;
      expect(await items(node("r3"))).to.equal(owned);
      const { r3, state } = await restartEmpty(owned);
      expect(state).to.deep.equal({ catching_up: false, items: owned });
      const fetchFailures = r3.logs.filter((r) => r.message === "merkle sync fetch failed" && !/ECONNREFUSED|unavailable|timed out/i.test(String(r.error)));
      expect(fetchFailures.map((r) => String(r.error).slice(0, 160)), "sync failures other than unreachability").to.deep.equal([]);
      expect(await unreadable([r3], catchUpKeys, () => MIB)).to.deep.equal([]);
    });

    it("a node restarted empty catches up when a co-owner holds a 15 MiB value (the largest SERVICE_MAX_VALUE_BYTES allows) among 1 MiB values: no Merkle range page passes the 16 MiB cap", async () => {
      // Written last into the co-owner's one store shard, the 15 MiB value is scanned after the 20
      // values of 1 MiB: it comes to a page that already holds some of them. (With several shards
      // the store's hash key, drawn at start, decides the order: about one run in 21 scanned it
      // first, and the test did not reach the cap.)
      const huge = findKey(ring, (_k, ids) => ids.includes("r1") && ids.includes("r3"));
      const bytesOf = (k: string) => (k === huge ? 15 * MIB : MIB);
      await putValue(node("r1"), huge, valueFor(huge, 15 * MIB), "?consistency=all");
      const owned = readKeys.length + catchUpKeys.length + 1;
      const { r3, state } = await restartEmpty(owned);
      const fetchFailures = r3.logs.filter((r) => r.message === "merkle sync fetch failed" && !/ECONNREFUSED|unavailable|timed out/i.test(String(r.error)));
      expect({ state, failures: [...new Set(fetchFailures.map((r) => `${String(r.peer)}: ${String(r.error).slice(0, 140)}`))] }).to.deep.equal({
        state: { catching_up: false, items: owned },
        failures: [],
      });
      expect(await unreadable([r3], [...catchUpKeys, huge], bytesOf)).to.deep.equal([]);
    });
  });
});

/** The first key `big-i` whose owners in `ring` satisfy `pred`. */
function findKey(ring: HashRing, pred: (key: string, ids: readonly string[]) => boolean): string {
  for (let i = 0; i < 1_000_000; i++) {
    const k = `big-${i}`;
    if (pred(k, ring.ownersOf(k).ids)) return k;
  }
  throw new Error("no key satisfies the predicate");
}
