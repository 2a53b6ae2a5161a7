// SseHub and formatFrame with fake sinks: the exact frame text (multi-line data split into data
// lines), fan-out to every subscriber, the bounded per-subscriber queue of a sink that refuses
// writes (oldest dropped, counted in dist.events.dropped), the in-order flush on drain, that a
// stalled sink never holds back the others, and unsubscribe.
import { expect } from "chai";
import { Metrics, SseHub, formatFrame, type SseSink } from "../../../src/observability/index.js";

/** A sink that records what it was given and accepts writes while `accepting` is true. */
class FakeSink implements SseSink {
  readonly written: string[] = [];
  accepting: boolean;
  writeCalls = 0;
  private drainCallbacks: Array<() => void> = [];

  constructor(accepting = true) {
    this.accepting = accepting;
  }

  write(chunk: string): boolean {
    this.writeCalls++;
    // Like a Node stream: the chunk is taken (buffered) even when the answer is "full".
    this.written.push(chunk);
    return this.accepting;
  }

  onDrain(callback: () => void): void {
    this.drainCallbacks.push(callback);
  }

  /** The consumer caught up: accept again and emit "drain". */
  drain(): void {
    this.accepting = true;
    for (const cb of this.drainCallbacks) cb();
  }

  get drainListeners(): number {
    return this.drainCallbacks.length;
  }
}

const frame = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;

function hub(bufferFrames = 4): { hub: SseHub; metrics: Metrics } {
  const metrics = new Metrics();
  return { hub: new SseHub({ metrics, bufferFrames }), metrics };
}

describe("observability/sse-hub", () => {
  describe("formatFrame", () => {
    it('formats one frame as "event: <name>\\ndata: <data>\\n\\n"', () => {
      expect(formatFrame("heartbeat", '{"a":1}')).to.equal('event: heartbeat\ndata: {"a":1}\n\n');
    });

    it("splits multi-line data into one data line per line, so a newline in the data cannot end the frame", () => {
      expect(formatFrame("members", "one\ntwo\n\nfour")).to.equal("event: members\ndata: one\ndata: two\ndata: \ndata: four\n\n");
      // Exactly one blank line, at the end.
      expect(formatFrame("x", "a\n\nb").split("\n\n")).to.have.length(2);
    });
  });

  describe("fan-out", () => {
    it("sends each published frame, formatted, to every subscriber in publish order", () => {
      const { hub: h } = hub();
      const a = new FakeSink();
      const b = new FakeSink();
      h.subscribe(a);
      h.subscribe(b);
      expect(h.size).to.equal(2);
      h.publish("members", "m1");
      h.publish("heartbeat", "h1\nh2");
      const expected = [frame("members", "m1"), "event: heartbeat\ndata: h1\ndata: h2\n\n"];
      expect(a.written).to.deep.equal(expected);
      expect(b.written).to.deep.equal(expected);
    });

    it("publishing without subscribers writes nothing and drops nothing", () => {
      const { hub: h, metrics } = hub();
      h.publish("heartbeat", "x");
      expect(h.size).to.equal(0);
      expect(metrics.get("dist.events.dropped")).to.equal(0);
    });
  });

  describe("a sink that refuses writes", () => {
    it("queues frames after the refused write up to the bound, then drops the oldest queued frame and counts each drop in dist.events.dropped", () => {
      const { hub: h, metrics } = hub(3);
      const stalled = new FakeSink(false);
      h.subscribe(stalled);
      h.publish("e", "f1"); // taken by the sink, which answers "full"
      for (let i = 2; i <= 4; i++) h.publish("e", `f${i}`); // queued: f2 f3 f4 (the bound)
      expect(stalled.writeCalls, "no write while the sink is full").to.equal(1);
      expect(metrics.get("dist.events.dropped")).to.equal(0);
      h.publish("e", "f5"); // f2 dropped
      h.publish("e", "f6"); // f3 dropped
      expect(metrics.get("dist.events.dropped")).to.equal(2);
      expect(stalled.writeCalls).to.equal(1);
      // drain flushes the queue in order: the newest `bound` frames survive.
      stalled.drain();
      expect(stalled.written).to.deep.equal([frame("e", "f1"), frame("e", "f4"), frame("e", "f5"), frame("e", "f6")]);
      // And it is live again: the next frame goes straight through.
      h.publish("e", "f7");
      expect(stalled.written.at(-1)).to.equal(frame("e", "f7"));
      expect(metrics.get("dist.events.dropped")).to.equal(2);
    });

    it("a flush that fills the sink again stops there and keeps the rest queued, in order", () => {
      const { hub: h, metrics } = hub(10);
      const sink = new FakeSink(false);
      h.subscribe(sink);
      for (let i = 1; i <= 5; i++) h.publish("e", `f${i}`); // f1 written (full), f2..f5 queued
      // The consumer takes exactly one more frame, then is full again.
      let budget = 1;
      sink.write = function (chunk: string): boolean {
        this.writeCalls++;
        this.written.push(chunk);
        return budget-- > 0;
      };
      sink.drain();
      expect(sink.written).to.deep.equal([frame("e", "f1"), frame("e", "f2"), frame("e", "f3")]);
      h.publish("e", "f6"); // still blocked: queued behind f4 f5
      expect(sink.written).to.have.length(3);
      sink.write = FakeSink.prototype.write;
      sink.drain();
      expect(sink.written.slice(3)).to.deep.equal([frame("e", "f4"), frame("e", "f5"), frame("e", "f6")]);
      expect(metrics.get("dist.events.dropped")).to.equal(0);
    });

    it("a stalled sink never delays other subscribers: they get every frame at once while the stalled one drops", () => {
      const { hub: h, metrics } = hub(4);
      const stalled = new FakeSink(false);
      const healthy = new FakeSink();
      h.subscribe(stalled);
      h.subscribe(healthy);
      for (let i = 1; i <= 100; i++) {
        h.publish("e", `f${i}`);
        // Delivered synchronously, before publish returns.
        expect(healthy.written.at(-1)).to.equal(frame("e", `f${i}`));
      }
      expect(healthy.written).to.have.length(100);
      expect(stalled.writeCalls).to.equal(1);
      // 100 frames: 1 written, 4 kept, 95 dropped, all of them the stalled subscriber's.
      expect(metrics.get("dist.events.dropped")).to.equal(95);
    });
  });

  describe("unsubscribe", () => {
    it("stops delivery to that subscriber only and shrinks the hub", () => {
      const { hub: h } = hub();
      const a = new FakeSink();
      const b = new FakeSink();
      const offA = h.subscribe(a);
      h.subscribe(b);
      h.publish("e", "before");
      offA();
      expect(h.size).to.equal(1);
      h.publish("e", "after");
      expect(a.written).to.deep.equal([frame("e", "before")]);
      expect(b.written).to.deep.equal([frame("e", "before"), frame("e", "after")]);
    });

    it("a removed stalled subscriber no longer queues or drops frames", () => {
      const { hub: h, metrics } = hub(1);
      const stalled = new FakeSink(false);
      const off = h.subscribe(stalled);
      h.publish("e", "f1");
      off();
      for (let i = 0; i < 10; i++) h.publish("e", "x");
      expect(metrics.get("dist.events.dropped")).to.equal(0);
      stalled.drain();
      expect(stalled.written).to.deep.equal([frame("e", "f1")]);
    });
  });
});
