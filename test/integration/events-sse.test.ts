// GET /cluster/events on a real node: the SSE framing (retry line, then one members frame with
// the /cluster/members body and one heartbeat frame with the /dist/metrics body), heartbeats about
// every second, a members frame per membership change (caused by gossip on the dist listener's
// POST /internal/gossip), and a stalled subscriber (raw TCP, stops reading) that loses frames,
// counted in dist.events.dropped, while another subscriber keeps getting every frame on time and
// the node keeps answering.
import net from "node:net";
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { openEventStream, sleep, type SseFrame, type SseStream } from "./observability-helpers.js";

type Json = Record<string, unknown>;

interface MembersBody {
  node: string;
  replication: number;
  virtual_nodes: number;
  membership_version: number;
  members: Array<{ id: string; address: string; state: string; incarnation: number; last_seen: string }>;
}

/** Proto JSON of hypercache.peer.v1.Member (GossipRequest.members). */
interface WireMember {
  id: string;
  address: string;
  state: "MEMBER_STATE_ALIVE" | "MEMBER_STATE_SUSPECT" | "MEMBER_STATE_DEAD";
  incarnation: string;
}

/** POST /internal/gossip on the dist listener: `from` pushes its member list. */
async function gossip(node: NodeProcess, from: string, members: WireMember[]): Promise<void> {
  const r = await call(`${node.dist}/internal/gossip`, { method: "POST", body: JSON.stringify({ from, members }), headers: { "Content-Type": "application/json" } });
  if (r.status !== 200) throw new Error(`gossip from ${from}: ${r.status} ${r.body.toString().slice(0, 200)}`);
}

const getJson = async <T = Json>(url: string): Promise<T> => {
  const r = await call(url);
  expect(r.status, `${url}: ${r.body.toString().slice(0, 200)}`).to.equal(200);
  return r.json<T>();
};

const membersOf = (f: SseFrame) => JSON.parse(f.data) as MembersBody;
const heartbeatsAfter = (s: SseStream, from: number) => s.frames.slice(from).filter((f) => f.event === "heartbeat");

