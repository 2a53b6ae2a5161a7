// Answers no hypercache node sends: the client must not loop on them, read them as a result, or
// let a SyntaxError or TypeError escape. Each becomes a typed error (BadAnswerError, a
// HypercacheError) naming the endpoint.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { BadAnswerError, HypercacheError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, FakeFetch } from "./fake-fetch.js";

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
