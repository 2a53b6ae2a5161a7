// Answers no hypercache node sends: the client must not loop on them, read them as a result, or
// let a SyntaxError or TypeError escape. Each becomes a typed error (BadAnswerError, a
// HypercacheError) naming the endpoint.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { BadAnswerError, HypercacheError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, FakeFetch, settle, sseAnswer } from "./fake-fetch.js";
import { watchInBackground } from "./watch-harness.js";

const A = "http://a:1";

function make(f: FakeFetch) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints: [A], fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) } });
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => undefined, (e: unknown) => e);
}

describe("client against hostile answers: key browser", () => {
  const page = { keys: ["a", "b"], total_matched: 2, truncated: false, node: "n1", partial_nodes: [] };

  it("a page without next_cursor is a BadAnswerError after one request, not a loop", async () => {
    const f = new FakeFetch().on(A, () => (f.calls.length > 5 ? answer(200, { ...page, next_cursor: "" }) : answer(200, page)));
    const err = await rejection(make(f).keys().toArray());
    expect(err).to.be.instanceOf(BadAnswerError).and.instanceOf(HypercacheError).and.include({ endpoint: A });
    expect(f.calls).to.have.length(1);
  });

  it("a page that hands back a cursor already followed is a BadAnswerError", async () => {
    const f = new FakeFetch().on(A, (call) => {
      if (f.calls.length > 5) return answer(200, { ...page, next_cursor: "" });
      const cursor = new URL(call.url).searchParams.get("cursor");
      return answer(200, { ...page, next_cursor: cursor === null ? "c1" : cursor === "c1" ? "c2" : "c1" });
    });
    const err = await rejection(make(f).keys().toArray());
    expect(err).to.be.instanceOf(BadAnswerError);
    expect((err as Error).message).to.match(/cursor/);
    expect(f.calls).to.have.length(3);
  });

  it("fresh pages past the result set's cap are a BadAnswerError, not an iteration without end: past max, or 50000 without one", async () => {
    for (const [max, pages] of [[1000, 3], [undefined, 101]] as const) {
      const f = new FakeFetch().on(A, () => {
        const n = f.calls.length;
        return answer(200, { ...page, keys: Array.from({ length: 500 }, (_, i) => `p${n}-k${i}`), next_cursor: `c${n}` });
      });
      const it = make(f).keys({ max });
      let yielded = 0;
      const err = await rejection((async () => {
        for await (const _ of it) if (++yielded > 60_000) break;
      })());
      expect(err, `max ${max}`).to.be.instanceOf(BadAnswerError);
      expect(f.calls, `max ${max}`).to.have.length(pages);
      expect(yielded).to.equal((pages - 1) * 500);
    }
  });

  it("an empty page naming a next one is a BadAnswerError (a page before the last is never empty)", async () => {
    const f = new FakeFetch().on(A, () => answer(200, f.calls.length > 5 ? { ...page, next_cursor: "" } : { ...page, keys: [], next_cursor: `c${f.calls.length}` }));
    expect(await rejection(make(f).keys().toArray())).to.be.instanceOf(BadAnswerError);
    expect(f.calls).to.have.length(1);
  });
});

describe("client against hostile answers: 404s that are not a missing key", () => {
  const html = () => answer(404, "<html><h1>404 Not Found</h1>nginx</html>", { "content-type": "text/html" });
  const unknownRoute = () => answer(404, { error: "no route GET /x", code: "NOT_FOUND", details: { route: "unknown" } }, { "content-type": "application/json" });
  const bare = () => answer(404, "");

  for (const [label, h] of [["a proxy's HTML 404", html], ["hypercache's unknown-route 404 (a wrong path prefix)", unknownRoute], ["a 404 without a body or X-Cache-Node", bare]] as const) {
    it(`${label} is an error for get, getText, getItem and head, not "missing"`, async () => {
      const c = make(new FakeFetch().on(A, h));
      for (const call of [() => c.get("k"), () => c.getText("k"), () => c.getItem("k"), () => c.head("k")]) {
        const err = await rejection(call());
        expect(err, label).to.be.instanceOf(HypercacheError).and.include({ status: 404 });
      }
    });
  }

  it("hypercache's key miss is undefined: the NOT_FOUND envelope, or a bodyless HEAD 404 with X-Cache-Node", async () => {
    const f = new FakeFetch().on(A, (call) =>
      call.init.method === "HEAD" ? answer(404, "", { "x-cache-node": "n1" }) : answer(404, { error: "key \"k\" not found", code: "NOT_FOUND" }, { "content-type": "application/json", "x-cache-node": "n1" }),
    );
    const c = make(f);
    expect(await c.get("k")).to.equal(undefined);
    expect(await c.getItem("k")).to.equal(undefined);
    expect(await c.head("k")).to.equal(undefined);
  });
});

