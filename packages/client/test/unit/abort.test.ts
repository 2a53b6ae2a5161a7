// The caller's signal ends a request whatever it is waiting for: an answer, a token provider that
// takes its time, the discovery run after every endpoint failed, or the one a management call
// waits for to find its endpoint. close() does the same.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { ClientClosedError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { envelope, FakeFetch, outcome, settle } from "./fake-fetch.js";

const A = "http://a:1";

function make(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints: [A], fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

describe("client abort", () => {
  const stop = new Error("caller gave up");

  it("while an async token provider has not answered", async () => {
    const f = new FakeFetch();
    const c = make(f, { token: () => new Promise<string>(() => undefined) });
    const ctrl = new AbortController();
    const got = c.get("k", { signal: ctrl.signal });
    await settle();
    ctrl.abort(stop);
    expect(await outcome(got)).to.deep.equal({ state: "rejected", error: stop });
    expect(f.calls).to.have.length(0);
  });

  it("while the discovery after every endpoint failed has not answered", async () => {
    const f = new FakeFetch().on(A, (call) => (call.url.endsWith("/v1/cluster/endpoints") ? new Promise(() => undefined) : envelope(503, "UNAVAILABLE")));
    const c = make(f, { discovery: { atStart: false, intervalMs: 0 } });
    const ctrl = new AbortController();
    const got = c.get("k", { signal: ctrl.signal });
    await settle();
    expect(f.calls.map((x) => new URL(x.url).pathname)).to.deep.equal(["/v1/cache/k", "/v1/cluster/endpoints"]);
    ctrl.abort(stop);
    expect(await outcome(got)).to.deep.equal({ state: "rejected", error: stop });
  });

  it("while a management call waits for the discovery that finds its endpoint (members, a node call, watch), and close() too", async () => {
    const f = new FakeFetch().on(A, () => new Promise(() => undefined));
    const c = make(f, { discovery: { atStart: false, intervalMs: 0 } });
    const ctrl = new AbortController();
    const calls: Array<Promise<unknown>> = [c.members({ signal: ctrl.signal }), c.drain({ signal: ctrl.signal }), c.watch({ signal: ctrl.signal })];
    await settle();
    expect(f.calls.map((x) => new URL(x.url).pathname)).to.deep.equal(["/v1/cluster/endpoints"]);
    ctrl.abort(stop);
    for (const got of calls) expect(await outcome(got)).to.deep.equal({ state: "rejected", error: stop });
    const closing = c.stats();
    await settle();
    c.close();
    const r = await outcome(closing);
    expect((r as { error?: unknown }).error).to.be.instanceOf(ClientClosedError);
  });

  it("close() ends a request waiting for a token provider", async () => {
    const c = make(new FakeFetch(), { token: () => new Promise<string>(() => undefined) });
    const got = c.get("k");
    await settle();
    c.close();
    const r = await outcome(got);
    expect((r as { error?: unknown }).error).to.be.instanceOf(ClientClosedError);
  });
});