describe("events: GET /cluster/events on a real node", function () {
  this.timeout(40_000);
  let node: NodeProcess;
  const streams: SseStream[] = [];
  const sockets: net.Socket[] = [];

  const open = async () => {
    const s = await openEventStream(node.mgmtPort);
    streams.push(s);
    return s;
  };

  before(async () => {
    // Probes and gossip pushes are 60 s apart: the ghost peers below are neither probed nor
    // pruned during the test, so every membership change comes from the test.
    node = await startNode({ id: "events-1", env: { SERVICE_HEARTBEAT: "60s", SERVICE_GOSSIP_INTERVAL: "60s" } });
  });

  after(async () => {
    for (const s of streams) s.close();
    for (const s of sockets) s.destroy();
    await node?.stop("SIGKILL");
  });

  it("answers 200 text/event-stream; the stream starts with a retry: line, then one members frame (the /cluster/members body) and one heartbeat frame (the /dist/metrics body)", async () => {
    const s = await open();
    expect(s.status).to.equal(200);
    expect(s.headers["content-type"]).to.match(/^text\/event-stream/);
    await s.waitFor((f) => f.event === "heartbeat", 3000);
    const members = await getJson<MembersBody>(`${node.mgmt}/cluster/members`);
    const metrics = await getJson<Record<string, number>>(`${node.mgmt}/dist/metrics`);

    expect(s.text()).to.match(/^retry: \d+\n\n/);
    expect(s.frames[0]?.event).to.equal("members");
    expect(s.frames[1]?.event).to.equal("heartbeat");
    // The raw framing: "event: <name>\ndata: <json>" (one line each, the JSON has no newline).
    expect(s.frames[0]?.raw).to.match(/^event: members\ndata: \{.*\}$/);
    expect(s.frames[1]?.raw).to.match(/^event: heartbeat\ndata: \{.*\}$/);
    expect(s.text().indexOf("event: members"), "retry line first").to.be.greaterThan(s.text().indexOf("retry:"));

    expect(membersOf(s.frames[0] as SseFrame)).to.deep.equal(members);
    const beat = JSON.parse((s.frames[1] as SseFrame).data) as Record<string, unknown>;
    expect(Object.keys(beat).sort()).to.deep.equal(Object.keys(metrics).sort());
    for (const [k, v] of Object.entries(beat)) expect(v, k).to.be.a("number");
    for (const k of ["dist.members.alive", "dist.membership.version", "dist.drains", "dist.write.attempts"]) expect(beat[k], k).to.equal(metrics[k]);
    s.close();
  });

  it("sends a heartbeat frame about every second after the first two frames (3 or 4 in 3.5 s, 0.7-1.3 s apart)", async () => {
    const s = await open();
    const first = await s.waitFor((f) => f.event === "heartbeat", 3000);
    await sleep(3500);
    const beats = heartbeatsAfter(s, first + 1);
    expect(beats.length, `heartbeats in 3.5 s: ${beats.length}`).to.be.within(3, 4);
    const gaps = beats.slice(1).map((b, i) => b.at - (beats[i] as SseFrame).at);
    for (const g of gaps) expect(g, `gaps ${JSON.stringify(gaps)}`).to.be.within(700, 1300);
    expect(s.frames.slice(first + 1).every((f) => f.event === "heartbeat"), "no members frame without a change").to.equal(true);
    s.close();
  });

  it("a membership change (gossip naming a new peer as its own claim) produces one members frame listing the new peer", async () => {
    const s = await open();
    const first = await s.waitFor((f) => f.event === "heartbeat", 3000);
    const initial = membersOf(s.frames[0] as SseFrame);
    await gossip(node, "ghost-1", [{ id: "ghost-1", address: "127.0.0.1:9", state: "MEMBER_STATE_ALIVE", incarnation: "1" }]);
    const at = await s.waitFor((f) => f.event === "members", 2000, first + 1);
    const body = membersOf(s.frames[at] as SseFrame);
    expect(body.membership_version).to.equal(initial.membership_version + 1);
    expect(body.members.map((m) => [m.id, m.address, m.state])).to.deep.equal([
      ["events-1", `127.0.0.1:${node.distPort}`, "alive"],
      ["ghost-1", "127.0.0.1:9", "alive"],
    ]);
    expect(body).to.deep.equal(await getJson<MembersBody>(`${node.mgmt}/cluster/members`));
    await sleep(300);
    expect(s.frames.slice(first + 1).filter((f) => f.event === "members"), "one frame for one change").to.have.length(1);
    s.close();
  });

  it("a stalled subscriber (stops reading) loses frames, counted in dist.events.dropped, while another subscriber gets every frame and heartbeats on time and /health stays fast", async () => {
    // The stalled subscriber: raw TCP, reads the response head, then stops reading.
    const stalled = net.connect(node.mgmtPort, "127.0.0.1");
    sockets.push(stalled);
    let stalledClosed = false;
    stalled.on("close", () => (stalledClosed = true));
    stalled.on("error", () => undefined);
    const head = await new Promise<string>((resolve, reject) => {
      let text = "";
      const onData = (c: Buffer) => {
        text += c.toString("latin1");
        if (text.includes("\r\n\r\n")) {
          stalled.off("data", onData);
          stalled.pause();
          resolve(text.slice(0, text.indexOf("\r\n\r\n")));
        }
      };
      stalled.on("data", onData);
      stalled.once("error", reject);
      stalled.write("GET /cluster/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
    });
    expect(head).to.match(/^HTTP\/1\.1 200 /);
    expect(head.toLowerCase()).to.include("content-type: text/event-stream");

    // The reading subscriber.
    const reader = await open();
    const readerFirst = await reader.waitFor((f) => f.event === "heartbeat", 3000);
    const droppedBefore = (await getJson<Record<string, number>>(`${node.mgmt}/dist/metrics`))["dist.events.dropped"] as number;

    // /health latency while the frames flow.
    const healthMs: number[] = [];
    const healthStatus: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const t = Date.now();
        healthStatus.push((await call(`${node.mgmt}/health`)).status);
        healthMs.push(Date.now() - t);
        await sleep(100);
      }
    })();

    // Many large members frames, quickly: 40 ghost peers with 2 KB addresses (each members frame
    // is ~90 KB), then 150 gossip rounds that flip one ghost to suspect and back to alive (one
    // gossip message: one membership change, one full frame, per round). Big addresses keep the
    // frames big.
    const floodStart = Date.now();
    const GHOSTS = 40;
    const pad = "a".repeat(2000);
    const address = (i: number) => `ghost-${i}.${pad}.invalid:9`;
    for (let i = 0; i < GHOSTS; i++) {
      await gossip(node, `flood-${i}`, [{ id: `flood-${i}`, address: address(i), state: "MEMBER_STATE_ALIVE", incarnation: "1" }]);
    }
    for (let k = 0; k < 150; k++) {
      const a = k % GHOSTS;
      const b = (k + 1) % GHOSTS;
      const incarnation = String(10 + k);
      await gossip(node, `flood-${a}`, [
        { id: `flood-${a}`, address: address(a), state: "MEMBER_STATE_ALIVE", incarnation },
        { id: `flood-${b}`, address: address(b), state: "MEMBER_STATE_SUSPECT", incarnation },
      ]);
    }
    const floodEnd = Date.now();
    await sleep(2500); // heartbeats keep coming after the flood too
    polling = false;
    await poller;

    const finalMembers = await getJson<MembersBody>(`${node.mgmt}/cluster/members`);
    const dropped = ((await getJson<Record<string, number>>(`${node.mgmt}/dist/metrics`))["dist.events.dropped"] as number) - droppedBefore;
    expect(dropped, "frames dropped for the stalled subscriber").to.be.greaterThan(0);

    // The reader got every members frame: consecutive versions up to the final one, so none of
    // the drops were its own.
    const versions = reader.frames.slice(readerFirst + 1).filter((f) => f.event === "members").map((f) => membersOf(f).membership_version);
    // one frame per gossip message: 40 joins and 150 rounds (a message's changes are one change)
    expect(versions.length, "members frames received by the reader").to.be.at.least(GHOSTS + 150);
    const skipped = versions.slice(1).filter((v, i) => v !== (versions[i] as number) + 1);
    expect(skipped, "versions the reader never saw").to.deep.equal([]);
    expect(versions.at(-1)).to.equal(finalMembers.membership_version);

    // Heartbeats on time for the reader, during and after the flood.
    const beats = heartbeatsAfter(reader, readerFirst + 1).filter((f) => f.at >= floodStart - 1000);
    const times = [floodStart, ...beats.map((b) => b.at), Date.now()];
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(Math.max(...gaps), `heartbeat gaps ${JSON.stringify(gaps)} (flood took ${floodEnd - floodStart} ms)`).to.be.lessThan(2500);
    expect(beats.length).to.be.at.least(Math.floor((Date.now() - floodStart) / 1000) - 1);

    // The node stayed responsive.
    expect(healthStatus.every((s) => s === 200), JSON.stringify(healthStatus)).to.equal(true);
    expect(healthMs.length).to.be.greaterThan(5);
    expect(Math.max(...healthMs), `/health latencies ${JSON.stringify(healthMs)}`).to.be.lessThan(500);

    // No write timeout: the stalled subscriber is still connected, only behind.
    expect(stalledClosed, "the stalled subscriber's connection stays open").to.equal(false);
    stalled.destroy();
    reader.close();
  });
});
