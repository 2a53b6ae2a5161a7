// Membership across real processes on loopback: a SIGKILLed node is marked suspect, then pruned
// (members view, metrics, log records, SSE stream); restarted with the same id and ports it rejoins
// and catches up; an idle cluster stays quiet; manual removal through DELETE /cluster/members/{id}.
import { expect } from "chai";
import { clusterPorts, startMember, type ClusterPorts, type LogRecord, type NodeProcess } from "../helpers/node-process.js";
import {
  FAST_TIMERS,
  allAlive,
  describeMembers,
  eventually,
  getRaw,
  logIndex,
  members,
  membersFrames,
  metrics,
  peerRecords,
  put,
  sleep,
  stateOf,
  stats,
  subscribeEvents,
  waitAllAlive,
  type MemberState,
  type MembersBody,
  type Metrics,
  type SseClient,
} from "./cluster-helpers.js";

const SUSPECT = "peer marked suspect (timeout)";
const PRUNED = "peer pruned (dead)";
const REMOVED = "peer removed from membership";
const ADDED = "peer added to membership";
const IDS = ["n1", "n2", "n3"];

/**
 * Polls `node`'s /cluster/members every 30 ms until `id` is no longer listed; returns the distinct
 * states seen in order ("gone" last) and the last view.
 */
async function watchUntilGone(node: NodeProcess, id: string, timeoutMs: number): Promise<{ seen: Array<MemberState | "gone">; last: MembersBody }> {
  const seen: Array<MemberState | "gone"> = [];
  const last = await eventually(
    () => members(node),
    (v) => {
      const s = stateOf(v, id) ?? "gone";
      if (seen[seen.length - 1] !== s) seen.push(s);
      return s === "gone";
    },
    timeoutMs,
    30,
  );
  return { seen, last };
}

