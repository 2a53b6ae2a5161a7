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
