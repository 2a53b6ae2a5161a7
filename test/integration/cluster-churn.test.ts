// Churn across real processes: three nodes (replication 3, quorum writes) under a steady write
// load through random nodes while each node in turn is stopped with SIGTERM and restarted with
// the same id and ports. Afterwards every acknowledged write must read back with its latest
// acknowledged value from every node, with consistency one and quorum.
import { expect } from "chai";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { FAST_TIMERS, describeMembers, eventually, getRaw, mapLimit, members, put, sleep, waitAllAlive } from "./cluster-helpers.js";

const IDS = ["n1", "n2", "n3"];
const HOT_KEYS = 200;
const COLD_KEYS = 100;
const WRITERS = 4;
/** The write load stops 1.5 s after the last restart, or after this long at most. */
const MAX_LOAD_MS = 40_000;

/** What the clients know about one key. */
interface KeyHistory {
  /** Value of the last write acknowledged with 200. */
  acked?: string;
  /** Values written after it that were not acknowledged (503, transport error): they may or may not have been applied. */
  unsure: string[];
}

interface LoadStats {
  acked: number;
  unacked: number;
  statuses: Map<string, number>;
  unexpected: string[];
}

describe("churn across real processes: rolling restarts under a quorum write load", function () {
  this.timeout(120_000);
  // A restarted node is back well within the dead window (6 s, as the default 6 x 1 s heartbeat is
  // for a production restart of a few seconds), so it is never pruned: the ring does not change
  // and the rolling restart is deterministic. A 500 ms heartbeat (250 ms probe timeout) keeps a
  // busy node from being suspected by mistake all the time.
  const env = { ...FAST_TIMERS, SERVICE_HEARTBEAT: "500ms", SERVICE_DEAD_AFTER: "6s", SERVICE_REPLICATION: "3", SERVICE_WRITE_CONSISTENCY: "quorum" };
  let layout: ClusterPorts[];
  const nodes = new Map<string, NodeProcess>();
  /** Every process started, restarted ones included (their logs are read after the churn). */
  const processes: NodeProcess[] = [];
  const history = new Map<string, KeyHistory>();
  const hot = Array.from({ length: HOT_KEYS }, (_, i) => `hot-${String(i).padStart(3, "0")}`);
  const cold = Array.from({ length: COLD_KEYS }, (_, i) => `cold-${String(i).padStart(3, "0")}`);
  const load: LoadStats = { acked: 0, unacked: 0, statuses: new Map(), unexpected: [] };

  const count = (what: string) => load.statuses.set(what, (load.statuses.get(what) ?? 0) + 1);

  /**
   * One client write with fail-over: tries the nodes in random order, moving on after a 5xx or a
   * transport error, never after a 4xx. Acknowledged only on a 200.
   */
  async function clientWrite(key: string, value: string): Promise<void> {
    const h = history.get(key) ?? { unsure: [] };
    history.set(key, h);
    const order = [...nodes.values()].sort(() => Math.random() - 0.5);
    for (const n of order) {
      let status: number;
      let text = "";
      try {
        const res = await fetch(`${n.api}/v1/cache/${encodeURIComponent(key)}`, { method: "PUT", body: value, signal: AbortSignal.timeout(5000) });
        status = res.status;
        text = await res.text();
      } catch (err) {
        count(`transport error (${(err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).name})`);
        continue;
      }
      if (status === 200) {
        count("200");
        load.acked++;
        h.acked = value;
        h.unsure = [];
        return;
      }
      let code = "";
      try {
        code = (JSON.parse(text) as { code?: string }).code ?? "";
      } catch {
        code = "unparsable";
      }
      count(`${status} ${code}`);
      if (status < 500) {
        load.unexpected.push(`${n.id} PUT ${key}: ${status} ${text.slice(0, 200)}`);
        break;
      }
    }
    load.unacked++;
    h.unsure.push(value);
  }

  before(async () => {
    layout = await clusterPorts(3);
    for (const n of await Promise.all(layout.map((p) => startMember(layout, p.id, env)))) {
      nodes.set(n.id, n);
      processes.push(n);
    }
    await waitAllAlive([...nodes.values()], IDS);
  });

  after(async () => {
    await Promise.all([...nodes.values()].map((n) => n.stop("SIGKILL")));
  });

  it(`${COLD_KEYS} keys written once before the churn are acknowledged by quorum`, async () => {
    await mapLimit(cold, 8, async (key, i) => {
      const w = await put(nodes.get(IDS[i % 3] as string) as NodeProcess, key, `cold-value-${i}`);
      expect(w.status, `${key}: ${w.text}`).to.equal(200);
      history.set(key, { acked: `cold-value-${i}`, unsure: [] });
    });
  });

  it(`under a steady write load (${WRITERS} writers, ${HOT_KEYS} keys, random nodes), every node is restarted in turn: SIGTERM exits 0, the restarted node is alive in every member list`, async () => {
    let stop = false;
    const started = Date.now();
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const mine = hot.filter((_, i) => i % WRITERS === w);
      // Each writer owns its keys and cycles through them, so one key's writes are sequential.
      for (let seq = 0; !stop && Date.now() - started < MAX_LOAD_MS; seq++) {
        const key = mine[seq % mine.length] as string;
        await clientWrite(key, `w${w}-s${seq}`);
      }
    });

    const restarts: string[] = [];
    try {
      await sleep(1500);
      for (const id of IDS) {
        const t0 = Date.now();
        const old = nodes.get(id) as NodeProcess;
        const code = await old.stop("SIGTERM");
        expect(code, `${id} exit code after SIGTERM; stderr: ${old.stderr.join("")}`).to.equal(0);
        expect(old.logs.some((r) => r.message === "hypercache-server stopped cleanly"), `${id} logged "hypercache-server stopped cleanly"`).to.equal(true);
        const t1 = Date.now();
        const fresh = await startMember(layout, id, env);
        nodes.set(id, fresh);
        processes.push(fresh);
        const views = await waitAllAlive([...nodes.values()], IDS, 15_000);
        for (const v of views) expect(v.members.every((m) => m.state === "alive") && v.members.length === 3, describeMembers(v)).to.equal(true);
        restarts.push(`${id}: stopped in ${t1 - t0} ms, back and alive everywhere after ${Date.now() - t1} ms`);
      }
      await sleep(1500);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    const summary = `${load.acked} acknowledged, ${load.unacked} not acknowledged in ${((Date.now() - started) / 1000).toFixed(1)} s; answers: ${[...load.statuses].map(([k, v]) => `${k} x${v}`).join(", ")}`;
    console.log(`      ${restarts.join("; ")}`);
    console.log(`      writes: ${summary}`);
    const tally = (message: string) => processes.reduce((n, p) => n + p.logs.filter((r) => r.message === message).length, 0);
    console.log(`      membership records during the churn: ${tally("peer marked suspect (timeout)")} suspect, ${tally("peer pruned (dead)")} pruned, ${tally("peer added to membership")} added (start-up included)`);
    expect(load.unexpected.slice(0, 20), "writes answered with a 4xx").to.deep.equal([]);
    expect(load.acked, summary).to.be.at.least(200);
    for (const k of hot) expect(history.get(k)?.acked, `${k} never acknowledged (${summary})`).to.be.a("string");
  });

  it("afterwards every acknowledged write reads back with its latest acknowledged value from every node, with consistency one and with quorum", async () => {
    const keys = [...cold, ...hot];
    /** The values a correct cluster may answer for `key`: its last acknowledged value, or a later unacknowledged one. */
    const allowed = (key: string) => {
      const h = history.get(key) as KeyHistory;
      return [h.acked as string, ...h.unsure];
    };
    const check = async (level: "one" | "quorum") => {
      const wrong: string[] = [];
      for (const n of nodes.values()) {
        await mapLimit(keys, 16, async (key) => {
          const r = await getRaw(n, key, `?consistency=${level}`);
          const got = r.status === 200 ? r.body.toString() : `<${r.status}>`;
          if (!allowed(key).includes(got)) wrong.push(`${n.id} ${key} (${level}): got ${got}, acknowledged ${history.get(key)?.acked}`);
        });
      }
      return wrong;
    };
    // ONE first (quorum reads repair replicas, which would hide a replica that never caught up).
    const one = await eventually(() => check("one"), (w) => w.length === 0, 10_000, 500);
    const quorum = await eventually(() => check("quorum"), (w) => w.length === 0, 10_000, 500);
    const byNode = (w: string[]) => IDS.map((id) => `${id}:${w.filter((l) => l.startsWith(`${id} `)).length}`).join(" ");
    const lostKeys = (w: string[]) => new Set(w.map((l) => l.split(" ")[1])).size;
    console.log(`      wrong reads: consistency=one ${one.length} (${lostKeys(one)} keys), consistency=quorum ${quorum.length} (${lostKeys(quorum)} keys)`);
    expect(one.slice(0, 30), `${one.length} wrong consistency=one reads of ${keys.length * 3} after 10 s (per node ${byNode(one)}; ${lostKeys(one)} distinct keys)`).to.deep.equal([]);
    expect(quorum.slice(0, 30), `${quorum.length} wrong consistency=quorum reads of ${keys.length * 3} (per node ${byNode(quorum)}; ${lostKeys(quorum)} distinct keys)`).to.deep.equal([]);

    // Every node answers the same value for each key.
    const finals = await Promise.all([...nodes.values()].map((n) => mapLimit(keys, 16, async (k) => (await getRaw(n, k, "?consistency=one")).body.toString())));
    for (const f of finals.slice(1)) expect(f, "values per key, node by node").to.deep.equal(finals[0]);
    const late = keys.filter((k, i) => finals[0]?.[i] !== history.get(k)?.acked);
    console.log(`      ${late.length} keys ended on a value written after their last acknowledged one (not acknowledged, but applied)`);
    for (const n of nodes.values()) expect((await members(n)).members.map((m) => m.state)).to.deep.equal(["alive", "alive", "alive"]);
  });
});
