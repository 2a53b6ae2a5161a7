// getOrLoad with the server's stampede leases, against a fake fetch and a manual clock: a hit never
// loads; the lease holder loads once and fills with the token; a lease lost meanwhile (409) or a
// key stored meanwhile (412) still returns the loaded value and stores nothing; LEASE_HELD reads
// again after a short pause until the holder's lease ends, then loads itself; a plain miss without
// a lease stores only where the key is still absent (If-None-Match: *), never replayed elsewhere.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { ForbiddenError } from "../../src/errors.js";
import type { ClientEvent } from "../../src/failover-transport.js";
import { seededRandom } from "../../src/runtime.js";
import { getEventListeners } from "node:events";
import { answer, bytesAnswer, envelope, FakeFetch, outcome, settle, timedOut, type Call } from "./fake-fetch.js";

const A = "http://a:1";
const B = "http://b:1";
const PUT_OK = { key: "k", stored: true, bytes: 5, node: "n1", owners: ["n1"] };
const enc = (s: string) => new TextEncoder().encode(s);

function client(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  const events: ClientEvent[] = [];
  const c = new HypercacheClient({ endpoints: [A], fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) }, onEvent: (e) => events.push(e), ...extra });
  return { c, clock, events };
}

const leaseMiss = (token: string) => envelope(404, "NOT_FOUND", "no such key", undefined, { "X-Cache-Lease": token, "X-Cache-Node": "n1" });
const held = (retryAfterS: number) => envelope(404, "LEASE_HELD", "another caller holds the lease", undefined, { "Retry-After": String(retryAfterS), "X-Cache-Node": "n1" });
const gets = (f: FakeFetch) => f.calls.filter((c) => c.init.method === "GET");
const puts = (f: FakeFetch) => f.calls.filter((c) => c.init.method === "PUT");
const header = (c: Call | undefined, name: string) => c?.init.headers[name];