describe("client against hostile answers: 200s that are not hypercache's", () => {
  const json = { "content-type": "application/json" };
  const cases: Record<string, () => ReturnType<typeof answer>> = {
    "a 200 error envelope": () => answer(200, { error: "node failed", code: "INTERNAL" }, json),
    "a 200 HTML page": () => answer(200, "<html><body>Proxy login</body></html>", { "content-type": "text/html" }),
    "200 JSON cut short": () => answer(200, '{"key": "k", "value": ', json),
    "200 {}": () => answer(200, {}, json),
    "200 null": () => answer(200, "null", json),
    "200 with a value that is not base64": () =>
      answer(200, { key: "k", value: "@@@not base64@@@", version: 1, origin: "x", last_updated: "", node: "x", owners: [], results: [{ key: "k", status: 200, found: true, value: "@@@", version: 1, origin: "x", last_updated: "", node: "x", owners: [] }] }, json),
    "200 JSON that is not UTF-8": () => {
      const bytes = new Uint8Array([...new TextEncoder().encode('{"id":"'), 0xff, 0xfe, ...new TextEncoder().encode('","scopes":[],"capabilities":[],"owners":["a"],"allowed":true}')]);
      return { ...answer(200, "", json), arrayBuffer: async () => bytes.slice().buffer };
    },
  };
  const calls: Record<string, (c: HypercacheClient) => Promise<unknown>> = {
    get: (c) => c.get("k"),
    getItem: (c) => c.getItem("k"),
    head: (c) => c.head("k"),
    set: (c) => c.set("k", "v"),
    delete: (c) => c.delete("k"),
    owners: (c) => c.owners("k"),
    me: (c) => c.me(),
    can: (c) => c.can("cache.read"),
    keys: (c) => c.keys().toArray(),
  };
  it("a discovery answer that is not the endpoints JSON is a BadAnswerError from refreshEndpoints (it was taken as no endpoints)", async () => {
    for (const [label, h] of Object.entries(cases)) {
      const clock = new ManualClock();
      const c = new HypercacheClient({ endpoints: [A], fetch: new FakeFetch().on(A, h).fetch, randomStart: false, discovery: { atStart: false }, runtime: { clock, timers: clock, random: seededRandom(1) } });
      expect(await rejection(c.refreshEndpoints()), label).to.be.instanceOf(BadAnswerError);
    }
    const clock = new ManualClock();
    const odd = new HypercacheClient({ endpoints: [A], fetch: new FakeFetch().on(A, () => answer(200, { membership_version: 1, endpoints: [null, 7, { node: "n" }] })).fetch, discovery: { atStart: false }, runtime: { clock, timers: clock, random: seededRandom(1) } });
    expect(await odd.refreshEndpoints(), "odd entries are skipped, as before").to.equal(false);
  });

  for (const [label, h] of Object.entries(cases)) {
    it(`${label}: every call throws a HypercacheError, never returns it or lets a SyntaxError or TypeError out`, async () => {
      const c = make(new FakeFetch().on(A, h));
      for (const [op, call] of Object.entries(calls)) {
        // That body is a well-formed owners answer ({key, owners: []}): only its value is bad.
        if (label.includes("base64") && op === "owners") continue;
        const err = await rejection(call(c));
        expect(err, `${op} on ${label}`).to.be.instanceOf(HypercacheError);
      }
      const many = await c.getMany(["k"]);
      expect(many[0]?.error, `getMany on ${label}`).to.be.instanceOf(HypercacheError);
    });
  }
});

describe("client against hostile answers: management views", () => {
  const M = "http://m:8081";
  const calls: Record<string, (c: HypercacheClient) => Promise<unknown>> = {
    members: (c) => c.members(),
    identity: (c) => c.identity(),
    ring: (c) => c.ring(),
    hints: (c) => c.hints(),
    keyPage: (c) => c.keyPage(),
    replicas: (c) => c.replicas("k"),
    valuePreview: (c) => c.valuePreview("k"),
    stats: (c) => c.stats(),
    drainStatus: (c) => c.drainStatus(),
  };
  for (const [label, body] of [["{}", {}], ["an error envelope", { error: "node failed", code: "INTERNAL" }], ["a list", [1, 2]]] as const) {
    it(`a 200 ${label} is a BadAnswerError for every view, not a view with missing fields`, async () => {
      const clock = new ManualClock();
      const c = new HypercacheClient({ managementEndpoints: [M], fetch: new FakeFetch().on(M, () => answer(200, body)).fetch, runtime: { clock, timers: clock, random: seededRandom(1) } });
      for (const [name, call] of Object.entries(calls)) expect(await rejection(call(c)), name).to.be.instanceOf(BadAnswerError);
    });
  }
});

describe("client against hostile answers: event stream frames", () => {
  it("a members frame without the members view, or a heartbeat that is not an object, is skipped", async () => {
    const M = "http://m:8081";
    const good = { node: "m", membership_version: 2, replication: 1, virtual_nodes: 1, known_nodes: [], members: [] };
    const frames = ["event: members\ndata: {}\n\n", "event: heartbeat\ndata: [1]\n\n", "event: heartbeat\ndata: null\n\n", `event: members\ndata: ${JSON.stringify(good)}\n\n`];
    const { w, events } = await watchInBackground(new FakeFetch().on(M, () => sseAnswer(frames)), [M]);
    await settle();
    expect(events.map((e) => e.type)).to.deep.equal(["members"]);
    expect(events[0]?.data).to.deep.equal(good);
    w.close();
  });
});
