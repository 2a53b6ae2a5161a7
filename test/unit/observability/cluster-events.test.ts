// ClusterEventsPublisher with a ManualClock, a real SseHub and a real MemberTable: one heartbeat
// frame per second only while someone subscribes, one members frame per real membership change
// (none for same-state marks), with the frame data taken from the sources at publish time; stop()
// ends both.
import { expect } from "chai";
import { ClusterEventsPublisher, HEARTBEAT_FRAME_INTERVAL_MS } from "../../../src/http/cluster-events.js";
import { recordingLogger } from "../../../src/log/index.js";
import { MemberTable } from "../../../src/membership/index.js";
import { Metrics, SseHub, type SseSink } from "../../../src/observability/index.js";
import { flush, ManualClock } from "../../helpers/manual-clock.js";

class RecordingSink implements SseSink {
  readonly frames: Array<{ event: string; data: string }> = [];
  write(chunk: string): boolean {
    const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? "";
    const data = chunk
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6))
      .join("\n");
    this.frames.push({ event, data });
    return true;
  }
  onDrain(): void {}
  count(event: string): number {
    return this.frames.filter((f) => f.event === event).length;
  }
}

function fixture() {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const members = new MemberTable({ selfId: "me", selfAddress: "127.0.0.1:7946", clock, metrics, logger: recordingLogger("error") });
  const hub = new SseHub({ metrics, bufferFrames: 16 });
  let heartbeatCalls = 0;
  let membersCalls = 0;
  const publisher = new ClusterEventsPublisher({
    hub,
    members,
    timers: clock,
    sources: {
      members: () => {
        membersCalls++;
        return JSON.stringify({ version: members.version, ids: members.list().map((m) => `${m.id}:${m.state}`) });
      },
      heartbeat: () => {
        heartbeatCalls++;
        return JSON.stringify({ at: clock.monotonicMs(), drains: metrics.get("dist.drains") });
      },
    },
  });
  return { clock, metrics, members, hub, publisher, heartbeatCalls: () => heartbeatCalls, membersCalls: () => membersCalls };
}

describe("http/cluster-events publisher", () => {
  it("sends heartbeat frames once a second, only while subscribers exist", () => {
    const f = fixture();
    f.publisher.start();
    f.clock.advance(3000);
    expect(f.heartbeatCalls(), "no subscriber: the snapshot is not even taken").to.equal(0);

    const sink = new RecordingSink();
    const off = f.hub.subscribe(sink);
    f.clock.advance(999);
    expect(sink.count("heartbeat")).to.equal(0);
    f.clock.advance(1);
    expect(sink.count("heartbeat")).to.equal(1);
    f.clock.advance(4000);
    expect(sink.count("heartbeat")).to.equal(5);
    expect(HEARTBEAT_FRAME_INTERVAL_MS).to.equal(1000);

    off();
    const calls = f.heartbeatCalls();
    f.clock.advance(5000);
    expect(f.heartbeatCalls(), "no heartbeat work after the last subscriber left").to.equal(calls);
    expect(sink.count("heartbeat")).to.equal(5);
    f.publisher.stop();
  });

  it("each heartbeat frame carries the heartbeat source's data at that moment", () => {
    const f = fixture();
    f.publisher.start();
    const sink = new RecordingSink();
    f.hub.subscribe(sink);
    f.clock.advance(1000);
    f.metrics.inc("dist.drains");
    f.clock.advance(1000);
    const data = sink.frames.filter((x) => x.event === "heartbeat").map((x) => JSON.parse(x.data) as { at: number; drains: number });
    expect(data).to.deep.equal([
      { at: 1000, drains: 0 },
      { at: 2000, drains: 1 },
    ]);
    f.publisher.stop();
  });

  it("sends a members frame after each turn with a real membership change, with the members source's data", async () => {
    const f = fixture();
    f.publisher.start();
    const sink = new RecordingSink();
    f.hub.subscribe(sink);
    f.members.addPeer("p1", "127.0.0.1:1");
    expect(sink.count("members"), "not in the caller's stack").to.equal(0);
    await flush();
    expect(sink.count("members")).to.equal(1);
    for (const change of [() => f.members.addPeer("p2", "127.0.0.1:2"), () => f.members.markSuspect("p1"), () => f.members.probeSucceeded("p1"), () => f.members.remove("p2")]) {
      change();
      await flush();
    }
    const frames = sink.frames.filter((x) => x.event === "members").map((x) => JSON.parse(x.data) as { version: number; ids: string[] });
    expect(frames.map((x) => x.ids)).to.deep.equal([
      ["me:alive", "p1:alive"],
      ["me:alive", "p1:alive", "p2:alive"],
      ["me:alive", "p1:suspect", "p2:alive"],
      ["me:alive", "p1:alive", "p2:alive"],
      ["me:alive", "p1:alive"],
    ]);
    // Versions are consecutive: one frame per change when changes come one per turn.
    const versions = frames.map((x) => x.version);
    expect(versions).to.deep.equal(versions.map((_, i) => (versions[0] as number) + i));
  });

  it("a burst of changes in one turn (a gossip message, a probe round's timeouts) is one members frame, with the list after the last", async () => {
    const f = fixture();
    f.publisher.start();
    const sink = new RecordingSink();
    f.hub.subscribe(sink);
    const before = f.membersCalls();
    for (let i = 0; i < 200; i++) f.members.addPeer(`p${i}`, `127.0.0.1:${i + 1}`);
    for (let i = 0; i < 200; i++) f.members.markSuspect(`p${i}`);
    await flush();
    expect(sink.count("members")).to.equal(1);
    expect(f.membersCalls() - before, "the member list is serialized once").to.equal(1);
    const frame = JSON.parse(sink.frames.find((x) => x.event === "members")?.data ?? "{}") as { ids: string[] };
    expect(frame.ids.filter((id) => id.endsWith(":suspect"))).to.have.length(200);
  });

  it("sends no members frame for same-state marks (probe success of an alive peer, re-adding a known peer)", async () => {
    const f = fixture();
    f.members.addPeer("p1", "127.0.0.1:1");
    f.publisher.start();
    const sink = new RecordingSink();
    f.hub.subscribe(sink);
    f.members.probeSucceeded("p1");
    f.members.addPeer("p1", "127.0.0.1:1");
    f.members.markSuspect("p1");
    f.members.markSuspect("p1");
    await flush();
    expect(sink.count("members")).to.equal(1);
  });

  it("start is idempotent (one timer, one membership observer) and stop ends heartbeats and members frames", async () => {
    const f = fixture();
    f.publisher.start();
    f.publisher.start();
    const sink = new RecordingSink();
    f.hub.subscribe(sink);
    f.clock.advance(1000);
    f.members.addPeer("p1", "127.0.0.1:1");
    await flush();
    expect(sink.count("heartbeat")).to.equal(1);
    expect(sink.count("members")).to.equal(1);
    f.publisher.stop();
    f.clock.advance(5000);
    f.members.addPeer("p2", "127.0.0.1:2");
    await flush();
    expect(sink.count("heartbeat")).to.equal(1);
    expect(sink.count("members")).to.equal(1);
    expect(f.clock.pending, "the heartbeat timer is cancelled").to.equal(0);
  });
});
