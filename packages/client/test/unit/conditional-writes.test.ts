// Conditional writes, counters and touches in the client: the headers and bodies sent, the ETag
// read from each answer, and which requests move to another node after an attempt that may have
// reached one (an increment under its Idempotency-Key) and which do not (a conditional write, an
// increment without a key).
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import type { HypercacheError} from "../../src/errors.js";
import { PreconditionFailedError, TransportError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, timedOut, type Call } from "./fake-fetch.js";

const A = "http://a:1";
const B = "http://b:1";
const TAG = '"lx3k2b1c0-n1"';
const PUT_OK = { key: "k", stored: true, bytes: 3, node: "n1", owners: ["n1"] };
const INCR_OK = { value: 6, version: 17, owners: ["n1", "n2"], applied_by: "n1" };

function client(f: FakeFetch, endpoints = [A]) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints, fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) } });
}

const header = (c: Call | undefined, name: string) => c?.init.headers[name] ?? c?.init.headers[name.toLowerCase()];
const path = (c: Call | undefined) => (c ? c.url.slice(c.endpoint.length) : "");
const jsonBody = (c: Call | undefined) => JSON.parse(new TextDecoder().decode(c?.bodyBytes)) as Record<string, unknown>;

describe("client conditional writes, counters and touches", () => {
  it("set with ifMatch or ifNoneMatch sends the condition headers and answers the new ETag; a plain set sends none", async () => {
    const f = new FakeFetch().on(A, () => answer(200, PUT_OK, { ETag: '"new-n1"' }));
    const c = client(f);
    expect(await c.set("k", "abc", { ifMatch: TAG })).to.deep.equal({ ...PUT_OK, etag: '"new-n1"' });
    await c.set("k", "abc", { ifMatch: [TAG, '"other-n2"'] });
    await c.set("k", "abc", { ifMatch: "*" });
    await c.set("k", "abc", { ifNoneMatch: "*" });
    await c.set("k", "abc");
    expect(f.calls.map((call) => header(call, "If-Match") ?? null)).to.deep.equal([TAG, `${TAG}, "other-n2"`, "*", null, null]);
    expect(f.calls.map((call) => header(call, "If-None-Match") ?? null)).to.deep.equal([null, null, null, "*", null]);
    expect(header(f.calls[0], "content-type")).to.equal("application/octet-stream");
  });

  it("a condition that does not hold is a PreconditionFailedError with the current ETag", async () => {
    const f = new FakeFetch().on(A, () => envelope(412, "PRECONDITION_FAILED", "If-Match did not hold", { current_etag: '"cur-n2"' }));
    const c = client(f);
    const err = await c.set("k", "v", { ifMatch: TAG }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(PreconditionFailedError);
    expect((err as HypercacheError).details).to.deep.equal({ current_etag: '"cur-n2"' });
    expect(await c.delete("k", { ifMatch: TAG }).catch((e: unknown) => e)).to.be.instanceOf(PreconditionFailedError);
    expect(header(f.calls[1], "If-Match")).to.equal(TAG);
  });

  it("refuses before sending: an empty ifMatch list, an empty ETag, an ifNoneMatch other than \"*\"", async () => {
    const f = new FakeFetch().on(A, () => answer(200, PUT_OK));
    const c = client(f);
    for (const o of [{ ifMatch: [] as string[] }, { ifMatch: "" }, { ifMatch: [TAG, " "] }, { ifNoneMatch: "x" as "*" }]) {
      expect(await c.set("k", "v", o).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
    }
    expect(f.calls).to.have.length(0);
  });

  it("getItem and head read the item's ETag", async () => {
    const env = { key: "k", value: btoa("hi"), value_encoding: "base64", version: 7, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", node: "n2", owners: ["n1", "n2"] };
    const f = new FakeFetch().on(A, (call) =>
      call.init.method === "HEAD"
        ? answer(200, "", { "Content-Length": "2", "X-Cache-Version": "7", "X-Cache-Origin": "n1", "X-Cache-Node": "n2", "X-Cache-Owners": "n1,n2", ETag: TAG })
        : answer(200, env, { ETag: TAG }),
    );
    const c = client(f);
    expect((await c.getItem("k"))?.etag).to.equal(TAG);
    expect((await c.head("k"))?.etag).to.equal(TAG);
  });

  it("incr posts delta, initial and the TTL with a fresh Idempotency-Key per call, and answers the value with its ETag", async () => {
    const f = new FakeFetch().on(A, () => answer(200, INCR_OK, { ETag: '"c-n1"' }));
    const c = client(f);
    expect(await c.incr("hits", { delta: 5, initial: 1, ttl: "1m", consistency: "all" })).to.deep.equal({ ...INCR_OK, etag: '"c-n1"' });
    await c.incr("hits");
    expect(path(f.calls[0])).to.equal("/v1/cache/hits/incr?consistency=all");
    expect(f.calls[0]?.init.method).to.equal("POST");
    expect(jsonBody(f.calls[0])).to.deep.equal({ delta: 5, initial: 1, ttl: "60000ms" });
    expect(jsonBody(f.calls[1])).to.deep.equal({ delta: 1, initial: 0 });
    const keys = f.calls.map((call) => header(call, "Idempotency-Key"));
    for (const k of keys) expect(k).to.match(/^[0-9a-f]{32}$/);
    expect(keys[0]).to.not.equal(keys[1]);
  });

  it("incr takes the caller's Idempotency-Key, or none, and If-Match; bad numbers and keys are refused before sending", async () => {
    const f = new FakeFetch().on(A, () => answer(200, INCR_OK));
    const c = client(f);
    await c.incr("n", { idempotencyKey: "order-42", ifMatch: TAG });
    await c.incr("n", { idempotencyKey: false });
    expect(header(f.calls[0], "Idempotency-Key")).to.equal("order-42");
    expect(header(f.calls[0], "If-Match")).to.equal(TAG);
    expect(header(f.calls[1], "Idempotency-Key")).to.equal(undefined);
    for (const o of [{ delta: 1.5 }, { delta: 2 ** 53 }, { initial: Number.NaN }, { idempotencyKey: "" }, { idempotencyKey: "with space" }, { idempotencyKey: "x".repeat(257) }]) {
      expect(await c.incr("n", o).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
    }
    expect(f.calls).to.have.length(2);
  });

  it("an increment whose attempt timed out is replayed on the next node with the same Idempotency-Key, and says replayed", async () => {
    const f = new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, INCR_OK));
    const c = client(f, [A, B]);
    const r = await c.incr("n", { delta: 5 });
    expect(r).to.deep.equal({ ...INCR_OK, replayed: true });
    expect(f.order).to.deep.equal([A, B]);
    expect(header(f.calls[1], "Idempotency-Key")).to.equal(header(f.calls[0], "Idempotency-Key"));
  });

  it("without an Idempotency-Key an increment, and a conditional write, end with the first attempt's error once it may have reached a node; a refused connection still moves on", async () => {
    const f = new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, INCR_OK));
    const c = client(f, [A, B]);
    expect(await c.incr("n", { idempotencyKey: false }).catch((e: unknown) => e)).to.be.instanceOf(TransportError);
    expect(await c.set("k", "v", { ifMatch: TAG }).catch((e: unknown) => e)).to.be.instanceOf(TransportError);
    expect(await c.delete("k", { ifMatch: TAG }).catch((e: unknown) => e)).to.be.instanceOf(TransportError);
    expect(f.to(B)).to.have.length(0);
    const g = new FakeFetch().on(B, () => answer(200, PUT_OK)); // A refuses connections
    expect(await client(g, [A, B]).set("k", "v", { ifMatch: TAG })).to.deep.equal(PUT_OK);
    expect(g.order).to.deep.equal([A, B]);
  });

  it("a 503 of a conditional write is the first attempt's answer, not a replay's 412", async () => {
    const f = new FakeFetch().on(A, () => envelope(503, "QUORUM_FAILED", "1 of 2")).on(B, () => envelope(412, "PRECONDITION_FAILED", "changed", { current_etag: '"mine-n1"' }));
    const c = client(f, [A, B]);
    const err = await c.set("k", "v", { ifMatch: TAG }).catch((e: unknown) => e);
    expect((err as HypercacheError).code).to.equal("QUORUM_FAILED");
    expect(f.to(B)).to.have.length(0);
  });

  it("touch sends exactly one of ttl and persist, with If-Match when given, and answers the new expiry and ETag", async () => {
    const touched = { key: "k", stored: true, bytes: 2, node: "n1", owners: ["n1"], expires_at: "2026-01-01T00:01:00.000Z" };
    const f = new FakeFetch().on(A, () => answer(200, touched, { ETag: '"t-n1"' }));
    const c = client(f);
    expect(await c.touch("k", { ttl: "1m", ifMatch: TAG })).to.deep.equal({ ...touched, etag: '"t-n1"' });
    await c.touch("k", { persist: true });
    expect(path(f.calls[0])).to.equal("/v1/cache/k/touch");
    expect(jsonBody(f.calls[0])).to.deep.equal({ ttl_ms: 60_000 });
    expect(jsonBody(f.calls[1])).to.deep.equal({ persist: true });
    expect(header(f.calls[0], "If-Match")).to.equal(TAG);
    for (const o of [{}, { ttl: 5, persist: true as const }, { ttl: 0 }]) {
      expect(await c.touch("k", o).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
    }
    expect(f.calls).to.have.length(2);
  });
});
