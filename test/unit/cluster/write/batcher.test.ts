// PeerBatcher: items for the same peer and lane pending together travel in one call, split by
// maxItems and maxBytes, with at most maxInFlight calls under way; each item gets its own result.
import { systemTimers } from "../../../../src/core/clock.js";
import { expect } from "chai";
import { CacheError } from "../../../../src/core/errors.js";
import { PeerBatcher, type BatcherOptions } from "../../../../src/cluster/write/batcher.js";
import { neverDelivered, type PeerRef } from "../../../../src/transport/index.js";
import { flush } from "../../../helpers/manual-clock.js";

const P1: PeerRef = { id: "p1", address: "p1:7946" };
const P2: PeerRef = { id: "p2", address: "p2:7946" };

interface Call {
  peer: string;
  items: string[];
  lane: string;
  resolve: (results: string[]) => void;
  reject: (err: unknown) => void;
}

/** A send function whose calls the test answers by hand. */
function manualSend() {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const send = (peer: PeerRef, items: string[], lane: string) =>
    new Promise<string[]>((resolve, reject) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const done = () => inFlight--;
      calls.push({
        peer: peer.id,
        items,
        lane,
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
    });
  return { calls, send, maxInFlight: () => maxInFlight };
}

/** Answers each item with `${item}!`. */
const echo = (call: Call) => call.resolve(call.items.map((i) => `${i}!`));

const opts = (o: Partial<BatcherOptions<string>> = {}): BatcherOptions<string> => ({
  maxItems: 100,
  maxBytes: 1_000_000,
  sizeOf: (s) => s.length,
  maxInFlight: 4,
  timers: systemTimers,
  ...o,
});

/** Settles a promise into a tagged result so tests can inspect rejections without unhandled errors. */
function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

describe("dist/batcher PeerBatcher", () => {
  it("items enqueued in the same tick for one peer share one call, and each gets its own result in order", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts());
    const ps = ["a", "b", "c"].map((i) => b.enqueue(P1, i));
    await flush();
    expect(m.calls.map((c) => c.items)).to.deep.equal([["a", "b", "c"]]);
    m.calls[0]!.resolve(["ra", "rb", "rc"]);
    expect(await Promise.all(ps)).to.deep.equal(["ra", "rb", "rc"]);
    expect(b.calls).to.equal(1);
  });

  it("an idle batcher sends a lone item within one event-loop turn, without waiting for more", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts());
    const p = b.enqueue(P1, "solo");
    await flush(1);
    expect(m.calls).to.have.length(1);
    echo(m.calls[0]!);
    expect(await p).to.equal("solo!");
  });

  it("items enqueued in the same event-loop turn share one call even when microtasks run between them", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts());
    const a = b.enqueue(P1, "a");
    await Promise.resolve();
    await Promise.resolve();
    const c = b.enqueue(P1, "c");
    await flush();
    expect(m.calls.map((x) => x.items)).to.deep.equal([["a", "c"]]);
    echo(m.calls[0]!);
    expect(await Promise.all([a, c])).to.deep.equal(["a!", "c!"]);
  });

  it("different peers and different lanes never share a call", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts());
    const ps = [b.enqueue(P1, "a"), b.enqueue(P2, "b"), b.enqueue(P1, "c", "all"), b.enqueue(P1, "d")];
    await flush();
    const summary = m.calls.map((c) => `${c.peer}/${c.lane}:${c.items.join(",")}`).sort();
    expect(summary).to.deep.equal(["p1/:a,d", "p1/all:c", "p2/:b"]);
    m.calls.forEach(echo);
    expect(await Promise.all(ps)).to.deep.equal(["a!", "b!", "c!", "d!"]);
  });

  it("maxItems splits a burst into calls of at most maxItems, in order", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxItems: 2 }));
    const ps = ["1", "2", "3", "4", "5"].map((i) => b.enqueue(P1, i));
    await flush();
    expect(m.calls.map((c) => c.items)).to.deep.equal([["1", "2"], ["3", "4"], ["5"]]);
    m.calls.forEach(echo);
    expect(await Promise.all(ps)).to.deep.equal(["1!", "2!", "3!", "4!", "5!"]);
  });

  it("maxBytes splits a burst by summed item size; an item larger than maxBytes still travels, alone", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxBytes: 10 }));
    const items = ["aaaaaa", "bbbb", "c", "dddddddddddddddd", "ee"];
    const ps = items.map((i) => b.enqueue(P1, i));
    await flush();
    expect(m.calls.map((c) => c.items)).to.deep.equal([["aaaaaa", "bbbb"], ["c"], ["dddddddddddddddd"], ["ee"]]);
    m.calls.forEach(echo);
    expect(await Promise.all(ps)).to.deep.equal(items.map((i) => `${i}!`));
  });

  it("maxInFlight is respected: items arriving while the limit is reached wait and leave together in the next call", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxInFlight: 1 }));
    const first = b.enqueue(P1, "a");
    await flush();
    expect(m.calls).to.have.length(1);
    const waiting = ["b", "c", "d"].map((i) => b.enqueue(P1, i));
    await flush();
    expect(m.calls, "no second call while one is under way").to.have.length(1);
    expect(b.pending).to.equal(3);
    echo(m.calls[0]!);
    expect(await first).to.equal("a!");
    await flush();
    expect(m.calls.map((c) => c.items)).to.deep.equal([["a"], ["b", "c", "d"]]);
    echo(m.calls[1]!);
    expect(await Promise.all(waiting)).to.deep.equal(["b!", "c!", "d!"]);
    expect(m.maxInFlight()).to.equal(1);
    expect(b.pending).to.equal(0);
  });

  it("when a call completes, the waiting items leave at the end of that event-loop turn, joined by items enqueued later in the same turn", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxInFlight: 1 }));
    const first = b.enqueue(P1, "a");
    await flush();
    const waiting = b.enqueue(P1, "b");
    // Two callbacks of one loop phase, as when the peer's answer and a new client request are read
    // in the same poll: microtasks run between them, the batch must wait for the second.
    let late: Promise<string> | undefined;
    await new Promise<void>((resolve) => {
      setImmediate(() => echo(m.calls[0]!));
      setImmediate(() => {
        late = b.enqueue(P1, "c");
        resolve();
      });
    });
    expect(await first).to.equal("a!");
    expect(m.calls, "nothing sent before the turn ends").to.have.length(1);
    await flush();
    expect(m.calls.map((c) => c.items)).to.deep.equal([["a"], ["b", "c"]]);
    echo(m.calls[1]!);
    expect(await Promise.all([waiting, late])).to.deep.equal(["b!", "c!"]);
  });

  it("with maxInFlight 2 and maxItems 1, never more than two calls are under way for a peer", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxInFlight: 2, maxItems: 1 }));
    const ps = ["1", "2", "3", "4", "5"].map((i) => b.enqueue(P1, i));
    const sent: string[][] = [];
    for (let round = 0; round < 10 && sent.length < 5; round++) {
      await flush();
      const open = m.calls.splice(0);
      expect(open.length, `round ${round}`).to.be.at.most(2);
      sent.push(...open.map((c) => c.items));
      open.forEach(echo);
    }
    expect(sent).to.deep.equal([["1"], ["2"], ["3"], ["4"], ["5"]]);
    expect(await Promise.all(ps)).to.deep.equal(["1!", "2!", "3!", "4!", "5!"]);
    expect(m.maxInFlight()).to.equal(2);
  });

  it("a failed call rejects every item of its batch with the call's error, and only that batch", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxItems: 2 }));
    const ps = ["a", "b", "c"].map((i) => settle(b.enqueue(P1, i)));
    await flush();
    const boom = new CacheError("UNAVAILABLE", "peer down");
    m.calls[0]!.reject(boom);
    echo(m.calls[1]!);
    const [a, bb, c] = await Promise.all(ps);
    expect(a).to.deep.equal({ ok: false, error: boom });
    expect(bb).to.deep.equal({ ok: false, error: boom });
    expect(c).to.deep.equal({ ok: true, value: "c!" });
  });

  it("a call that fails UNAVAILABLE also fails what waits behind it, as never delivered; its own items keep the call's error (it may have arrived)", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxInFlight: 1 }));
    const sent = settle(b.enqueue(P1, "a"));
    await flush();
    const waiting = ["b", "c"].map((i) => settle(b.enqueue(P1, i)));
    await flush();
    expect(m.calls).to.have.length(1);
    const timedOut = new CacheError("UNAVAILABLE", "peer call timed out after 5000 ms");
    m.calls[0]!.reject(timedOut);
    expect(await sent).to.deep.equal({ ok: false, error: timedOut });
    expect(neverDelivered(timedOut)).to.equal(false);
    for (const w of await Promise.all(waiting)) {
      const err = (w as { error: unknown }).error;
      expect((err as CacheError).code).to.equal("UNAVAILABLE");
      expect(neverDelivered(err), "never sent").to.equal(true);
    }
    expect(m.calls).to.have.length(1);
  });

  it("an item refused because too many wait for the peer is never delivered", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxInFlight: 1, maxQueued: 1 }));
    void settle(b.enqueue(P1, "a"));
    await flush();
    void settle(b.enqueue(P1, "b"));
    const refused = await settle(b.enqueue(P1, "c"));
    expect(neverDelivered((refused as { error: unknown }).error)).to.equal(true);
    m.calls[0]!.reject(new CacheError("INTERNAL", "done"));
    await flush();
  });

  it("a result count that does not match the batch rejects every item with INTERNAL", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts());
    const ps = ["a", "b"].map((i) => settle(b.enqueue(P1, i)));
    await flush();
    m.calls[0]!.resolve(["only one"]);
    for (const r of await Promise.all(ps)) {
      expect(r.ok).to.equal(false);
      const err = (r as { error: unknown }).error;
      expect(err).to.be.instanceOf(CacheError);
      expect((err as CacheError).code).to.equal("INTERNAL");
    }
  });

  it("keeps working after a failure: the next items get a fresh call", async () => {
    const m = manualSend();
    const b = new PeerBatcher(m.send, opts({ maxInFlight: 1 }));
    const bad = settle(b.enqueue(P1, "x"));
    await flush();
    m.calls[0]!.reject(new Error("reset"));
    expect((await bad).ok).to.equal(false);
    const good = b.enqueue(P1, "y");
    await flush();
    expect(m.calls).to.have.length(2);
    echo(m.calls[1]!);
    expect(await good).to.equal("y!");
    expect(b.calls).to.equal(2);
  });
});
