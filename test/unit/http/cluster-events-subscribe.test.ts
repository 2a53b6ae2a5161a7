// subscribeEvents with a fake request and response: a client whose connection closed before the
// stream was opened (it left while an asynchronous authentication, a bcrypt check or an OIDC key
// fetch, was under way) is never subscribed, and a subscribed client is released when its
// response closes.
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { expect } from "chai";
import { subscribeEvents } from "../../../src/http/cluster-events.js";
import { Metrics, SseHub } from "../../../src/observability/index.js";

class FakeSocket extends EventEmitter {
  destroyed = false;
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
}

class FakeResponse extends EventEmitter {
  destroyed = false;
  writableEnded = false;
  readonly chunks: string[] = [];
  headWritten = false;
  writeHead(): this {
    this.headWritten = true;
    return this;
  }
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  end(): this {
    this.writableEnded = true;
    return this;
  }
}

function fixture() {
  const socket = new FakeSocket();
  const req = { socket } as unknown as IncomingMessage;
  const fake = new FakeResponse();
  const res = fake as unknown as ServerResponse;
  const hub = new SseHub({ metrics: new Metrics(), bufferFrames: 16 });
  const sources = { members: () => "{}", heartbeat: () => "{}" };
  return { socket, req, fake, res, hub, sources };
}

describe("http/cluster-events subscribeEvents", () => {
  it("subscribes a live client and releases it when the response closes", () => {
    const f = fixture();
    subscribeEvents(f.req, f.res, f.hub, f.sources);
    expect(f.hub.size).to.equal(1);
    expect(f.fake.chunks[0]).to.equal("retry: 3000\n\n");
    f.fake.emit("close");
    expect(f.hub.size).to.equal(0);
  });

  it("ends the stream at the first frame after its credential expired (an OIDC token's exp plus the skew), and releases the slot", () => {
    const f = fixture();
    let now = 0;
    subscribeEvents(f.req, f.res, f.hub, f.sources, { atMs: 1000, nowMs: () => now });
    const opening = f.fake.chunks.length;
    now = 999;
    f.hub.publish("heartbeat", '{"n":1}');
    expect(f.fake.chunks.slice(opening)).to.deep.equal(['event: heartbeat\ndata: {"n":1}\n\n']);
    expect(f.fake.writableEnded).to.equal(false);
    now = 1000;
    f.hub.publish("heartbeat", '{"n":2}');
    expect(f.fake.chunks.length, "nothing written once expired").to.equal(opening + 1);
    expect(f.fake.writableEnded, "the response ended").to.equal(true);
    expect(f.hub.size).to.equal(0);
  });

  it("a credential that does not expire keeps its stream", () => {
    const f = fixture();
    subscribeEvents(f.req, f.res, f.hub, f.sources);
    f.hub.publish("heartbeat", "{}");
    expect(f.fake.writableEnded).to.equal(false);
    expect(f.hub.size).to.equal(1);
  });

  it("does not subscribe a client whose socket was destroyed while it was being authenticated", () => {
    const f = fixture();
    f.socket.destroyed = true;
    subscribeEvents(f.req, f.res, f.hub, f.sources);
    expect(f.hub.size, "no subscriber for a gone client").to.equal(0);
    expect(f.fake.headWritten).to.equal(false);
  });

  it("does not subscribe a client whose response already closed (its close event fired before the stream opened)", () => {
    const f = fixture();
    f.fake.destroyed = true;
    f.fake.emit("close");
    subscribeEvents(f.req, f.res, f.hub, f.sources);
    expect(f.hub.size, "no subscriber for a gone client").to.equal(0);
  });

  it("a hundred clients gone during authentication leave every slot free", () => {
    const hub = new SseHub({ metrics: new Metrics(), bufferFrames: 16 });
    for (let i = 0; i < 100; i++) {
      const f = fixture();
      f.socket.destroyed = i % 2 === 0;
      f.fake.destroyed = i % 2 === 1;
      subscribeEvents(f.req, f.res, hub, f.sources);
    }
    expect(hub.size).to.equal(0);
  });
});
