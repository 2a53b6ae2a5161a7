// globalFetch: the platform fetch with the client's time limits. A stream request (watch) links
// the caller's signal to its own only while the request is under way: a watch that reconnects for
// days on one signal must not gather one abort listener per attempt.
import { getEventListeners } from "node:events";
import { expect } from "chai";
import { globalFetch } from "../../src/fetch-types.js";

describe("globalFetch", () => {
  const real = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = real;
  });

  it("leaves no abort listener on the caller's signal after stream requests, failed or answered", async () => {
    let calls = 0;
    globalThis.fetch = (async () => {
      calls++;
      if (calls % 2 === 0) throw new TypeError("fetch failed");
      return new Response("", { status: 503 });
    }) as typeof fetch;
    const f = globalFetch();
    const caller = new AbortController();
    for (let i = 0; i < 12; i++) {
      await f("http://m1:8081/cluster/events", { method: "GET", headers: {}, stream: true, timeoutMs: 1000, signal: caller.signal }).catch(() => undefined);
    }
    expect(calls).to.equal(12);
    expect(getEventListeners(caller.signal, "abort")).to.have.length(0);
  });

  it("still ends an answered stream when the caller aborts", async () => {
    let seen: AbortSignal | undefined;
    globalThis.fetch = (async (_url: string, init: RequestInit) => {
      seen = init.signal ?? undefined;
      return new Response("", { status: 200 });
    }) as typeof fetch;
    const caller = new AbortController();
    await globalFetch()("http://m1:8081/cluster/events", { method: "GET", headers: {}, stream: true, timeoutMs: 1000, signal: caller.signal });
    expect(seen?.aborted).to.equal(false);
    caller.abort(new Error("stop"));
    expect(seen?.aborted).to.equal(true);
  });
});
