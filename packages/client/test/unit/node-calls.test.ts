// Calls that act on the answering node's state (clearNode, drain, evict, triggerExpiration) apply on
// one node at most: after a lost answer, a timeout, a reset or a 5xx the request may have been
// applied, so it is never sent to another node; only a request that certainly never left (the
// connection was refused) moves on.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { DrainingError, TimeoutError, TransportError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, outcome, settle, stalledAnswer, timedOut } from "./fake-fetch.js";

const M1 = "http://m1:8081";
const M2 = "http://m2:8081";

function admin(f: FakeFetch) {
  const clock = new ManualClock();
  return { clock, c: new HypercacheClient({ managementEndpoints: [M1, M2], fetch: f.fetch, randomStart: false, timeoutMs: 1000, runtime: { clock, timers: clock, random: seededRandom(1) } }) };
}

const reset = () => {
  throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNRESET" } });
};

describe("client calls aimed at one node", () => {
  const calls = ["clearNode", "drain", "evict", "triggerExpiration"] as const;
  const ANSWER = { node: "m2", removed: 0, cleared: 0, evicted: 0, expired: 0, draining: true };

  for (const call of calls) {
    it(`${call}: a timeout, a reset or a 5xx ends the call on the first node; the second node never sees it`, async () => {
      for (const [label, h, type] of [
        ["timeout", () => timedOut(), TimeoutError],
        ["reset", () => reset(), TransportError],
        ["503", () => envelope(503, "DRAINING"), DrainingError],
      ] as const) {
        const f = new FakeFetch().on(M1, h).on(M2, () => answer(200, ANSWER));
        const err = await admin(f).c[call]().catch((e: unknown) => e);
        expect(err, `${call} after ${label}`).to.be.instanceOf(type);
        expect(f.to(M2), `${call} after ${label}`).to.have.length(0);
      }
    });
  }

  it("a lost answer (no answer within timeoutMs) is not replayed on the second node", async () => {
    const f = new FakeFetch().on(M1, () => stalledAnswer(200)).on(M2, () => answer(200, ANSWER));
    const { c, clock } = admin(f);
    const cleared = c.clearNode();
    await settle();
    clock.advance(1000);
    const r = await outcome(cleared);
    expect(r.state).to.equal("rejected");
    expect(f.to(M2)).to.have.length(0);
  });

  it("a refused connection (the request never left) moves the call to the second node", async () => {
    const f = new FakeFetch().on(M2, () => answer(200, ANSWER));
    expect(await admin(f).c.clearNode()).to.deep.equal(ANSWER);
    expect(f.order).to.deep.equal([M1, M2]);
  });

  it("reads of the management listener still fail over after a timeout", async () => {
    const f = new FakeFetch().on(M1, () => timedOut()).on(M2, () => answer(200, { node: "m2", membership_version: 1, replication: 1, members: [] }));
    expect(await admin(f).c.members()).to.include({ node: "m2" });
  });
});
