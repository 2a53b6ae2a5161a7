// The lingering close's bounds (HTTP_LINGER), on a stand-in socket and an injected clock: after
// the answer is flushed the node reads and drops what the client still sends, and gives up past
// the byte cap, past the total time, when the client goes quiet, or at once when it had ended.
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { expect } from "chai";
import { HTTP_LINGER } from "../../../src/core/limits.js";
import { lingerAfterEnd, lingerOnClose } from "../../../src/http/lingering-close.js";

class FakeSocket extends EventEmitter {
  destroyed = false;
  readableEnded = false;
  writable = true;
  writableFinished = false;
  resumed = false;
  ended = false;
  idle: { ms: number; fire: () => void } | undefined;
  setTimeout(ms: number, fire: () => void): this {
    this.idle = { ms, fire };
    return this;
  }
  resume(): this {
    this.resumed = true;
    return this;
  }
  end(): this {
    this.ended = true;
    this.writable = false;
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
  flush(): void {
    this.writableFinished = true;
    this.emit("finish");
  }
}

function lingering(now: () => number): FakeSocket {
  const s = new FakeSocket();
  lingerAfterEnd(s as unknown as Socket, now);
  s.flush();
  return s;
}

describe("http/lingering-close: bounds", () => {
  it("reads and drops the rest after the answer is flushed, not before", () => {
    const s = new FakeSocket();
    lingerAfterEnd(s as unknown as Socket, () => 0);
    expect(s.resumed, "nothing read before the answer is flushed").to.equal(false);
    s.flush();
    expect(s.resumed).to.equal(true);
    s.emit("data", Buffer.alloc(1024));
    expect(s.destroyed).to.equal(false);
    s.emit("end");
    expect(s.destroyed, "the client finished: closed").to.equal(true);
  });

  it("closes past the byte cap", () => {
    const s = lingering(() => 0);
    const chunk = Buffer.alloc(1024 * 1024);
    for (let sent = 0; sent + chunk.length <= HTTP_LINGER.bytes; sent += chunk.length) s.emit("data", chunk);
    expect(s.destroyed, "within the cap").to.equal(false);
    s.emit("data", Buffer.alloc(1));
    expect(s.destroyed, "one byte past the cap").to.equal(true);
  });

  it("closes past the total time even while bytes keep coming", () => {
    let t = 0;
    const s = lingering(() => t);
    t = HTTP_LINGER.totalMs;
    s.emit("data", Buffer.alloc(1));
    expect(s.destroyed).to.equal(false);
    t = HTTP_LINGER.totalMs + 1;
    s.emit("data", Buffer.alloc(1));
    expect(s.destroyed).to.equal(true);
  });

  it("closes when the client goes quiet for the idle time", () => {
    const s = lingering(() => 0);
    expect(s.idle?.ms).to.equal(HTTP_LINGER.idleMs);
    s.idle?.fire();
    expect(s.destroyed).to.equal(true);
  });

  it("closes at once when the client had already ended", () => {
    const s = new FakeSocket();
    s.readableEnded = true;
    lingerAfterEnd(s as unknown as Socket, () => 0);
    s.flush();
    expect(s.destroyed).to.equal(true);
    expect(s.resumed).to.equal(false);
  });

  it("destroySoon half-closes and lingers instead of destroying", () => {
    const s = new FakeSocket();
    lingerOnClose(s as unknown as Socket, () => 0);
    (s as unknown as { destroySoon(): void }).destroySoon();
    expect(s.ended).to.equal(true);
    expect(s.destroyed).to.equal(false);
    s.flush();
    expect(s.resumed).to.equal(true);
  });
});