describe("cluster membership across real processes: failure detection, pruning, rejoin", function () {
  this.timeout(60_000);
  const env = { ...FAST_TIMERS };
  let layout: ClusterPorts[];
  const nodes = new Map<string, NodeProcess>();
  const node = (id: string) => nodes.get(id) as NodeProcess;
  const survivors = () => [node("n1"), node("n2")];
  /** Every key written, with its value. */
  const written = new Map<string, string>();
  let sse: SseClient | undefined;
  let sseOpenedAt = 0;
  let killOffsets: Record<string, number> = {};
  let metricsBeforeKill: Record<string, Metrics> = {};

  async function write(through: NodeProcess, key: string, value: string): Promise<void> {
    const w = await put(through, key, value);
    expect(w.status, `PUT ${key} through ${through.id}: ${w.text}`).to.equal(200);
    written.set(key, value);
  }

  before(async () => {
    layout = await clusterPorts(3);
    for (const n of await Promise.all(layout.map((p) => startMember(layout, p.id, env)))) nodes.set(n.id, n);
  });

  after(async () => {
    sse?.close();
    await Promise.all([...nodes.values()].map((n) => n.stop("SIGKILL")));
  });

  it("three nodes started with each other as seeds all list each other alive", async () => {
    const views = await waitAllAlive([...nodes.values()], IDS);
    for (const v of views) expect(allAlive(v, IDS), describeMembers(v)).to.equal(true);
    for (let i = 0; i < 60; i++) await write(node(IDS[i % 3] as string), `before-${i}`, `before-value-${i}`);
  });

  it("a SIGKILLed node is marked suspect, then pruned by both survivors (members view, dist.nodes.dead/removed, logs suspect -> pruned -> removed)", async () => {
    sse = await subscribeEvents(node("n1"));
    sseOpenedAt = Date.now();
    expect(sse.status).to.equal(200);
    await sse.waitFor((f) => f.event === "heartbeat", 3000);
    killOffsets = { n1: node("n1").logs.length, n2: node("n2").logs.length };
    metricsBeforeKill = { n1: await metrics(node("n1")), n2: await metrics(node("n2")) };

    const victim = node("n3");
    expect(await victim.stop("SIGKILL")).to.equal("SIGKILL");
    const watching = survivors().map((s) => watchUntilGone(s, "n3", 10_000));
    // Writes while n3 is down but still suspect: its copies become hints.
    for (let i = 0; i < 20; i++) await write(survivors()[i % 2] as NodeProcess, `absent-early-${i}`, `absent-early-value-${i}`);
    const watched = await Promise.all(watching);

    for (const [i, s] of survivors().entries()) {
      const { seen, last } = watched[i] as { seen: Array<MemberState | "gone">; last: MembersBody };
      expect(stateOf(last, "n3"), `${s.id} still lists n3: ${describeMembers(last)}`).to.equal(undefined);
      expect(seen, `${s.id}: states of n3 seen in /cluster/members`).to.include("suspect");
      expect(seen.indexOf("suspect"), `${s.id}: suspect must come before the removal, saw ${seen.join(" -> ")}`).to.be.lessThan(seen.indexOf("gone"));
      expect(allAlive(last, ["n1", "n2"]), describeMembers(last)).to.equal(true);

      const m = await metrics(s);
      const before = metricsBeforeKill[s.id] as Metrics;
      expect(m["dist.nodes.dead"], `${s.id} dist.nodes.dead`).to.equal((before["dist.nodes.dead"] as number) + 1);
      expect(m["dist.nodes.removed"], `${s.id} dist.nodes.removed`).to.equal((before["dist.nodes.removed"] as number) + 1);
      expect(m["dist.nodes.suspect"], `${s.id} dist.nodes.suspect`).to.equal(0);
      expect(m["dist.members.alive"], `${s.id} dist.members.alive`).to.equal(2);

      const from = killOffsets[s.id] as number;
      const trail = peerRecords(s.logs, "n3", from).join("\n");
      const pruned = logIndex(s.logs, PRUNED, "n3", from);
      const removed = logIndex(s.logs, REMOVED, "n3", from);
      expect(pruned, `${s.id} logged no "${PRUNED}" for n3:\n${trail}`).to.be.greaterThan(-1);
      expect((s.logs[pruned] as LogRecord).level).to.equal("warn");
      expect(removed, `${s.id}: "${REMOVED}" must follow "${PRUNED}":\n${trail}`).to.be.greaterThan(pruned);
      expect((s.logs[removed] as LogRecord).level).to.equal("info");
      const suspect = logIndex(s.logs, SUSPECT, "n3", from);
      if (suspect >= 0) {
        expect((s.logs[suspect] as LogRecord).level).to.equal("warn");
        expect(suspect, `${s.id}: "${SUSPECT}" must precede "${PRUNED}":\n${trail}`).to.be.lessThan(pruned);
      }
    }
    // A survivor may learn the suspicion through gossip first (no timeout of its own, so no
    // record there), but the node whose probe timed out first must have logged it.
    const suspectLogged = survivors().filter((s) => logIndex(s.logs, SUSPECT, "n3", killOffsets[s.id]) >= 0);
    expect(suspectLogged.map((s) => s.id), `nobody logged "${SUSPECT}" for n3`).to.have.length.greaterThan(0);

    // Writes while n3 is pruned: it is no longer an owner of anything.
    for (let i = 0; i < 20; i++) await write(survivors()[i % 2] as NodeProcess, `absent-late-${i}`, `absent-late-value-${i}`);
  });

  it("the SSE stream of a survivor delivers members frames (all alive, then n3 suspect, then n3 pruned) and a heartbeat frame every second", async () => {
    const s = sse as SseClient;
    expect(s.contentType).to.match(/^text\/event-stream/);
    expect(s.retry(), "retry: line").to.be.a("number").and.greaterThan(0);
    // Let the stream run for at least 4 s in all so several periodic heartbeats arrive.
    await s.waitFor((f) => f.event === "heartbeat" && f.at - sseOpenedAt >= 4000, 8000);

    expect(s.frames[0]?.event, "first frame").to.equal("members");
    expect(s.frames[1]?.event, "second frame").to.equal("heartbeat");
    const mf = membersFrames(s.frames);
    const first = mf[0]?.body as MembersBody;
    expect(allAlive(first, IDS), `first members frame: ${describeMembers(first)}`).to.equal(true);
    const suspectAt = mf.findIndex((f) => stateOf(f.body, "n3") === "suspect");
    expect(suspectAt, `members frames: ${mf.map((f) => describeMembers(f.body)).join(" | ")}`).to.be.greaterThan(0);
    const prunedAt = mf.findIndex((f, i) => i > suspectAt && stateOf(f.body, "n3") === undefined);
    expect(prunedAt, `no members frame without n3 after the suspect one: ${mf.map((f) => describeMembers(f.body)).join(" | ")}`).to.be.greaterThan(suspectAt);
    const prunedBody = (mf[prunedAt] as { body: MembersBody }).body;
    expect(allAlive(prunedBody, ["n1", "n2"]), describeMembers(prunedBody)).to.equal(true);
    expect(prunedBody.membership_version).to.be.greaterThan((mf[suspectAt] as { body: MembersBody }).body.membership_version);

    const beats = s.frames.filter((f) => f.event === "heartbeat");
    const spanS = ((beats[beats.length - 1] as { at: number }).at - sseOpenedAt) / 1000;
    // beats[0] is the on-connect frame; from beats[1] on they are periodic (1 s; the bounds leave
    // room for event-loop lag on a busy machine).
    expect(beats.length, `${beats.length} heartbeat frames over ${spanS.toFixed(1)} s`).to.be.at.least(Math.floor(spanS));
    const gaps = beats.slice(2).map((b, i) => b.at - (beats[i + 1] as { at: number }).at);
    expect(gaps.length).to.be.at.least(2);
    for (const g of gaps) expect(g, `gaps between heartbeat frames (ms): ${gaps.join(", ")}`).to.be.within(500, 2000);
    const lastBeat = JSON.parse((beats[beats.length - 1] as { data: string }).data) as Metrics;
    expect(lastBeat["dist.nodes.dead"], "dist.nodes.dead in the last heartbeat frame").to.be.at.least(1);
    expect(lastBeat["dist.members.alive"], "dist.members.alive in the last heartbeat frame").to.equal(2);
  });

  it("the killed node restarted with the same id and ports rejoins: every node lists all three alive again", async () => {
    const joinOffsets = { n1: node("n1").logs.length, n2: node("n2").logs.length };
    const framesBefore = (sse as SseClient).frames.length;
    nodes.set("n3", await startMember(layout, "n3", env));
    const views = await waitAllAlive([...nodes.values()], IDS, 10_000);
    for (const v of views) expect(allAlive(v, IDS), describeMembers(v)).to.equal(true);
    for (const s of survivors()) {
      expect(logIndex(s.logs, ADDED, "n3", joinOffsets[s.id as "n1" | "n2"]), `${s.id}: "${ADDED}" for n3`).to.be.greaterThan(-1);
    }
    await (sse as SseClient).waitFor((f) => f.event === "members" && stateOf(JSON.parse(f.data) as MembersBody, "n3") === "alive", 5000, framesBefore);
    sse?.close();
    sse = undefined;
  });

  it("the rejoined node catches up: it holds a copy of every key written before and during its absence and serves each with the right value", async () => {
    const n3 = node("n3");
    // Every key is owned by all three nodes (replication 3). Checked before any read through n3,
    // since a read on n3 may fetch and store a missing key itself.
    const held = await eventually(() => stats(n3), (s) => s.items === written.size, 10_000, 100);
    expect(held.items, `items held by the restarted n3 (keys written: ${written.size})`).to.equal(written.size);
    // The copies came from the cluster (a catch-up pull or a rebalance push), and n3 says so.
    const movedTo3 = ((await metrics(n3))["dist.merkle.keys_pulled"] ?? 0) + (await Promise.all(survivors().map(async (s) => (await metrics(s))["dist.rebalance.keys"] ?? 0))).reduce((a, b) => a + b, 0);
    expect(movedTo3, "keys pulled by n3 plus keys pushed to it by rebalance").to.be.greaterThan(0);
    const health = await eventually(async () => (await (await fetch(`${n3.mgmt}/health`)).json()) as { catching_up: boolean }, (h) => !h.catching_up, 10_000, 100);
    expect(health.catching_up, "n3 reports it has caught up").to.equal(false);

    const wrong: string[] = [];
    for (const [key, value] of written) {
      for (const n of nodes.values()) {
        const r = await getRaw(n, key, "?consistency=one");
        if (r.status !== 200 || r.body.toString() !== value) wrong.push(`${n.id} ${key}: ${r.status} ${r.body.toString().slice(0, 60)}`);
      }
    }
    expect(wrong, `reads that did not return the written value (of ${written.size * 3})`).to.deep.equal([]);
  });

  it("DELETE /cluster/members/{id} of a pruned peer answers 200 and logs only \"peer removed from membership\"", async () => {
    const n1 = node("n1");
    expect(await node("n3").stop("SIGKILL")).to.equal("SIGKILL");
    await Promise.all(survivors().map((s) => watchUntilGone(s, "n3", 10_000)));
    await sleep(300);
    const from = n1.logs.length;
    const removedBefore = (await metrics(n1))["dist.nodes.removed"] as number;
    const peerLabels = async () => [...new Set([...(await (await fetch(`${n1.mgmt}/metrics`)).text()).matchAll(/peer="([^"]*)"/g)].map((m) => m[1]))].sort();
    expect(await peerLabels(), "peer series on /metrics before the DELETE").to.deep.equal(["n2", "n3"]);

    const res = await fetch(`${n1.mgmt}/cluster/members/n3`, { method: "DELETE" });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body).to.deep.equal({ id: "n3", removed: true });
    await n1.waitForLog(REMOVED, 2000, (r) => r.peer === "n3" && n1.logs.indexOf(r) >= from);
    await sleep(500);
    expect(peerRecords(n1.logs, "n3", from).map((l) => l.split(" ").slice(2).join(" ")), "records naming n3 after the DELETE").to.deep.equal([REMOVED]);
    // The pruned peer was already counted in dist.nodes.removed when it was pruned.
    expect((await metrics(n1))["dist.nodes.removed"]).to.equal(removedBefore);
    expect(await peerLabels(), "a removed peer leaves no series on /metrics").to.deep.equal(["n2"]);
    const again = await fetch(`${n1.mgmt}/cluster/members/n3`, { method: "DELETE" });
    expect(again.status, "a second DELETE of the same id").to.equal(404);
  });
});

describe("cluster membership across real processes: manual removal of a live peer", function () {
  this.timeout(60_000);
  // Default-like membership timers (1 s heartbeat, 500 ms probe timeout) so loopback jitter
  // cannot cause a false suspicion; the assertions stay strict.
  let nodes: NodeProcess[];
  const node = (id: string) => nodes.find((n) => n.id === id) as NodeProcess;

  before(async () => {
    const layout = await clusterPorts(3);
    nodes = await Promise.all(layout.map((p) => startMember(layout, p.id, { SERVICE_HEARTBEAT: "1s", SERVICE_GOSSIP_INTERVAL: "1s", SERVICE_REBALANCE_INTERVAL: "250ms" })));
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("DELETE /cluster/members/{id} of a live peer answers 200, drops it from the members view (SSE frame) and logs only \"peer removed from membership\"", async () => {
    const n1 = node("n1");
    const sse = await subscribeEvents(n1);
    try {
      await sse.waitFor((f) => f.event === "heartbeat", 3000);
      const framesFrom = sse.frames.length;
      const from = n1.logs.length;
      const removedBefore = (await metrics(n1))["dist.nodes.removed"] as number;
      const res = await fetch(`${n1.mgmt}/cluster/members/n3`, { method: "DELETE" });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body).to.deep.equal({ id: "n3", removed: true });
      const i = await sse.waitFor((f) => f.event === "members" && stateOf(JSON.parse(f.data) as MembersBody, "n3") === undefined, 3000, framesFrom);
      const frame = JSON.parse((sse.frames[i] as { data: string }).data) as MembersBody;
      expect(allAlive(frame, ["n1", "n2"]), describeMembers(frame)).to.equal(true);
      expect((await metrics(n1))["dist.nodes.removed"], "dist.nodes.removed").to.equal(removedBefore + 1);

      const records = peerRecords(n1.logs, "n3", from).map((l) => l.split(" ").slice(2).join(" "));
      expect(records[0], `records naming n3 after the DELETE: ${records.join(" | ")}`).to.equal(REMOVED);
      expect(records.filter((m) => m === PRUNED || m === SUSPECT), "no pruned or suspect record for a manual removal").to.deep.equal([]);
      expect(records.filter((m) => m === REMOVED), "exactly one removal record").to.have.length(1);
    } finally {
      sse.close();
    }
  });
});
