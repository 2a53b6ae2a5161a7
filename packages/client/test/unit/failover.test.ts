import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { AllEndpointsFailedError, DrainingError, HypercacheError, TimeoutError, TransportError, UnauthorizedError } from "../../src/errors.js";
import type { ClientEvent } from "../../src/failover-transport.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, bytesAnswer, envelope, FakeFetch, timedOut, type Call } from "./fake-fetch.js";

const A = "http://a:1";
const B = "http://b:1";
const C = "http://c:1";
const PUT_OK = { key: "k", stored: true, bytes: 3, node: "n", owners: ["n"] };

function client(f: FakeFetch, endpoints = [A, B, C], extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  const events: ClientEvent[] = [];
  const c = new HypercacheClient({
    endpoints,
    fetch: f.fetch,
    randomStart: false,
    discovery: false,
    runtime: { clock, timers: clock, random: seededRandom(1) },
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { c, clock, events };
}

describe("client failover", () => {
  it("moves a request to the next endpoint on a transport error and reports the failover", async () => {
    const f = new FakeFetch().on(B, () => answer(200, PUT_OK));
    const { c, events } = client(f);
    expect(await c.set("k", "abc")).to.deep.equal(PUT_OK);
    expect(f.order).to.deep.equal([A, B]);
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ type: "failover", endpoint: A, next: B });
    expect((events[0] as { error: Error }).error).to.be.instanceOf(TransportError).and.have.property("message").that.match(/ECONNREFUSED/);
  });

  it("moves on after a 5xx answer and after a timeout", async () => {
    const f = new FakeFetch().on(A, () => envelope(503, "DRAINING", "node is draining")).on(B, () => timedOut()).on(C, () => answer(200, PUT_OK));
    const { c, events } = client(f);
    await c.set("k", "abc");
    expect(f.order).to.deep.equal([A, B, C]);
    const errors = events.map((e) => (e as { error: Error }).error);
    expect(errors[0]).to.be.instanceOf(DrainingError);
    expect(errors[1]).to.be.instanceOf(TimeoutError);
  });

  describe("a batch write through a draining node (200, every item 503 DRAINING naming the node: nothing applied)", () => {
    const drained = (call: Call) => {
      const body = JSON.parse(new TextDecoder().decode(call.bodyBytes)) as { items?: { key: string }[]; keys?: (string | { key: string })[] };
      const keys = body.items?.map((i) => i.key) ?? body.keys?.map((k) => (typeof k === "string" ? k : k.key)) ?? [];
      const item = (key: string) => ({ key, status: 503, owners: ["n1", "n2"], node: "n1", error: "node n1 is draining: writes go to another node", code: "DRAINING", details: { node: "n1" } });
      return answer(200, { results: keys.map((k) => (k === "bad key" ? { key: k, status: 400, owners: [], node: "n1", error: "bad key", code: "BAD_REQUEST" } : item(k))) });
    };
    const serving = (call: Call) => {
      const body = JSON.parse(new TextDecoder().decode(call.bodyBytes)) as { items?: { key: string }[]; keys?: (string | { key: string })[] };
      if (body.items) return answer(200, { results: body.items.map((i) => (i.key === "bad key" ? { key: i.key, status: 400, stored: false, owners: [], node: "n2", error: "bad key", code: "BAD_REQUEST" } : { key: i.key, status: 200, stored: true, bytes: 1, node: "n2", owners: ["n1", "n2"] })) });
      return answer(200, { results: (body.keys ?? []).map((k) => ({ key: typeof k === "string" ? k : k.key, status: 200, deleted: true, bytes: 1, node: "n2" })) });
    };

    it("setMany and deleteMany fail over like a single write, and the node cools down (every item was a DrainingError)", async () => {
      const f = new FakeFetch().on(A, drained).on(B, serving);
      const { c, events } = client(f, [A, B]);
      const items = [{ key: "x", value: "1" }, { key: "y", value: "2" }];
      expect((await c.setMany(items)).map((r) => r.stored)).to.deep.equal([true, true]);
      expect(c.endpoints().find((e) => e.url === A)?.coolingForMs).to.be.above(0);
      expect((await c.setMany(items)).map((r) => r.stored)).to.deep.equal([true, true]);
      expect(await c.deleteMany(["x", { key: "y", ifMatch: '"e1"' }])).to.deep.equal([{ key: "x", deleted: true, bytes: 1 }, { key: "y", deleted: true, bytes: 1 }]);
      expect(f.order).to.deep.equal([A, B, B, B]);
      expect((events[0] as { error: Error }).error).to.be.instanceOf(DrainingError);
    });

    it("a conditional chunk fails over too (nothing was applied), items failed on their own (400) go with it, and it is no replay", async () => {
      const f = new FakeFetch().on(A, drained).on(B, serving);
      const { c } = client(f, [A, B]);
      const results = await c.setMany([{ key: "x", value: "1", ifNoneMatch: "*" }, { key: "bad key", value: "2" }]);
      expect(results.map((r) => r.stored)).to.deep.equal([true, false]);
      expect(results[1]?.error).to.include({ status: 400 });
      expect(f.order).to.deep.equal([A, B]);
      expect(await c.deleteMany([{ key: "x", ifMatch: '"e1"' }])).to.deep.equal([{ key: "x", deleted: true, bytes: 1 }]);
    });

    it("items DRAINING beside items applied, or naming another node (the primary the write was forwarded to), are that answer's results: no failover", async () => {
      const forwarded = (call: Call) => {
        const { items } = JSON.parse(new TextDecoder().decode(call.bodyBytes)) as { items: { key: string }[] };
        return answer(200, { results: items.map((i) => ({ key: i.key, status: 503, owners: ["n9"], node: "n1", error: "node n9 is draining", code: "DRAINING", details: { node: "n9" } })) });
      };
      const f = new FakeFetch().on(A, forwarded).on(B, serving);
      const { c } = client(f, [A, B]);
      const results = await c.setMany([{ key: "x", value: "1" }]);
      expect(results[0]?.error).to.be.instanceOf(DrainingError);
      expect(f.order).to.deep.equal([A]);
    });
  });

  it("returns a 4xx answer at once: the endpoint is hit once and no other is tried", async () => {
    const f = new FakeFetch().on(A, () => envelope(400, "BAD_REQUEST", "bad key")).on(B, () => answer(200, PUT_OK));
    const { c } = client(f);
    const err = await c.set("k", "abc").then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(HypercacheError).and.include({ status: 400, code: "BAD_REQUEST", endpoint: A });
    expect(f.order).to.deep.equal([A]);
  });

  it("replays the same body bytes on every attempt", async () => {
    const value = new Uint8Array([0, 255, 1, 128, 10, 13]);
    const f = new FakeFetch().on(A, () => envelope(500, "INTERNAL")).on(B, () => envelope(503, "UNAVAILABLE")).on(C, () => answer(200, PUT_OK));
    const { c } = client(f);
    await c.set("k", value);
    expect(f.calls).to.have.length(3);
    for (const call of f.calls) expect(call.bodyBytes).to.deep.equal(value);
    const batch = new FakeFetch().on(A, () => envelope(503, "QUORUM_FAILED")).on(B, () => answer(200, { results: [{ key: "a", status: 200, stored: true, owners: [] }] }));
    await client(batch).c.setMany([{ key: "a", value: "v" }]);
    expect(new TextDecoder().decode(batch.calls[1]?.bodyBytes)).to.equal(new TextDecoder().decode(batch.calls[0]?.bodyBytes)).and.match(/"items"/);
  });

  it("stays on the endpoint that worked for the following requests", async () => {
    const f = new FakeFetch().on(B, () => answer(200, PUT_OK)).on(C, () => answer(200, PUT_OK));
    const { c } = client(f);
    await c.set("k", "1");
    await c.set("k", "2");
    await c.set("k", "3");
    expect(f.order).to.deep.equal([A, B, B, B]);
  });

  it("skips a cooling endpoint until its cooldown passes, then tries it again", async () => {
    let aUp = false;
    const f = new FakeFetch().on(A, () => (aUp ? answer(200, PUT_OK) : envelope(503, "DRAINING"))).on(B, () => envelope(503, "DRAINING")).on(C, () => answer(200, PUT_OK));
    const { c, clock } = client(f);
    await c.set("k", "1"); // A, B fail: cooling 1 s
    f.calls.length = 0;
    await c.set("k", "2");
    expect(f.order, "C is current").to.deep.equal([C]);
    aUp = true;
    f.on(C, () => envelope(503, "DRAINING"));
    f.calls.length = 0;
    await c.set("k", "3");
    expect(f.order, "cooling A and B are still tried after C fails, as a last resort").to.deep.equal([C, A]);
    clock.advance(1000);
    f.calls.length = 0;
    await c.set("k", "4");
    expect(f.order).to.deep.equal([A]);
  });

  it("a delete answered after an attempt that may have reached a node says so (replayed: true): its deleted: false may be the replay finding the key the first attempt deleted", async () => {
    const gone = { key: "k", deleted: false, node: "n2" };
    const lost = await client(new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, gone))).c.delete("k");
    expect(lost).to.deep.equal({ ...gone, replayed: true });
    const failed5xx = await client(new FakeFetch().on(A, () => envelope(503, "QUORUM_FAILED")).on(B, () => answer(200, gone))).c.delete("k");
    expect(failed5xx.replayed, "a 5xx may have been applied in part").to.equal(true);
    // A refused connection never reached a node: the answer is the first that could apply it.
    const refusedFirst = await client(new FakeFetch().on(B, () => answer(200, gone))).c.delete("k");
    expect(refusedFirst, "no replayed field when no attempt may have reached a node").to.deep.equal(gone);
    const many = await client(new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, { results: [{ key: "k", status: 200, deleted: false, owners: [] }] }))).c.deleteMany(["k"]);
    expect(many).to.deep.equal([{ key: "k", deleted: false, replayed: true }]);
  });

  it("ends with AllEndpointsFailedError listing each attempt when every endpoint fails", async () => {
    const f = new FakeFetch().on(B, () => envelope(503, "QUORUM_FAILED", "2 of 3 needed"));
    const { c } = client(f);
    const err = (await c.delete("k").catch((e: unknown) => e)) as AllEndpointsFailedError;
    expect(err).to.be.instanceOf(AllEndpointsFailedError);
    expect(err.attempts.map((a) => a.endpoint)).to.deep.equal([A, B, C]);
    expect(err.attempts[1]?.error).to.include({ status: 503, code: "QUORUM_FAILED" });
    expect(err.message).to.contain("2 of 3 needed").and.contain("ECONNREFUSED");
  });

  it("runs discovery once after every endpoint failed and tries the endpoints it found", async () => {
    const D = "http://d:1";
    const f = new FakeFetch()
      .on(A, (call) => (call.url.endsWith("/v1/cluster/endpoints") ? answer(200, { membership_version: 3, endpoints: [{ node: "n4", api_url: D, mgmt_url: "http://d:2", state: "alive" }] }) : envelope(503, "DRAINING")))
      .on(D, () => answer(200, PUT_OK));
    const { c } = client(f, [A, B], { discovery: { atStart: false, intervalMs: 0 } });
    await c.set("k", "v");
    expect(f.calls.map((x) => `${x.endpoint}${new URL(x.url).pathname}`)).to.deep.equal([
      "http://a:1/v1/cache/k",
      "http://b:1/v1/cache/k",
      "http://a:1/v1/cluster/endpoints",
      "http://d:1/v1/cache/k",
    ]);
    expect(c.endpoints().map((e) => e.url)).to.deep.equal([D, A, B]);
  });

  it("stops at once when the caller aborts, without trying another endpoint", async () => {
    const ctrl = new AbortController();
    const f = new FakeFetch().on(A, () => {
      ctrl.abort(new Error("caller gave up"));
      throw new Error("aborted");
    });
    const { c } = client(f);
    const err = await c.get("k", { signal: ctrl.signal }).catch((e: unknown) => e);
    expect(err).to.have.property("message", "caller gave up");
    expect(f.order).to.deep.equal([A]);
  });

  it("passes the attempt time limit to the fetch implementation", async () => {
    const f = new FakeFetch().on(A, () => bytesAnswer(200, new Uint8Array([1])));
    const { c } = client(f, [A], { timeoutMs: 1234 });
    await c.get("k");
    expect(f.calls[0]?.init.timeoutMs).to.equal(1234);
  });

  it("retries once on the same endpoint after a 401 when the credential can be refreshed", async () => {
    let token = "old";
    let refreshes = 0;
    const f = new FakeFetch().on(A, (call) => (call.init.headers.authorization === "Bearer new" ? answer(200, PUT_OK) : envelope(401, "UNAUTHORIZED")));
    const auth = { authorization: () => `Bearer ${token}`, refreshAfterUnauthorized: async () => ((token = "new"), refreshes++, true) };
    const { c } = client(f, [A, B], { auth });
    await c.set("k", "v");
    expect(f.order).to.deep.equal([A, A]);
    expect(refreshes).to.equal(1);
    token = "old";
    const stuck = { authorization: () => "Bearer bad", refreshAfterUnauthorized: async () => ((refreshes++), true) };
    const f2 = new FakeFetch().on(A, () => envelope(401, "UNAUTHORIZED"));
    const err = await client(f2, [A, B], { auth: stuck }).c.set("k", "v").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnauthorizedError);
    expect(f2.order, "one retry only, and a 401 never fails over").to.deep.equal([A, A]);
  });
});
