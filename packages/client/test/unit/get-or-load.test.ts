// getOrLoad with the server's stampede leases, against a fake fetch and a manual clock: a hit never
// loads; the lease holder loads once and fills with the token; a lease lost meanwhile (409) or a
// key stored meanwhile (412) still returns the loaded value and stores nothing; LEASE_HELD waits
// Retry-After on the client's timers and reads again, and past LEASE_ROUNDS_MAX loads itself; a
// plain miss without a lease stores only where the key is still absent (If-None-Match: *).
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { ForbiddenError } from "../../src/errors.js";
import type { ClientEvent } from "../../src/failover-transport.js";
import { LEASE_ROUNDS_MAX } from "../../src/lease-loads.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, bytesAnswer, envelope, FakeFetch, outcome, settle, type Call } from "./fake-fetch.js";

const A = "http://a:1";
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

  it("LEASE_HELD waits Retry-After on the client's timers and reads again; the fill that came meanwhile is the value", async () => {
    let reads = 0;
    const f = new FakeFetch().on(A, () => (++reads === 1 ? held(1) : bytesAnswer(200, enc("filled by another"))));
    const { c, clock } = client(f);
    let loads = 0;
    const p = c.getOrLoad("k", () => (loads++, "mine"));
    await settle();
    expect((await outcome(p)).state, "waiting for Retry-After").to.equal("pending");
    await clock.advanceAsync(999);
    expect(gets(f)).to.have.length(1);
    await clock.advanceAsync(1);
    expect(new TextDecoder().decode(await p)).to.equal("filled by another");
    expect(loads).to.equal(0);
  });

  it(`after ${LEASE_ROUNDS_MAX + 1} LEASE_HELD answers it loads by itself and stores only where the key is absent`, async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? held(0) : answer(200, PUT_OK)));
    const { c, clock } = client(f);
    const p = c.getOrLoad("k", () => "own");
    for (let i = 0; i < LEASE_ROUNDS_MAX; i++) {
      await settle();
      await clock.advanceAsync(100);
    }
    expect(new TextDecoder().decode(await p)).to.equal("own");
    expect(gets(f)).to.have.length(LEASE_ROUNDS_MAX + 1);
    expect(header(puts(f)[0], "if-none-match")).to.equal("*");
  });

  it("a store that fails otherwise returns the value and reports a fill-failed event", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? leaseMiss("tok-3") : envelope(413, "PAYLOAD_TOO_LARGE", "value too large")));
    const { c, events } = client(f);
    expect(new TextDecoder().decode(await c.getOrLoad("big", () => "v"))).to.equal("v");
    expect(events.map((e) => e.type)).to.deep.equal(["fill-failed"]);
    expect(events[0]).to.include({ key: "big" });
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
});
