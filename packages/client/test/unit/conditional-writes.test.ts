// Conditional writes, counters and touches in the client: the headers and bodies sent, the ETag
// read from each answer, and which requests move to another node after an attempt that may have
// reached one (an increment under its Idempotency-Key) and which do not (a conditional write, an
// increment without a key).
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { setManyItemBytes } from "../../src/batch-chunks.js";
import type { HypercacheError} from "../../src/errors.js";
import { PreconditionFailedError, TransportError } from "../../src/errors.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch, timedOut, type Call } from "./fake-fetch.js";

const A = "http://a:1";
const B = "http://b:1";
const TAG = '"lx3k2b1c0-n1"';
const PUT_OK = { key: "k", stored: true, bytes: 3, node: "n1", owners: ["n1"] };
const INCR_OK = { value: 6, version: 17, owners: ["n1", "n2"], applied_by: "n1" };
/** INCR_OK as the client answers it. */
const INCR_RESULT = { value: 6, version: 17, owners: ["n1", "n2"], appliedBy: "n1" };

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
    expect((err as PreconditionFailedError).currentEtag).to.equal('"cur-n2"');
    expect(await c.delete("k", { ifMatch: TAG }).catch((e: unknown) => e)).to.be.instanceOf(PreconditionFailedError);
    expect(header(f.calls[1], "If-Match")).to.equal(TAG);
  });

  it("refuses before sending: an empty ifMatch list, a tag that is not a quoted strong ETag (empty, unquoted, weak, with a line break), both conditions, an ifNoneMatch other than \"*\"", async () => {
    const f = new FakeFetch().on(A, () => answer(200, PUT_OK));
    const c = client(f);
    const bad = [{ ifMatch: [] as string[] }, { ifMatch: "" }, { ifMatch: "lx3k2b1c0-n1" }, { ifMatch: 'W/"lx3k2b1c0-n1"' }, { ifMatch: [TAG, " "] }, { ifMatch: '"a"\r\nX-Evil: 1' }, { ifMatch: [TAG, "*"] }, { ifMatch: Array(65).fill(TAG) as string[] }, { ifMatch: TAG, ifNoneMatch: "*" as const }, { ifNoneMatch: "x" as "*" }];
    for (const o of bad) {
      expect(await c.set("k", "v", o).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
      if (o.ifNoneMatch === undefined) expect(await c.delete("k", { ifMatch: o.ifMatch }).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
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
    expect(await c.incr("hits", { delta: 5, initial: 1, ttl: "1m", consistency: "all" })).to.deep.equal({ ...INCR_RESULT, etag: '"c-n1"' });
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

  for (const ifMatch of [undefined, TAG]) {
    it(`an increment${ifMatch ? " with If-Match" : ""} whose attempt timed out is replayed on the next node with the same Idempotency-Key, and says replayed`, async () => {
      const f = new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, INCR_OK));
      const c = client(f, [A, B]);
      const r = await c.incr("n", { delta: 5, ...(ifMatch ? { ifMatch } : {}) });
      expect(r).to.deep.equal({ ...INCR_RESULT, replayed: true });
      expect(f.order).to.deep.equal([A, B]);
      expect(header(f.calls[0], "Idempotency-Key")).to.match(/^[0-9a-f]{32}$/);
      expect(header(f.calls[1], "Idempotency-Key")).to.equal(header(f.calls[0], "Idempotency-Key"));
    });
  }

  it("an increment answered 500 ends there, key or not: the node may have added it without remembering the key", async () => {
    const f = new FakeFetch().on(A, () => envelope(500, "INTERNAL", "internal error")).on(B, () => answer(200, INCR_OK));
    expect(((await client(f, [A, B]).incr("n").catch((e: unknown) => e)) as HypercacheError).code).to.equal("INTERNAL");
    expect(f.to(B)).to.have.length(0);
  });

  const oneShot: Array<[string, (c: HypercacheClient) => Promise<unknown>]> = [
    ["an increment without a key", (c) => c.incr("n", { idempotencyKey: false })],
    ["set with ifMatch", (c) => c.set("k", "v", { ifMatch: TAG })],
    ["set with ifNoneMatch", (c) => c.set("k", "v", { ifNoneMatch: "*" })],
    ["delete with ifMatch", (c) => c.delete("k", { ifMatch: TAG })],
    ["touch with ifMatch", (c) => c.touch("k", { ttl: 1000, ifMatch: TAG })],
  ];
  for (const [what, call] of oneShot) {
    it(`${what} ends with the first attempt's error once it may have reached a node, which cools down; a refused connection or a draining node moves it on, not marked replayed`, async () => {
      const f = new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, PUT_OK));
      const c = client(f, [A, B]);
      expect(await call(c).catch((e: unknown) => e)).to.be.instanceOf(TransportError);
      expect(f.to(B)).to.have.length(0);
      expect(c.endpoints().find((e) => e.url === A)?.consecutiveFailures, "A cools down").to.equal(1);
      const quorum = new FakeFetch().on(A, () => envelope(503, "QUORUM_FAILED", "1 of 2")).on(B, () => envelope(412, "PRECONDITION_FAILED", "changed"));
      expect(((await call(client(quorum, [A, B])).catch((e: unknown) => e)) as HypercacheError).code, "the first answer, not a replay's 412").to.equal("QUORUM_FAILED");
      expect(quorum.to(B)).to.have.length(0);
      for (const first of [() => envelope(503, "DRAINING", "node n1 is draining"), undefined]) {
        const g = new FakeFetch().on(B, () => answer(200, what.startsWith("an increment") ? INCR_OK : what.startsWith("touch") ? { key: "k", bytes: 1, node: "n2", owners: ["n2"] } : what.startsWith("delete") ? { key: "k", deleted: true, bytes: 1, node: "n2", owners: ["n2"] } : PUT_OK));
        if (first) g.on(A, first); // else A refuses connections
        const r = (await call(client(g, [A, B]))) as { replayed?: true };
        expect(g.order).to.deep.equal([A, B]);
        expect(r.replayed, "nothing was applied before").to.equal(undefined);
      }
    });
  }

  it("touch sends exactly one of ttl and persist, with If-Match when given, and answers the new expiry and ETag", async () => {
    const touched = { key: "k", stored: true, bytes: 2, node: "n1", owners: ["n1"], expires_at: "2026-01-01T00:01:00.000Z" };
    const f = new FakeFetch().on(A, () => answer(200, touched, { ETag: '"t-n1"' }));
    const c = client(f);
    expect(await c.touch("k", { ttl: "1m", ifMatch: TAG })).to.deep.equal({ key: "k", bytes: 2, node: "n1", owners: ["n1"], expiresAt: "2026-01-01T00:01:00.000Z", etag: '"t-n1"' });
    await c.touch("k", { persist: true });
    expect(path(f.calls[0])).to.equal("/v1/cache/k/touch");
    expect(jsonBody(f.calls[0])).to.deep.equal({ ttl_ms: 60_000 });
    expect(jsonBody(f.calls[1])).to.deep.equal({ persist: true });
    expect(header(f.calls[0], "If-Match")).to.equal(TAG);
    for (const o of [{}, { ttl: 5, persist: true }, { ttl: 0 }]) {
      expect(await c.touch("k", o as never).catch((e: unknown) => e), JSON.stringify(o)).to.be.instanceOf(TypeError);
    }
    expect(f.calls).to.have.length(2);
  });

  it("an unconditional touch is replayed on the next node after a timeout, and says replayed", async () => {
    const f = new FakeFetch().on(A, () => timedOut()).on(B, () => answer(200, { key: "k", bytes: 1, node: "n2", owners: ["n2"] }));
    const r = await client(f, [A, B]).touch("k", { persist: true });
    expect(r).to.deep.equal({ key: "k", bytes: 1, node: "n2", owners: ["n2"], replayed: true });
  });
});

