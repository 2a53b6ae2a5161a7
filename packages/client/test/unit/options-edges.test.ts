// Options and inputs at their edges: numbers that are not positive, a token that cannot be a
// header, an endpoint with a password in it, a watch whose node flaps with `retry: 0`, and the
// listeners a watch leaves on the caller's signal.
import { getEventListeners } from "node:events";
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { ClientConfigError } from "../../src/errors.js";
import type { ClientOptions } from "../../src/options.js";
import { answer, FakeFetch, settle, sseAnswer } from "./fake-fetch.js";
import { lastDown, watchInBackground } from "./watch-harness.js";

const A = "http://a:1";
const M1 = "http://m1:8081";

function make(f: FakeFetch, extra: Partial<ClientOptions> = {}) {
  const clock = new ManualClock();
  return { clock, c: new HypercacheClient({ endpoints: [A], fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: { next: () => 0 } }, ...extra }) };
}

describe("client option edges", () => {
  for (const name of ["timeoutMs", "maxAnswerBytes", "maxAttempts", "batchConcurrency"] as const) {
    it(`${name} that is 0, negative, fractional or not a number is a ClientConfigError`, () => {
      for (const v of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1.5]) {
        if (name === "timeoutMs" && v === 1.5) continue; // a fraction of a millisecond is a time limit still
        expect(() => make(new FakeFetch(), { [name]: v }), `${name}: ${v}`).to.throw(ClientConfigError, name);
      }
    });
  }

  it("a batch call's concurrency that is not a positive integer is a ClientConfigError, not an empty result", async () => {
    const f = new FakeFetch().on(A, () => answer(200, { results: [{ key: "a", status: 200, stored: true, bytes: 1, owners: [] }] }));
    const { c } = make(f);
    for (const concurrency of [Number.NaN, 0, -2]) {
      expect(await c.setMany([{ key: "a", value: "v" }], { concurrency }).catch((e: unknown) => e), String(concurrency)).to.be.instanceOf(ClientConfigError);
    }
    expect(f.calls).to.have.length(0);
  });

  it("a token with CR, LF or another control character is a ClientConfigError, from the options or from a provider", async () => {
    expect(() => make(new FakeFetch(), { token: "abc\r\nX-Evil: 1" })).to.throw(ClientConfigError);
    const f = new FakeFetch().on(A, () => answer(200, { id: "x", scopes: [], capabilities: [] }));
    const { c } = make(f, { token: async () => "abc\nX-Evil: 1" });
    expect(await c.me().catch((e: unknown) => e)).to.be.instanceOf(ClientConfigError);
    expect(f.calls).to.have.length(0);
  });

  it("an endpoint with a user and password is refused without repeating the password", () => {
    for (const url of ["ftp://u:hunter2@h:21", "http://u:hunter2@h:8080"]) {
      const err = (() => {
        try {
          make(new FakeFetch(), { endpoints: [url] });
        } catch (e) {
          return e as Error;
        }
        return undefined;
      })();
      expect(err, url).to.be.instanceOf(Error);
      expect(err?.message, url).to.not.contain("hunter2");
    }
  });

  it("an endpoint URL that is not a usable base URL is a ClientConfigError naming it (not a TypeError 'Invalid URL'), in endpoints and managementEndpoints", () => {
    for (const url of ["nope", "http://[::1", "http://h:99999", "ftp://h", "http://h/?x=1", "http://h/#f", "http://u:hunter2@h"]) {
      for (const key of ["endpoints", "managementEndpoints"] as const) {
        const f = () => new HypercacheClient({ [key]: [url], fetch: new FakeFetch().fetch, discovery: false });
        expect(f, `${key} ${url}`).to.throw(ClientConfigError, /^endpoint /);
        if (!url.includes("hunter2")) expect(f, `${key} ${url}`).to.throw(url);
      }
    }
  });
});

describe("client watch edges", () => {
  it("a node that opens the stream with retry: 0 and closes it at once, again and again, is waited for longer each time", async () => {
    const { clock, w, statuses } = await watchInBackground(new FakeFetch().on(M1, () => sseAnswer(["retry: 0\n\n"], { endAfter: true })), [M1]);
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      await settle();
      const d = lastDown(statuses);
      waits.push(d?.retryInMs ?? -1);
      clock.advance(d?.retryInMs ?? 0);
    }
    for (let i = 1; i < waits.length; i++) expect(waits[i], `wait ${i}: ${waits.join(", ")}`).to.be.above(waits[i - 1] as number);
    w.close();
  });

  it("a watch leaves no abort listener on the caller's signal once it ended, however many were made", async () => {
    const f = new FakeFetch().on(M1, () => sseAnswer(['event: heartbeat\ndata: {"n":1}\n\n']));
    const { c } = make(f, { endpoints: undefined, managementEndpoints: [M1] });
    const caller = new AbortController();
    for (let i = 0; i < 12; i++) {
      const w = await c.watch({ signal: caller.signal });
      for await (const _ of w) break;
    }
    const w = await c.watch({ signal: caller.signal });
    w.close();
    expect(getEventListeners(caller.signal, "abort")).to.have.length(0);
  });
});
