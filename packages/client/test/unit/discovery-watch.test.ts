import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { parseEndpoints } from "../../src/discovery.js";
import { AllEndpointsFailedError, ForbiddenError } from "../../src/errors.js";
import type { ClientEvent } from "../../src/failover-transport.js";
import { systemTimers, seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, sseAnswer } from "./fake-fetch.js";

const SEED = "http://seed:8080";
const ep = (n: number, state = "alive") => ({ node: `n${n}`, api_url: `http://10.0.0.${n}:8080`, mgmt_url: `http://10.0.0.${n}:8081`, state });

function make(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  const events: ClientEvent[] = [];
  const c = new HypercacheClient({ endpoints: [SEED], fetch: f.fetch, randomStart: false, runtime: { clock, timers: clock, random: seededRandom(1) }, onEvent: (e) => events.push(e), ...extra });
  return { c, clock, events };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe("client discovery", () => {
  it("keeps only well-formed entries that are not dead", () => {
    expect(parseEndpoints({ endpoints: [ep(1), ep(2, "dead"), { node: "x" }, null, ep(3, "suspect")] })).to.deep.equal([ep(1), ep(3, "suspect")]);
    expect(parseEndpoints({})).to.deep.equal([]);
  });

  it("adopts the advertised client and management URLs at start, the seed staying as a fallback", async () => {
    let answerWith: unknown = { membership_version: 4, endpoints: [ep(1), ep(2), ep(3)] };
    const f = new FakeFetch().on(SEED, () => answer(200, answerWith));
    const { c, events } = make(f);
    await settle();
    expect(c.endpoints().map((e) => e.url)).to.deep.equal(["http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.0.3:8080", SEED]);
    expect(c.managementEndpoints().map((e) => e.url)).to.deep.equal(["http://10.0.0.1:8081", "http://10.0.0.2:8081", "http://10.0.0.3:8081"]);
    expect(events.at(-1)).to.deep.include({ type: "discovery", changed: true });
    answerWith = { membership_version: 5, endpoints: [] };
    expect(await c.refreshEndpoints()).to.equal(false);
    expect(c.endpoints(), "an empty answer never empties the list").to.have.length(4);
  });

  it("refreshes every 30 s, and a failed refresh leaves the endpoints as they were", async () => {
    let version = 1;
    const f = new FakeFetch().on(SEED, () => answer(200, { membership_version: version, endpoints: version === 1 ? [ep(1)] : [ep(1), ep(4)] }));
    f.on("http://10.0.0.1:8080", () => answer(200, { membership_version: version, endpoints: version === 1 ? [ep(1)] : [ep(1), ep(4)] }));
    const { c, clock } = make(f);
    await settle();
    expect(c.endpoints().map((e) => e.node)).to.deep.equal(["n1", undefined]);
    version = 2;
    clock.advance(29_999);
    await settle();
    expect(c.endpoints()).to.have.length(2);
    clock.advance(1);
    await settle();
    expect(c.endpoints().map((e) => e.node)).to.deep.equal(["n1", "n4", undefined]);
    const calls = f.calls.length;
    f.on(SEED, () => envelope(500, "INTERNAL")).on("http://10.0.0.1:8080", () => envelope(500, "INTERNAL"));
    await c.refreshEndpoints().catch(() => undefined);
    expect(f.calls.length).to.be.greaterThan(calls);
    expect(c.endpoints().map((e) => e.node)).to.deep.equal(["n1", "n4", undefined]);
  });

  it("never runs when discovery is off", async () => {
    const f = new FakeFetch().on(SEED, () => answer(200, { membership_version: 1, endpoints: [ep(1)] }));
    const { c, clock } = make(f, { discovery: false });
    clock.advance(60_000);
    await settle();
    expect(f.calls).to.have.length(0);
    expect(await c.refreshEndpoints()).to.equal(false);
  });
});

describe("client watch", () => {
  const MEMBERS = { node: "n1", replication: 3, virtual_nodes: 128, membership_version: 2, known_nodes: ["n1"], members: [] };

  it("yields typed members and heartbeat events, skipping unknown ones, split across chunks", async () => {
    const data = JSON.stringify(MEMBERS);
    const f = new FakeFetch().on("http://m1:8081", () => sseAnswer(["retry: 10\n\n", `event: members\ndata: ${data.slice(0, 10)}`, `${data.slice(10)}\n\n`, "event: other\ndata: {}\n\n", 'event: heartbeat\ndata: {"dist.write.attempts":3}\n\n']));
    const { c } = make(f, { discovery: false, managementEndpoints: ["http://m1:8081"] });
    const w = await c.watch();
    const got = [];
    for await (const e of w) {
      got.push(e);
      if (got.length === 2) break;
    }
    expect(got).to.deep.equal([
      { type: "members", data: MEMBERS, endpoint: "http://m1:8081" },
      { type: "heartbeat", data: { "dist.write.attempts": 3 }, endpoint: "http://m1:8081" },
    ]);
    expect(f.calls[0]?.init).to.include({ stream: true });
  });

  it("reconnects after the server's retry delay when a stream ends, moving to another node", async () => {
    let m1 = 0;
    const f = new FakeFetch()
      .on("http://m1:8081", () => (m1++ === 0 ? sseAnswer(["retry: 5\n\nevent: heartbeat\ndata: {\"n\":1}\n\n"], { endAfter: true }) : envelope(503, "DRAINING")))
      .on("http://m2:8081", () => sseAnswer(['event: heartbeat\ndata: {"n":2}\n\n']));
    const c = new HypercacheClient({ endpoints: [SEED], fetch: f.fetch, randomStart: false, discovery: false, managementEndpoints: ["http://m1:8081", "http://m2:8081"], runtime: { timers: systemTimers } });
    const w = await c.watch();
    const seen: unknown[] = [];
    for await (const e of w) {
      seen.push(e.data);
      if (seen.length === 2) w.close();
    }
    expect(seen).to.deep.equal([{ n: 1 }, { n: 2 }]);
    expect(f.order).to.deep.equal(["http://m1:8081", "http://m1:8081", "http://m2:8081"]);
  });

  it("throws the typed error of a 4xx answer", async () => {
    const f = new FakeFetch().on("http://m1:8081", () => envelope(403, "FORBIDDEN", "needs read"));
    const { c } = make(f, { discovery: false, managementEndpoints: ["http://m1:8081"] });
    const w = await c.watch();
    const err = await (async () => {
      for await (const _ of w) void _;
    })().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ForbiddenError);
  });

  it("finds management endpoints by discovery when none were given", async () => {
    const f = new FakeFetch().on(SEED, () => answer(200, { membership_version: 1, endpoints: [ep(1)] })).on("http://10.0.0.1:8081", () => answer(200, MEMBERS));
    const { c } = make(f, { discovery: { atStart: false } });
    expect(await c.members()).to.deep.equal(MEMBERS);
    const none = make(new FakeFetch(), { discovery: false }).c;
    expect(await none.members().catch((e: unknown) => (e as Error).message)).to.match(/no management endpoint/);
  });

  it("a management call whose discovery could not reach any client endpoint throws that AllEndpointsFailedError, not a configuration error", async () => {
    const { c } = make(new FakeFetch(), { discovery: { atStart: false } });
    const err = await c.members().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(AllEndpointsFailedError);
    expect((err as AllEndpointsFailedError).attempts.map((a) => a.endpoint)).to.deep.equal([SEED]);
    const forbidden = make(new FakeFetch().on(SEED, () => envelope(403, "FORBIDDEN", "no cluster.read")), { discovery: { atStart: false } }).c;
    expect(await forbidden.members().catch((e: unknown) => e), "the node's refusal, too").to.be.instanceOf(ForbiddenError);
  });
});
