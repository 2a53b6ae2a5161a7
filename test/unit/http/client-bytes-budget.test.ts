// The bytes the client listener holds for its clients at once (SERVICE_MAX_INFLIGHT_BYTES).
import { expect } from "chai";
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { ClientBytesBudget, HELD_MIN_BYTES } from "../../../src/http/client-bytes-budget.js";
import { CacheError } from "../../../src/core/errors.js";

/** A response as the budget sees it: an emitter whose `closed` turns true when it emits 'close', as ServerResponse's does. */
const response = () => {
  class FakeResponse extends EventEmitter {
    closed = false;
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (event === "close") this.closed = true;
      return super.emit(event, ...args);
    }
  }
  return new FakeResponse() as unknown as ServerResponse & EventEmitter;
};
const MIB = 1024 * 1024;

function thrown(f: () => void): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("http/client-bytes-budget", () => {
  it("holds an answer's bytes until its response closes, once", () => {
    const b = new ClientBytesBudget(10 * MIB);
    const res = response();
    b.holdAnswer(res, 4 * MIB);
    expect(b.heldBytes).to.equal(4 * MIB);
    res.emit("close");
    res.emit("close");
    expect(b.heldBytes).to.equal(0);
  });

  it("refuses an answer that would pass the budget: 503 UNAVAILABLE, Retry-After 1, the figures in details; nothing held for it", () => {
    const b = new ClientBytesBudget(10 * MIB);
    b.holdAnswer(response(), 6 * MIB);
    const err = thrown(() => b.holdAnswer(response(), 5 * MIB));
    expect(err).to.be.instanceOf(CacheError).and.include({ code: "UNAVAILABLE", retryAfterS: 1 });
    expect((err as CacheError).details).to.deep.equal({ held_bytes: 6 * MIB, answer_bytes: 5 * MIB, max_bytes: 10 * MIB });
    expect(b.heldBytes).to.equal(6 * MIB);
    expect(b.refused).to.deep.equal({ answer: 1, body: 0 });
    b.holdAnswer(response(), 4 * MIB);
    expect(b.heldBytes, "what fits still fits").to.equal(10 * MIB);
  });

  it("answers up to HELD_MIN_BYTES pass uncounted, even with the budget full", () => {
    const b = new ClientBytesBudget(1 * MIB);
    b.holdAnswer(response(), 1 * MIB);
    const res = response();
    b.holdAnswer(res, HELD_MIN_BYTES);
    expect(b.heldBytes).to.equal(1 * MIB);
    expect(res.listenerCount("close"), "no listener for an uncounted answer").to.equal(0);
    expect(() => b.holdAnswer(response(), HELD_MIN_BYTES + 1)).to.throw(CacheError);
  });

  it("a response already closed (its client went during a slow read) holds nothing: its 'close' will not come again", () => {
    const b = new ClientBytesBudget(10 * MIB);
    const gone = Object.assign(response(), { closed: true });
    b.holdAnswer(gone, 4 * MIB);
    const count = b.bodyCounter(gone, undefined) as (n: number) => void;
    count(MIB);
    expect(b.heldBytes).to.equal(0);
    expect(gone.listenerCount("close")).to.equal(0);
  });

  it("0: no limit", () => {
    const b = new ClientBytesBudget(0);
    b.holdAnswer(response(), 100 * MIB);
    b.holdAnswer(response(), 100 * MIB);
    expect(b.heldBytes).to.equal(200 * MIB);
  });

  it("one answer larger than the whole budget passes when nothing else is held", () => {
    const b = new ClientBytesBudget(1 * MIB);
    const res = response();
    b.holdAnswer(res, 3 * MIB);
    expect(b.heldBytes).to.equal(3 * MIB);
    expect(() => b.holdAnswer(response(), 64 * 1024)).to.throw(CacheError);
    res.emit("close");
    expect(b.heldBytes).to.equal(0);
  });

  it("a body counts as it arrives once past HELD_MIN_BYTES, all of it, until its response closes", () => {
    const b = new ClientBytesBudget(10 * MIB);
    const res = response();
    const count = b.bodyCounter(res, undefined) as (n: number) => void;
    count(HELD_MIN_BYTES);
    expect(b.heldBytes, "not past the floor yet").to.equal(0);
    count(1);
    expect(b.heldBytes).to.equal(HELD_MIN_BYTES + 1);
    count(MIB);
    expect(b.heldBytes).to.equal(HELD_MIN_BYTES + 1 + MIB);
    res.emit("close");
    expect(b.heldBytes).to.equal(0);
    count(MIB);
    expect(b.heldBytes, "nothing counted after the close").to.equal(0);
  });

  it("a body whose declared length does not fit is refused before a byte is read; one that passes mid-way at the chunk that would pass", () => {
    const b = new ClientBytesBudget(10 * MIB);
    const other = response();
    b.holdAnswer(other, 8 * MIB);
    const early = thrown(() => b.bodyCounter(response(), 4 * MIB));
    expect(early).to.be.instanceOf(CacheError).and.include({ code: "UNAVAILABLE", retryAfterS: 1 });
    expect((early as CacheError).details).to.deep.equal({ held_bytes: 8 * MIB, body_bytes: 4 * MIB, max_bytes: 10 * MIB });
    const count = b.bodyCounter(response(), undefined) as (n: number) => void;
    count(MIB);
    expect(b.heldBytes).to.equal(9 * MIB);
    expect(() => count(2 * MIB)).to.throw(CacheError).with.property("code", "UNAVAILABLE");
    expect(b.heldBytes, "the refused chunk is not held").to.equal(9 * MIB);
    expect(b.refused).to.deep.equal({ answer: 0, body: 2 });
    expect(b.bodyCounter(response(), HELD_MIN_BYTES), "a small declared body is not counted").to.equal(undefined);
  });
});