describe("client getOrLoad (stampede leases)", () => {
  it("a hit returns the value without loading; the read asks for the lease and the wait", async () => {
    const f = new FakeFetch().on(A, () => bytesAnswer(200, enc("cached")));
    const { c } = client(f);
    let loads = 0;
    expect(new TextDecoder().decode(await c.getOrLoad("k", () => (loads++, "fresh"), { lease: "5s", wait: "1s" }))).to.equal("cached");
    expect(loads).to.equal(0);
    expect(gets(f)[0]?.url).to.equal(`${A}/v1/cache/k?lease=5000ms&wait=1000ms`);
  });

  it("the lease holder loads once and fills the key with the lease's token and the TTL", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("tok-1") : answer(200, PUT_OK)));
    const { c, events } = client(f);
    const got = await c.getOrLoad("k", async (key) => `value of ${key}`, { ttl: "1m" });
    expect(new TextDecoder().decode(got)).to.equal("value of k");
    expect(puts(f)).to.have.length(1);
    expect(header(puts(f)[0], "x-cache-lease")).to.equal("tok-1");
    expect(puts(f)[0]?.url).to.equal(`${A}/v1/cache/k?ttl=60000ms`);
    expect(new TextDecoder().decode(puts(f)[0]?.bodyBytes)).to.equal("value of k");
    expect(events).to.have.length(0);
  });

  it("a fill refused because the lease ended (409) or a store refused because the key exists (412) still returns the loaded value, quietly", async () => {
    for (const [miss, refusal] of [[leaseMiss("tok-2"), envelope(409, "CONFLICT", "lease not held")], [envelope(404, "NOT_FOUND", "no such key", undefined, { "X-Cache-Node": "n1" }), envelope(412, "PRECONDITION_FAILED", "exists")]] as const) {
      const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? miss : refusal));
      const { c, events } = client(f);
      expect(new TextDecoder().decode(await c.getOrLoad("k", () => "v"))).to.equal("v");
      expect(events).to.have.length(0);
    }
  });

  it("without a lease (a plain miss) the value is stored only where the key is still absent", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? envelope(404, "NOT_FOUND", "no such key", undefined, { "X-Cache-Node": "n1" }) : answer(200, PUT_OK)));
    const { c } = client(f);
    await c.getOrLoad("k", () => enc("bytes"));
    expect(header(puts(f)[0], "if-none-match")).to.equal("*");
    expect(header(puts(f)[0], "x-cache-lease")).to.equal(undefined);
  });

  it("a waiter reads again after a short pause when its server wait ends, and gets the fill as soon as it lands (not at the end of the holder's lease)", async () => {
    // The holder took a 10 s lease at 0 and fills at 3 s; the fake node answers like
    // lease-table.ts: a hit once filled, else it waits up to `wait`, else LEASE_HELD with the
    // lease's rest as Retry-After. (From a review: waiters slept the whole Retry-After.)
    const f = new FakeFetch();
    const { c, clock } = client(f);
    const FILL_AT = 3_000;
    const WAIT = 2_000;
    f.on(A, () => {
      const now = clock.monotonicMs();
      if (now >= FILL_AT) return bytesAnswer(200, enc("filled"));
      return new Promise((r) => {
        if (now + WAIT >= FILL_AT) clock.after(FILL_AT - now, () => r(bytesAnswer(200, enc("filled"))));
        else clock.after(WAIT, () => r(held(Math.ceil((10_000 - now - WAIT) / 1000))));
      });
    });
    let loads = 0;
    let doneAt: number | undefined;
    void c.getOrLoad("k", () => (loads++, "own"), { wait: "2s" }).then(() => (doneAt = clock.monotonicMs()));
    for (let i = 0; i < 120 && doneAt === undefined; i++) {
      await settle();
      await clock.advanceAsync(100);
    }
    expect(doneAt, "answered at (ms)").to.be.at.most(FILL_AT + 200);
    expect(loads).to.equal(0);
  });

  it("a waiter whose holder never fills loads by itself once the holder's lease (Retry-After) and a last wait have passed, storing only where the key is absent", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? held(1) : answer(200, PUT_OK)));
    const { c, clock } = client(f);
    let loads = 0;
    const p = c.getOrLoad("k", () => (loads++, "own"), { wait: 0 });
    for (let i = 0; i < 40 && loads === 0; i++) {
      await settle();
      await clock.advanceAsync(100);
    }
    expect(new TextDecoder().decode(await p)).to.equal("own");
    expect(clock.monotonicMs(), "after the 1 s lease").to.be.within(1_000, 1_400);
    expect(header(puts(f)[0], "if-none-match")).to.equal("*");
  });

  it("a pause leaves no abort listener or timer behind, and an abort during it rejects at once", async () => {
    let n = 0;
    const f = new FakeFetch().on(A, () => (++n === 1 ? held(1) : bytesAnswer(200, enc("x"))));
    const { c, clock } = client(f);
    const ac = new AbortController();
    const p = c.getOrLoad("k", () => "v", { signal: ac.signal });
    await settle();
    await clock.advanceAsync(100);
    await p;
    expect(getEventListeners(ac.signal, "abort")).to.have.length(0);
    expect(clock.pending).to.equal(0);
    n = 0;
    const ac2 = new AbortController();
    const p2 = c.getOrLoad("k", () => "v", { signal: ac2.signal });
    await settle();
    ac2.abort(new Error("stop"));
    expect((await outcome(p2)).state).to.equal("rejected");
    expect(clock.pending).to.equal(0);
  });

  it("the store without a lease is not replayed on another node once sent (a replay after an invalidating DELETE would store the stale value)", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? envelope(404, "NOT_FOUND", "no such key", undefined, { "X-Cache-Node": "n1" }) : timedOut())).on(B, () => answer(200, PUT_OK));
    const { c, events } = client(f, { endpoints: [A, B] });
    expect(new TextDecoder().decode(await c.getOrLoad("k", () => "v"))).to.equal("v");
    expect(f.to(B).filter((x) => x.init.method === "PUT")).to.have.length(0);
    expect(events.map((e) => e.type)).to.include("fill-failed");
  });

  it("a load that outlasts its lease reports a fill-failed event (the 409 would otherwise hide that nothing is ever cached)", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("t1") : envelope(409, "CONFLICT", "the lease named by X-Cache-Lease is not held")));
    const { c, clock, events } = client(f);
    const p = c.getOrLoad("k", () => new Promise<string>((r) => clock.after(2_000, () => r("slow"))), { lease: "1s" });
    await settle();
    await clock.advanceAsync(2_000);
    expect(new TextDecoder().decode(await p)).to.equal("slow");
    expect(events.map((e) => e.type)).to.deep.equal(["fill-failed"]);
    expect((events[0] as { error: Error }).error.message).to.contain("lease");
  });

  it("wait takes 0, \"0s\" or a duration; load gets the key and the call's signal", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("t2") : answer(200, PUT_OK)));
    const { c } = client(f);
    const ac = new AbortController();
    const seen: Array<[string, AbortSignal | undefined]> = [];
    for (const wait of [0, "0s", "250ms"] as const) await c.getOrLoad("k", (key, signal) => (seen.push([key, signal]), "v"), { wait, signal: ac.signal });
    expect(gets(f).map((g) => g.url.split("wait=")[1])).to.deep.equal(["0ms", "0ms", "250ms"]);
    expect(seen.every(([key, signal]) => key === "k" && signal === ac.signal)).to.equal(true);
  });

  it("a store that fails otherwise returns the value and reports a fill-failed event", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("tok-3") : envelope(413, "PAYLOAD_TOO_LARGE", "value too large")));
    const { c, events } = client(f);
    expect(new TextDecoder().decode(await c.getOrLoad("big", () => "v"))).to.equal("v");
    expect(events.map((e) => e.type)).to.deep.equal(["fill-failed"]);
    expect(events[0]).to.include({ key: "big" });
  });

  it("a loader that throws gives the lease back (DELETE .../lease with the token, one attempt) without holding up the error; a failed release is quiet and cools no endpoint", async () => {
    for (const release of [() => answer(204, undefined), () => envelope(409, "CONFLICT", "not held"), () => envelope(503, "UNAVAILABLE", "primary unreachable")]) {
      const h = (call: Call) => (call.init.method === "GET" ? leaseMiss("tok-9") : call.init.method === "DELETE" ? release() : answer(200, PUT_OK));
      const f = new FakeFetch().on(A, h).on(B, h);
      const { c, events } = client(f, { endpoints: [A, B] });
      const boom = new Error("database down");
      expect(await c.getOrLoad("k/1", () => Promise.reject(boom)).catch((e: unknown) => e)).to.equal(boom);
      await settle();
      const deletes = f.calls.filter((x) => x.init.method === "DELETE");
      expect(deletes.map((x) => x.url)).to.deep.equal([`${A}/v1/cache/k%2F1/lease`]);
      expect(header(deletes[0], "x-cache-lease")).to.equal("tok-9");
      expect(puts(f)).to.have.length(0);
      expect(events, "no fill-failed, no failover").to.have.length(0);
      expect(c.endpoints().filter((e) => e.coolingForMs > 0), "a best-effort release says nothing about the endpoint").to.deep.equal([]);
    }
  });

  it("the release never holds up the caller: a load error and an abort reach it at once while the release hangs", async () => {
    const hang = (call: Call) => new Promise<never>((_resolve, reject) => call.init.signal?.addEventListener("abort", () => reject(call.init.signal?.reason)));
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("tok-11") : hang(call)));
    const { c } = client(f);
    const boom = new Error("database down");
    expect(await outcome(c.getOrLoad("k", () => Promise.reject(boom)))).to.deep.equal({ state: "rejected", error: boom });
    const ac = new AbortController();
    const call = c.getOrLoad("k", (_key, signal) => new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason))), { signal: ac.signal });
    const failed = call.catch((e: unknown) => e as Error);
    await settle();
    ac.abort(new Error("caller gave up"));
    expect(((await outcome(call)) as { error: Error }).error.message, "at once").to.equal("caller gave up");
    await failed;
    expect(f.calls.filter((x) => x.init.method === "DELETE").map((x) => header(x, "x-cache-lease"))).to.deep.equal(["tok-11", "tok-11"]);
  });

  it("a lease left unfilled for any other reason is given back too: a load that ignores the abort, a fill refused 413; not a fill refused 409 (the lease is gone), nor after close()", async () => {
    const cases: Array<{ fill: () => ReturnType<typeof answer>; abort: boolean; close?: boolean; released: number }> = [
      { fill: () => answer(200, PUT_OK), abort: true, released: 1 },
      { fill: () => envelope(413, "PAYLOAD_TOO_LARGE", "value too large"), abort: false, released: 1 },
      { fill: () => envelope(409, "CONFLICT", "lease not held"), abort: false, released: 0 },
      { fill: () => answer(200, PUT_OK), abort: false, close: true, released: 0 },
    ];
    for (const k of cases) {
      const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("tok-12") : call.init.method === "PUT" ? k.fill() : answer(204, undefined)));
      const { c } = client(f);
      const ac = new AbortController();
      let finish: (v: string) => void = () => undefined;
      let fail: (e: Error) => void = () => undefined;
      const call = c.getOrLoad("k", () => new Promise<string>((resolve, reject) => ((finish = resolve), (fail = reject))), { signal: ac.signal }).catch(() => undefined);
      await settle();
      if (k.abort) ac.abort(new Error("caller gave up"));
      if (k.close) {
        void c.close();
        fail(new Error("db down"));
      } else finish("loaded");
      await call;
      await settle();
      expect(f.calls.filter((x) => x.init.method === "DELETE"), JSON.stringify(k)).to.have.length(k.released);
    }
    // No lease, nothing to give back.
    const plain = new FakeFetch().on(A, () => envelope(404, "NOT_FOUND", "no such key", undefined, { "X-Cache-Node": "n1" }));
    expect(await client(plain).c.getOrLoad("k", () => Promise.reject(new Error("x"))).catch((e: unknown) => (e as Error).message)).to.equal("x");
    expect(plain.calls.filter((x) => x.init.method === "DELETE")).to.have.length(0);
  });

  it("errors of the read and of the loader reach the caller; bad lease and wait values are refused before sending", async () => {
    const f = new FakeFetch().on(A, (call) => (call.url.includes("/denied") ? envelope(403, "FORBIDDEN", "needs write") : leaseMiss("tok-4")));
    const { c } = client(f, { timeoutMs: 3000 });
    expect(await c.getOrLoad("denied", () => "v").catch((e: unknown) => e)).to.be.instanceOf(ForbiddenError);
    const boom = new Error("database down");
    expect(await c.getOrLoad("k", () => Promise.reject(boom)).catch((e: unknown) => e)).to.equal(boom);
    expect(puts(f)).to.have.length(0);
    const before = f.calls.length;
    for (const o of [{ lease: "50ms" }, { lease: "2m" }, { wait: "11s" }, { wait: "3s" }, { lease: "bad" }]) {
      expect(await c.getOrLoad("k", () => "v", o).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
    }
    expect(f.calls).to.have.length(before);
  });
  it("the default wait fits the client's time limit: 2 s, or half of timeoutMs when that is less (a timeoutMs of 2 s or less refused every call that named no wait)", async () => {
    for (const [timeoutMs, wait] of [[1000, "500ms"], [2000, "1000ms"], [4000, "2000ms"]] as const) {
      const f = new FakeFetch().on(A, () => bytesAnswer(200, enc("cached")));
      const { c } = client(f, { timeoutMs });
      expect(new TextDecoder().decode(await c.getOrLoad("k", () => "fresh")), `timeoutMs ${timeoutMs}`).to.equal("cached");
      expect(gets(f)[0]?.url, `timeoutMs ${timeoutMs}`).to.equal(`${A}/v1/cache/k?lease=10000ms&wait=${wait}`);
    }
  });
});