describe("client conditional batch writes", () => {
  const results = (items: Array<Record<string, unknown>>) => answer(200, { results: items });

  it("setMany sends if_match / if_none_match per item; a 412 item is a PreconditionFailedError with the current ETag", async () => {
    const f = new FakeFetch().on(A, () =>
      results([
        { key: "a", status: 200, stored: true, bytes: 1, owners: ["n1"] },
        { key: "b", status: 412, stored: false, owners: ["n1"], error: "If-Match did not hold", code: "PRECONDITION_FAILED", details: { current_etag: '"cur-n1"' } },
        { key: "c", status: 200, stored: true, bytes: 1, owners: ["n1"] },
      ]),
    );
    const c = client(f);
    const r = await c.setMany([{ key: "a", value: "1", ifMatch: TAG }, { key: "b", value: "2", ifMatch: [TAG, '"x-n2"'] }, { key: "c", value: "3", ifNoneMatch: "*" }]);
    const sent = jsonBody(f.calls[0]).items as Array<Record<string, unknown>>;
    expect(sent.map((i) => [i.if_match ?? null, i.if_none_match ?? null])).to.deep.equal([[TAG, null], [`${TAG}, "x-n2"`, null], [null, "*"]]);
    expect(r[1]?.error).to.be.instanceOf(PreconditionFailedError);
    expect((r[1]?.error as PreconditionFailedError).currentEtag).to.equal('"cur-n1"');
    expect(r.map((x) => x.stored)).to.deep.equal([true, false, true]);
  });

  it("deleteMany takes keys with their If-Match beside plain keys", async () => {
    const f = new FakeFetch().on(A, () => results([{ key: "a", status: 200, deleted: true, bytes: 1, owners: ["n1"] }, { key: "b", status: 200, deleted: true, bytes: 1, owners: ["n1"] }]));
    const c = client(f);
    await c.deleteMany(["a", { key: "b", ifMatch: TAG }]);
    expect(jsonBody(f.calls[0]).keys).to.deep.equal(["a", { key: "b", if_match: TAG }]);
  });

  it("a malformed condition anywhere in a batch is a TypeError before anything is sent", async () => {
    const f = new FakeFetch().on(A, () => results([]));
    const c = client(f);
    expect(await c.setMany([{ key: "a", value: "1" }, { key: "b", value: "2", ifMatch: "unquoted" }]).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    expect(await c.deleteMany(["a", { key: "b", ifMatch: [] }]).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    // An ETag that is not there (batch results carry none): refused, not sent as an unconditional 400.
    expect(await c.deleteMany([{ key: "b", ifMatch: undefined as unknown as string }]).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    expect(f.calls).to.have.length(0);
  });

  it("a chunk holding a conditional item is not replayed on another node once sent; a plain chunk is", async () => {
    const f = new FakeFetch().on(A, () => timedOut()).on(B, () => results([{ key: "a", status: 200, stored: true, bytes: 1, owners: ["n1"] }]));
    const conditional = await client(f, [A, B]).setMany([{ key: "a", value: "1", ifMatch: TAG }]);
    expect(conditional[0]?.error).to.be.instanceOf(TransportError);
    expect(f.to(B)).to.have.length(0);
    const plain = await client(f, [A, B]).setMany([{ key: "a", value: "1" }]);
    expect(plain[0]?.stored).to.equal(true);
    const dels = new FakeFetch().on(A, () => timedOut()).on(B, () => results([{ key: "b", status: 200, deleted: true, bytes: 1, owners: ["n1"] }]));
    const d = await client(dels, [A, B]).deleteMany([{ key: "b", ifMatch: TAG }]);
    expect(d[0]?.error).to.be.instanceOf(TransportError);
    expect(dels.to(B)).to.have.length(0);
  });

  it("setManyItemBytes counts the conditions, so a chunk stays within the body bound", () => {
    const plain = setManyItemBytes({ key: "k", value: "v" });
    expect(setManyItemBytes({ key: "k", value: "v", ifMatch: [TAG, TAG] })).to.equal(plain + JSON.stringify({ if_match: `${TAG}, ${TAG}` }).length - 1);
    expect(setManyItemBytes({ key: "k", value: "v", ifNoneMatch: "*" })).to.equal(plain + ',"if_none_match":"*"'.length);
  });
});
