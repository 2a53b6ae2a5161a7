// close() ends what is in flight: a request waiting for an answer rejects with ClientClosedError at
// once (no failover), a watch's iteration ends, and later calls throw ClientClosedError.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { ClientClosedError, ClientConfigError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, outcome, settle, sseAnswer, stalledAnswer } from "./fake-fetch.js";

const A = "http://a:1";
const B = "http://b:1";
const M1 = "http://m1:8081";

function client(f: FakeFetch, o: { endpoints?: string[]; managementEndpoints?: string[] } = { endpoints: [A, B] }) {
  const clock = new ManualClock();
  return new HypercacheClient({ ...o, fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) } });
}

describe("client close", () => {
  it("a request waiting for its answer rejects with ClientClosedError, without trying another endpoint", async () => {
    const stalled = stalledAnswer(200);
    const f = new FakeFetch().on(A, () => stalled).on(B, () => stalledAnswer(200));
    const c = client(f);
    const got = c.get("k");
    await settle();
    c.close();
    const r = await outcome(got);
    expect(r.state).to.equal("rejected");
    expect((r as { error: unknown }).error).to.be.instanceOf(ClientClosedError).and.instanceOf(ClientConfigError);
    expect(f.order).to.deep.equal([A]);
    expect(stalled.cancelled(), "the body being read is cancelled").to.equal(true);
  });

  it("a request whose fetch has not even answered with headers rejects too", async () => {
    const f = new FakeFetch().on(A, () => new Promise(() => undefined));
    const c = client(f);
    const got = c.set("k", "v");
    await settle();
    c.close();
    expect(await outcome(got)).to.have.property("state", "rejected");
  });

  it("ends an open watch's iteration and cancels its stream", async () => {
    const stream = sseAnswer(['event: heartbeat\ndata: {"n":1}\n\n']);
    const f = new FakeFetch().on(M1, () => stream);
    const c = client(f, { managementEndpoints: [M1] });
    const w = await c.watch();
    const events: unknown[] = [];
    const loop = (async () => {
      for await (const e of w) events.push(e);
      return "ended";
    })();
    await settle();
    expect(events).to.have.length(1);
    c.close();
    expect(await outcome(loop)).to.deep.equal({ state: "resolved", value: "ended" });
    expect(stream.cancelled()).to.equal(true);
  });

  it("setMany sends no further chunk once close() came while one was in flight: the results say none stored, and none was (3 chunks went out, 2 after close())", async () => {
    let release: () => void = () => undefined;
    const f = new FakeFetch().on(A, async (call) => {
      const { items } = JSON.parse(new TextDecoder().decode(call.bodyBytes)) as { items: { key: string }[] };
      if (f.calls.length === 1) await new Promise<void>((r) => (release = r));
      return answer(200, { results: items.map((i) => ({ key: i.key, status: 200, stored: true, bytes: 1, node: "n1", owners: ["n1"] })) });
    });
    const c = client(f);
    const run = c.setMany(Array.from({ length: 3000 }, (_, i) => ({ key: `k${i}`, value: "v" })), { concurrency: 1 });
    await settle();
    c.close();
    const results = await run;
    release();
    await settle();
    expect(results.filter((r) => r.error instanceof ClientClosedError)).to.have.length(3000);
    expect(f.calls).to.have.length(1);
  });

  it("a getOrLoad whose load ends after close() sends no fill (it was sent, and applied)", async () => {
    const f = new FakeFetch().on(A, (call) => (call.init.method === "GET" ? envelope(404, "NOT_FOUND", "no such key", undefined, { "X-Cache-Lease": "tok", "X-Cache-Node": "n1" }) : answer(200, { key: "k", stored: true, bytes: 1, node: "n1", owners: ["n1"] })));
    const c = client(f);
    let loaded: (v: string) => void = () => undefined;
    const got = c.getOrLoad("k", () => new Promise<string>((r) => (loaded = r)));
    await settle();
    c.close();
    loaded("v");
    await outcome(got);
    expect(f.calls.map((x) => x.init.method)).to.deep.equal(["GET"]);
  });

  it("aborts the fetch of a request in flight (its connection ends), not only the call", async () => {
    const f = new FakeFetch().on(A, () => new Promise(() => undefined));
    const c = client(f);
    const got = c.get("k");
    await settle();
    const signal = f.calls[0]?.init.signal;
    c.close();
    expect(await outcome(got)).to.have.property("state", "rejected");
    expect(signal?.aborted, "the fetch's signal").to.equal(true);
    expect(signal?.reason).to.be.instanceOf(ClientClosedError);
  });

  it("calls after close() throw ClientClosedError", async () => {
    const c = client(new FakeFetch());
    c.close();
    c.close();
    const err = await c.get("k").catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ClientClosedError);
    expect(await c.members().catch((e: unknown) => e)).to.be.instanceOf(ClientClosedError);
  });
  it("every Promise-returning data call rejects, never throws, after close() and on a management-only client (a throw escaped .catch() and left a sibling's rejection unhandled)", async () => {
    const closed = client(new FakeFetch());
    closed.close();
    const managementOnly = client(new FakeFetch(), { managementEndpoints: [M1] });
    for (const [c, want] of [[closed, ClientClosedError], [managementOnly, ClientConfigError]] as const) {
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["get", () => c.get("k")],
        ["set", () => c.set("k", "v")],
        ["setJSON", () => c.setJSON("k", 1)],
        ["delete", () => c.delete("k")],
        ["incr", () => c.incr("k")],
        ["touch", () => c.touch("k", { persist: true })],
        ["getMany", () => c.getMany(["k"])],
        ["setMany", () => c.setMany([{ key: "k", value: "v" }])],
        ["deleteMany", () => c.deleteMany(["k"])],
        ["getOrLoad", () => c.getOrLoad("k", async () => "v")],
      ];
      for (const [name, call] of calls) {
        let promise: Promise<unknown> | undefined;
        expect(() => (promise = call()), `${name} throws synchronously`).to.not.throw();
        const r = await outcome(promise as Promise<unknown>);
        expect(r.state, name).to.equal("rejected");
        expect((r as { error: unknown }).error, name).to.be.instanceOf(want);
      }
    }
  });
});
