// The attempt's time limit covers the headers and the whole body, whatever the fetch does with its
// signal: a body that never ends fails the attempt and the request moves to the next endpoint; a
// watch that gets an error answer with an endless body goes down and reconnects elsewhere. All on
// a ManualClock: the time limit passes when the test says so.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { AllEndpointsFailedError, TimeoutError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, bytesAnswer, FakeFetch, outcome, settle, sseAnswer, stalledAnswer } from "./fake-fetch.js";
import { watchInBackground } from "./watch-harness.js";

const A = "http://a:1";
const B = "http://b:1";
const M1 = "http://m1:8081";
const M2 = "http://m2:8081";

function client(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  const c = new HypercacheClient({ endpoints: [A, B], fetch: f.fetch, randomStart: false, discovery: false, timeoutMs: 1000, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
  return { c, clock };
}

describe("client time limits", () => {
  it("a body that never ends fails the attempt at timeoutMs and the request moves to the next endpoint", async () => {
    const f = new FakeFetch().on(A, () => stalledAnswer(200)).on(B, () => bytesAnswer(200, new Uint8Array([7])));
    const { c, clock } = client(f);
    const got = c.get("k");
    await settle();
    clock.advance(999);
    expect((await outcome(got)).state, "still within the limit").to.equal("pending");
    clock.advance(1);
    expect(await outcome(got)).to.deep.include({ state: "resolved", value: new Uint8Array([7]) });
    expect(f.order).to.deep.equal([A, B]);
  });

  it("the time limit also ends a JSON answer's body, and every endpoint timing out ends with TimeoutErrors", async () => {
    const f = new FakeFetch().on(A, () => stalledAnswer(200)).on(B, () => stalledAnswer(200));
    const { c, clock } = client(f);
    const item = c.getItem("k");
    await settle();
    clock.advance(1000);
    await settle();
    clock.advance(1000);
    const r = await outcome(item);
    expect(r.state).to.equal("rejected");
    const err = (r as { error: AllEndpointsFailedError }).error;
    expect(err).to.be.instanceOf(AllEndpointsFailedError);
    expect(err.attempts.map((a) => a.error)).to.satisfy((es: Error[]) => es.every((e) => e instanceof TimeoutError));
  });

  for (const status of [503, 429]) {
    it(`a watch whose stream request gets ${status} with an endless body goes down and reconnects to the next endpoint`, async () => {
      const f = new FakeFetch().on(M1, () => stalledAnswer(status, { "content-type": "text/plain" })).on(M2, () => sseAnswer(['event: heartbeat\ndata: {"n":1}\n\n']));
      const { c, clock, w, statuses, events } = await watchInBackground(f, [M1, M2], { timeoutMs: 1000 });
      await settle();
      clock.advance(1000);
      await settle();
      // A 503 fails over within the request; a 429 is an answer: the watch goes down and retries.
      clock.advance(1000);
      await settle();
      clock.advance(2000);
      await settle();
      expect(statuses.map((s) => s.state)).to.include("open");
      expect(statuses.find((s) => s.state === "open")).to.deep.equal({ state: "open", endpoint: M2 });
      expect(events).to.have.length(1);
      w.close();
      c.close();
    });
  }

  it("an answer whose headers come after the time limit is let go: its body is cancelled, never read", async () => {
    let release: (r: ReturnType<typeof stalledAnswer>) => void = () => undefined;
    const late = stalledAnswer(200);
    const f = new FakeFetch().on(A, () => new Promise((r) => (release = r))).on(B, () => bytesAnswer(200, new Uint8Array([7])));
    const { c, clock } = client(f);
    const got = c.get("k");
    await settle();
    clock.advance(1000);
    expect(await outcome(got)).to.deep.include({ state: "resolved" });
    release(late);
    await settle();
    expect(late.cancelled()).to.equal(true);
  });

  it("a token provider that never answers ends the call at timeoutMs with a TimeoutError: nothing sent, no endpoint cooled down", async () => {
    const f = new FakeFetch().on(A, () => bytesAnswer(200, new Uint8Array([7])));
    const { c, clock } = client(f, { token: () => new Promise<string>(() => undefined) });
    const got = c.get("k");
    await settle();
    clock.advance(999);
    expect(await outcome(got)).to.deep.equal({ state: "pending" });
    clock.advance(1);
    const r = await outcome(got);
    expect((r as { error?: unknown }).error).to.be.instanceOf(TimeoutError);
    expect(f.calls).to.have.length(0);
    expect(c.endpoints().every((e) => e.coolingForMs === 0)).to.equal(true);
  });

  it("a token that comes late leaves the request the rest of the attempt's time limit (maxAttempts × timeoutMs holds)", async () => {
    let tokens = 0;
    const f = new FakeFetch().on(A, () => new Promise(() => undefined)).on(B, () => bytesAnswer(200, new Uint8Array([7])));
    const { c, clock } = client(f, { token: () => (tokens++ === 0 ? new Promise<string>((r) => clock.after(600, () => r("t"))) : "t") });
    const got = c.get("k");
    await settle();
    clock.advance(600);
    await settle();
    expect(f.order).to.deep.equal([A]);
    clock.advance(399);
    await settle();
    expect(f.order).to.deep.equal([A]);
    clock.advance(1);
    expect(await outcome(got)).to.deep.equal({ state: "resolved", value: new Uint8Array([7]) });
    expect(f.order).to.deep.equal([A, B]);
  });

  it("passes an answer that came in time through unchanged", async () => {
    const f = new FakeFetch().on(A, () => answer(200, { key: "k", deleted: true, bytes: 1, node: "n" }));
    const { c } = client(f);
    expect(await c.delete("k")).to.deep.equal({ key: "k", deleted: true, bytes: 1, node: "n" });
  });
});
