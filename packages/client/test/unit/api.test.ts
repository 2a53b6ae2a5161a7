import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { AllEndpointsFailedError, NotFoundError, PayloadTooLargeError } from "../../src/errors.js";
import type { SetManyItem } from "../../src/batch-ops.js";
import { jsonStringBytes, setManyItemBytes } from "../../src/batch-chunks.js";
import { BATCH_BODY_BYTES_MAX } from "../../src/options.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, bytesAnswer, envelope, FakeFetch, type Call } from "./fake-fetch.js";

const A = "http://a:1";

function make(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints: [A], fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

const path = (c: Call | undefined) => (c ? c.url.slice(A.length) : "");
const jsonBody = (c: Call | undefined) => JSON.parse(new TextDecoder().decode(c?.bodyBytes)) as Record<string, unknown>;

describe("client single-key calls", () => {
  it("encodes keys as one path segment, including '/', 'keys' and dot segments", async () => {
    const f = new FakeFetch().on(A, () => bytesAnswer(200, new Uint8Array([1])));
    const c = make(f);
    for (const k of ["photo/42", "keys", "..", "ü ?#%"]) await c.get(k);
    expect(f.calls.map(path)).to.deep.equal(["/v1/cache/photo%2F42", "/v1/cache/%6Beys", "/v1/cache/%2E%2E", "/v1/cache/%C3%BC%20%3F%23%25"]);
  });

  it("get returns the bytes, undefined for a missing key, and throws for an unknown route", async () => {
    const bytes = new Uint8Array([0, 255, 7]);
    const f = new FakeFetch().on(A, (call) => {
      if (call.url.endsWith("/there")) return bytesAnswer(200, bytes);
      if (call.url.endsWith("/missing")) return envelope(404, "NOT_FOUND", "no such key");
      return envelope(404, "NOT_FOUND", "no route", { route: "unknown" });
    });
    const c = make(f);
    expect(await c.get("there")).to.deep.equal(bytes);
    expect(await c.get("missing")).to.equal(undefined);
    expect(await c.getText("missing")).to.equal(undefined);
    expect(await c.get("elsewhere").catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
    expect(f.calls[0]?.init.headers.accept).to.equal("application/octet-stream");
  });

  it("getText and getJSON decode the value; getItem decodes the envelope", async () => {
    const doc = { a: [1, "ü"] };
    const envelopeBody = { key: "k", value: btoa("hi"), value_encoding: "base64", version: 7, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", ttl_ms: 5000, expires_at: "2026-01-01T00:00:05.000Z", node: "n2", owners: ["n1", "n2"] };
    const f = new FakeFetch().on(A, (call) => (call.init.headers.accept === "application/json" ? answer(200, envelopeBody) : bytesAnswer(200, new TextEncoder().encode(JSON.stringify(doc)))));
    const c = make(f);
    expect(await c.getJSON("k")).to.deep.equal(doc);
    expect(await c.getText("k")).to.equal(JSON.stringify(doc));
    expect(await c.getItem("k")).to.deep.equal({ key: "k", value: new TextEncoder().encode("hi"), version: 7, origin: "n1", lastUpdated: "2026-01-01T00:00:00.000Z", ttlMs: 5000, expiresAt: "2026-01-01T00:00:05.000Z", node: "n2", owners: ["n1", "n2"] });
  });

  it("head reads the metadata headers, and answers undefined on 404", async () => {
    const f = new FakeFetch().on(A, (call) =>
      call.url.endsWith("/k")
        ? answer(200, "", { "Content-Length": "11", "X-Cache-Version": "9", "X-Cache-Origin": "n1", "X-Cache-Last-Updated": "2026-01-01T00:00:00.000Z", "X-Cache-Owners": "n1,n3", "X-Cache-Node": "n3" })
        : // A key miss as the server answers HEAD: no body, X-Cache-Node and X-Cache-Owners.
          answer(404, "", { "X-Cache-Node": "n3", "X-Cache-Owners": "n1,n3" }),
    );
    const c = make(f);
    expect(await c.head("k")).to.deep.equal({ key: "k", size: 11, version: 9, origin: "n1", lastUpdated: "2026-01-01T00:00:00.000Z", node: "n3", owners: ["n1", "n3"] });
    expect(await c.head("gone")).to.equal(undefined);
    expect(f.calls[0]?.init.method).to.equal("HEAD");
  });

  it("set sends the bytes with the TTL in milliseconds and the consistency; a bad TTL is refused before sending", async () => {
    const f = new FakeFetch().on(A, () => answer(200, { key: "k", stored: true, bytes: 2, node: "n", owners: ["n"] }));
    const c = make(f);
    await c.set("k", "hé", { ttl: "1m30s", consistency: "all" });
    await c.set("k", new Uint16Array([1]), { ttl: 250 });
    await c.setJSON("k", { x: 1 });
    expect(f.calls.map(path)).to.deep.equal(["/v1/cache/k?ttl=90000ms&consistency=all", "/v1/cache/k?ttl=250ms", "/v1/cache/k"]);
    expect(f.calls[0]?.bodyBytes).to.deep.equal(new TextEncoder().encode("hé"));
    expect(f.calls[1]?.bodyBytes).to.deep.equal(new Uint8Array([1, 0]));
    expect(new TextDecoder().decode(f.calls[2]?.bodyBytes)).to.equal('{"x":1}');
    for (const ttl of ["0s", "-1s", "10", 0, 1.5]) {
      expect(await c.set("k", "v", { ttl }).catch((e: unknown) => e), String(ttl)).to.be.instanceOf(TypeError);
    }
    expect(f.calls).to.have.length(3);
  });

  it("delete, owners, me and can return the answers' fields", async () => {
    const f = new FakeFetch().on(A, (call) => {
      const p = path(call);
      if (p.startsWith("/v1/owners/")) return answer(200, { key: "k", owners: ["n2", "n1"], node: "n1" });
      if (p === "/v1/me") return answer(200, { id: "svc", scopes: ["read"], capabilities: ["cache.read"] });
      if (p.startsWith("/v1/me/can")) return answer(200, { capability: "cache.write", allowed: false });
      return answer(200, { key: "k", deleted: true, bytes: 4, node: "n1", owners: ["n1"] });
    });
    const c = make(f);
    expect(await c.delete("k", { consistency: "one" })).to.include({ deleted: true, bytes: 4 });
    expect(await c.owners("k")).to.deep.equal(["n2", "n1"]);
    expect(await c.me()).to.include({ id: "svc" });
    expect(await c.can("cache.write")).to.equal(false);
    expect(f.calls.map((x) => `${x.init.method} ${path(x)}`)).to.deep.equal(["DELETE /v1/cache/k?consistency=one", "GET /v1/owners/k", "GET /v1/me", "GET /v1/me/can?capability=cache.write"]);
  });
});

describe("client batches", () => {
  /** `failKey`: the chunk holding this key is answered 413 as a whole. */
  function batchServer(opts: { failKey?: string } = {}) {
    let inFlight = 0;
    let maxInFlight = 0;
    let chunkNo = 0;
    const f = new FakeFetch().on(A, async (call) => {
      const no = chunkNo++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // Later chunks answer sooner, so completion order differs from input order.
      await new Promise((r) => setTimeout(r, 8 - (no % 4) * 2));
      inFlight--;
      const body = jsonBody(call);
      if (opts.failKey && JSON.stringify(body).includes(`"${opts.failKey}"`)) return envelope(413, "PAYLOAD_TOO_LARGE", "too big");
      if (call.url.includes("/batch/put")) {
        return answer(200, { results: (body.items as { key: string }[]).map((it) => (it.key === "bad" ? { key: it.key, status: 400, stored: false, owners: [], error: "bad key", code: "BAD_REQUEST" } : { key: it.key, status: 200, stored: true, bytes: 1, owners: ["n1"] })) });
      }
      if (call.url.includes("/batch/get")) {
        return answer(200, { results: (body.keys as string[]).map((k) => (k.startsWith("missing") ? { key: k, status: 404, found: false, owners: [], error: "no such key", code: "NOT_FOUND" } : { key: k, status: 200, found: true, value: btoa(k), value_encoding: "base64", version: 1, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", node: "n1", owners: ["n1"] })) });
      }
      return answer(200, { results: (body.keys as string[]).map((k) => ({ key: k, status: 200, deleted: true, bytes: 1, owners: [] })) });
    });
    return { f, maxInFlight: () => maxInFlight };
  }

  it("cuts 2500 keys into chunks of 1000, runs at most the concurrency at once, and keeps input order", async () => {
    const { f, maxInFlight } = batchServer();
    const keys = Array.from({ length: 2500 }, (_, i) => (i % 7 === 0 ? `missing-${i}` : `k${i}`));
    const results = await make(f, { batchConcurrency: 2 }).getMany(keys);
    expect(f.calls.map((c) => (jsonBody(c).keys as string[]).length)).to.deep.equal([1000, 1000, 500]);
    expect(maxInFlight()).to.equal(2);
    expect(results.map((r) => r.key)).to.deep.equal(keys);
    expect(results[0]).to.deep.equal({ key: "missing-0", found: false });
    expect(new TextDecoder().decode(results[1]?.item?.value)).to.equal("k1");
  });

  it("reports a failed item and a failed chunk in the results instead of throwing", async () => {
    const { f } = batchServer({ failKey: "k1500" });
    const items = Array.from({ length: 2100 }, (_, i) => ({ key: i === 5 ? "bad" : `k${i}`, value: i % 2 ? "text" : new Uint8Array([i % 256]), ttl: "1s" }));
    const results = await make(f).setMany(items);
    expect(results).to.have.length(2100);
    expect(results[5]?.error).to.include({ status: 400, code: "BAD_REQUEST" });
    expect(results.slice(1000, 2000).every((r) => r.error instanceof PayloadTooLargeError && !r.stored)).to.equal(true);
    expect(results.filter((r) => r.stored)).to.have.length(2100 - 1 - 1000);
    const sent = (jsonBody(f.calls.find((c) => c.url.includes("batch") && new TextDecoder().decode(c.bodyBytes).includes('"k0"'))).items as Record<string, unknown>[]).slice(0, 2);
    expect(sent).to.deep.equal([{ key: "k0", value: btoa("\0"), value_encoding: "base64", ttl_ms: 1000 }, { key: "k1", value: "text", ttl_ms: 1000 }]);
  });

  it("setMany also cuts by body size: 100 items of 200 KB go in bodies under BATCH_BODY_BYTES_MAX (one body was 20 MB, over the server's 16 MiB: all 413), all stored, in order", async () => {
    const { f } = batchServer();
    const items = Array.from({ length: 100 }, (_, i) => ({ key: `big${i}`, value: i % 2 ? "é".repeat(100_000) : new Uint8Array(200_000).fill(i) }));
    const results = await make(f).setMany(items);
    const bodies = f.calls.map((c) => c.bodyBytes?.byteLength ?? 0);
    expect(bodies.length).to.be.greaterThan(1);
    expect(Math.max(...bodies)).to.be.at.most(BATCH_BODY_BYTES_MAX);
    expect(f.calls.flatMap((c) => (jsonBody(c).items as { key: string }[]).map((it) => it.key))).to.deep.equal(items.map((it) => it.key));
    expect(results.every((r) => r.stored)).to.equal(true);
  });

  it("an item alone over the body bound fails alone with PayloadTooLargeError and is never sent; its neighbours are stored", async () => {
    const { f } = batchServer();
    const items = [{ key: "a", value: "x" }, { key: "huge", value: "y".repeat(5000) }, { key: "b", value: "z" }];
    const results = await make(f, { batchBodyBytes: 4096 }).setMany(items);
    expect(results.map((r) => r.stored)).to.deep.equal([true, false, true]);
    expect(results[1]?.error).to.be.instanceOf(PayloadTooLargeError);
    expect(results[1]?.error?.message).to.match(/over the client's batch body bound of 4096 bytes/);
    expect(f.calls.some((c) => new TextDecoder().decode(c.bodyBytes).includes('"huge"'))).to.equal(false);
    expect(Math.max(...f.calls.map((c) => c.bodyBytes?.byteLength ?? 0))).to.be.at.most(4096);
  });

  it("counts an item's JSON bytes exactly without building it (escapes, multi-byte text, surrogates, base64, ttl)", () => {
    const texts = ["", "plain", 'q"b\\s', "\n\t\b\f\r\u0001\u001f", "é€😀", "\ud800 lone", "lone \udc00", "\u2028"];
    for (const t of texts) expect(jsonStringBytes(t), JSON.stringify(t)).to.equal(Buffer.byteLength(JSON.stringify(t)));
    const items: SetManyItem[] = [
      { key: "k", value: "v" },
      { key: "ké", value: "x\n".repeat(3), ttl: "1m30s" },
      { key: "b", value: new Uint8Array(7), ttl: 1500 },
      { key: "e", value: "AAAA", encoding: "base64" },
      { key: "v", value: new DataView(new ArrayBuffer(10)) },
    ];
    const wire = (it: SetManyItem) => ({ key: it.key, value: typeof it.value === "string" ? it.value : Buffer.from((it.value as ArrayBufferView).buffer).toString("base64"), ...(typeof it.value !== "string" || it.encoding ? { value_encoding: "base64" } : {}), ...(it.ttl !== undefined ? { ttl_ms: typeof it.ttl === "number" ? it.ttl : 90_000 } : {}) });
    for (const it of items) expect(setManyItemBytes(it), it.key).to.equal(Buffer.byteLength(JSON.stringify(wire(it))));
  });

  describe("getMany past a node's answer budget (items past it are 413 in place: read them in another call)", () => {
    /** A node answering at most `budget` values a call (the first always), the rest 413; "huge" is 413 unless first; `then` answers the calls after the first. */
    function budgetNode(budget: number, then?: () => ReturnType<typeof answer>) {
      const f = new FakeFetch().on(A, (call) => {
        if (then && f.calls.length > 1) return then();
        let values = 0;
        const results = (jsonBody(call).keys as string[]).map((key, i) => {
          if (key.startsWith("missing")) return { key, status: 404, found: false, owners: ["n1"], node: "n1", error: "no such key", code: "NOT_FOUND" };
          values++;
          if (key === "huge" || (i > 0 && values > budget)) return { key, status: 413, found: false, owners: ["n1"], node: "n1", error: "the answer reached its limit of 16777216 value bytes; read this key in another call", code: "PAYLOAD_TOO_LARGE", details: { limit_bytes: 16777216 } };
          return { key, status: 200, found: true, value: btoa(key), value_encoding: "base64", version: 1, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", node: "n1", owners: ["n1"] };
        });
        return answer(200, { results });
      });
      return f;
    }

    it("asks again for the keys the node left out, until every one is read, in input order", async () => {
      const f = budgetNode(3);
      const keys = ["k0", "missing-1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"];
      const results = await make(f).getMany(keys);
      expect(results.map((r) => (r.found ? new TextDecoder().decode(r.item?.value) : (r.error?.name ?? "missing")))).to.deep.equal(["k0", "missing", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"]);
      expect(f.calls.map((c) => (jsonBody(c).keys as string[]).length)).to.deep.equal([10, 6, 3]);
    });

    it("a key that still gets 413 alone in a call keeps its PayloadTooLargeError; a call that fails whole fails only the keys it asked for again", async () => {
      const alone = budgetNode(10);
      const results = await make(alone).getMany(["a", "huge", "b"]);
      expect(results.map((r) => r.found)).to.deep.equal([true, false, true]);
      expect(results[1]?.error).to.be.instanceOf(PayloadTooLargeError);
      expect(alone.calls.map((c) => jsonBody(c).keys)).to.deep.equal([["a", "huge", "b"], ["huge"]]);
      const down = await make(budgetNode(1, () => envelope(503, "UNAVAILABLE"))).getMany(["a", "b", "c"]);
      expect(down.map((r) => r.found)).to.deep.equal([true, false, false]);
      expect(down.slice(1).every((r) => r.error instanceof AllEndpointsFailedError)).to.equal(true);
    });
  });

  it("deleteMany answers per key; a chunk whose every endpoint failed becomes per-item errors", async () => {
    const { f } = batchServer();
    expect((await make(f).deleteMany(["a", "b"])).map((r) => r.deleted)).to.deep.equal([true, true]);
    const down = await make(new FakeFetch()).deleteMany(["a", "b"]);
    expect(down.every((r) => r.error instanceof AllEndpointsFailedError)).to.equal(true);
  });
});

describe("client key browser", () => {
  it("follows next_cursor over every page and collects partial nodes", async () => {
    const pages: Record<string, unknown> = {
      "": { keys: ["a", "b"], next_cursor: "c1", total_matched: 5, truncated: false, node: "n1", partial_nodes: [] },
      c1: { keys: ["c", "d"], next_cursor: "c2", total_matched: 5, truncated: false, node: "n2", partial_nodes: ["n3"] },
      c2: { keys: ["e"], next_cursor: "", total_matched: 5, truncated: true, node: "n1", partial_nodes: ["n3"] },
    };
    const f = new FakeFetch().on(A, (call) => answer(200, pages[new URL(call.url).searchParams.get("cursor") ?? ""]));
    const it = make(f).keys({ q: "user:*", max: 5 });
    expect(await it.toArray()).to.deep.equal(["a", "b", "c", "d", "e"]);
    expect(it.partialNodes).to.deep.equal(["n3"]);
    expect(it.truncated).to.equal(true);
    expect(it.pages).to.equal(3);
    expect(path(f.calls[0])).to.equal("/v1/cache/keys?q=user%3A*&limit=500&max=5");
  });
});
