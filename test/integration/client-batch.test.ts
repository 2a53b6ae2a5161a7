// The batch routes of one real node over real HTTP: POST /v1/cache/batch/put, /get and /delete.
// One result per item in request order, per-item failures in place, and the request-level
// errors (400, 415; the 16 MiB body limit is covered in client-api.test.ts).
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectEnvelope } from "../helpers/envelope.js";

type Json = Record<string, unknown>;

interface Reply {
  status: number;
  contentType: string;
  body: Json;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const MIB = 1024 * 1024;

let node: NodeProcess;

/** POSTs `body`; `contentType` null sends no Content-Type at all (a byte body, so fetch adds none). */
async function post(path: string, body: string, contentType: string | null = "application/json"): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (contentType !== null) headers["Content-Type"] = contentType;
  const res = await fetch(node.api + path, { method: "POST", headers, body: new TextEncoder().encode(body) });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    parsed = { unparsable: text };
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: parsed };
}

const batch = (op: "put" | "get" | "delete", body: unknown, query = "") => post(`/v1/cache/batch/${op}${query}`, JSON.stringify(body));

/** The results of a 200 batch answer. */
async function results(op: "put" | "get" | "delete", body: unknown, query = ""): Promise<Json[]> {
  const r = await batch(op, body, query);
  expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
  expect(r.contentType).to.match(/^application\/json/);
  expect(r.body.results).to.be.an("array");
  return r.body.results as Json[];
}

async function rawGet(key: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}`);
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A per-item failure: status, error and code in the item's own result. */
function expectItemError(result: Json | undefined, key: string, status: number, code: string): void {
  expect(result, `no result for ${key}`).to.not.equal(undefined);
  expect(result, JSON.stringify(result)).to.include({ key, status, code });
  expect((result as Json).error).to.be.a("string").and.not.equal("");
}

describe("client API: batch put, get and delete on one real node", function () {
  this.timeout(20_000);

  before(async () => {
    node = await startNode({ id: "client-batch-1" });
  });

  after(async () => {
    await node?.stop("SIGKILL");
  });

  describe("POST /v1/cache/batch/put", () => {
    it("stores every item and answers one result per item in request order: {key, status 200, stored, bytes, node, owners}", async () => {
      const keys = ["bp:c", "bp:a", "bp:b", "bp:a2"];
      const res = await results("put", { items: keys.map((key, i) => ({ key, value: "x".repeat(i + 1) })) });
      expect(res.map((r) => r.key)).to.deep.equal(keys);
      res.forEach((r, i) => expect(r).to.deep.equal({ key: keys[i], status: 200, stored: true, bytes: i + 1, node: node.id, owners: [node.id] }));
      for (const [i, key] of keys.entries()) expect((await rawGet(key)).bytes.toString()).to.equal("x".repeat(i + 1));
    });

    it("decodes a value with value_encoding base64 and stores any other value as its literal UTF-8 bytes", async () => {
      const literal = "héllo ✓ 🚀 \u0000 AAEC";
      const res = await results("put", {
        items: [
          { key: "bp:b64", value: ALL_BYTES.toString("base64"), value_encoding: "base64" },
          { key: "bp:utf8", value: literal },
          { key: "bp:looks-b64", value: "AAEC" },
          { key: "bp:b64-empty", value: "", value_encoding: "base64" },
        ],
      });
      expect(res.map((r) => [r.status, r.bytes])).to.deep.equal([[200, 256], [200, Buffer.byteLength(literal)], [200, 4], [200, 0]]);
      expect((await rawGet("bp:b64")).bytes.equals(ALL_BYTES)).to.equal(true);
      expect((await rawGet("bp:utf8")).bytes.equals(Buffer.from(literal, "utf8"))).to.equal(true);
      expect((await rawGet("bp:looks-b64")).bytes.toString()).to.equal("AAEC");
      const empty = await rawGet("bp:b64-empty");
      expect([empty.status, empty.bytes.length]).to.deep.equal([200, 0]);
    });

    it("an invalid item fails alone with status 400, error and code while every valid item around it is stored", async () => {
      const items: unknown[] = [
        { key: "bi:ok-1", value: "one" },
        { key: "bi:bad-b64", value: "!!not base64!!", value_encoding: "base64" },
        { key: "bi:bad-enc", value: "x", value_encoding: "hex" },
        { key: "bi:ttl-zero", value: "x", ttl_ms: 0 },
        { key: "bi:ttl-neg", value: "x", ttl_ms: -1000 },
        { key: "bi:ttl-frac", value: "x", ttl_ms: 1.5 },
        { key: "bi:ttl-str", value: "x", ttl_ms: "1000" },
        { key: "", value: "empty key" },
        42,
        null,
        "just a string",
        ["key", "value"],
        { key: "bi:no-value" },
        { key: "bi:num-value", value: 7 },
        { key: "k".repeat(4097), value: "key too long" },
        { key: "bi:lone-\ud800", value: "not well-formed unicode" },
        { key: "bi:ok-2", value: "two", ttl_ms: 600_000 },
        // a lone surrogate has no UTF-8 form: stored, it became U+FFFD (EF BF BD)
        { key: "bi:lone-value", value: "x\udc00y" },
      ];
      const res = await results("put", { items });
      expect(res).to.have.length(items.length);
      expect(res[0]).to.include({ key: "bi:ok-1", status: 200, stored: true });
      expectItemError(res[1], "bi:bad-b64", 400, "BAD_REQUEST");
      expectItemError(res[2], "bi:bad-enc", 400, "BAD_REQUEST");
      expectItemError(res[3], "bi:ttl-zero", 400, "BAD_REQUEST");
      expectItemError(res[4], "bi:ttl-neg", 400, "BAD_REQUEST");
      expectItemError(res[5], "bi:ttl-frac", 400, "BAD_REQUEST");
      expectItemError(res[6], "bi:ttl-str", 400, "BAD_REQUEST");
      expectItemError(res[7], "", 400, "BAD_REQUEST");
      for (const i of [8, 9, 10, 11]) expect(res[i], `item ${i}`).to.include({ status: 400, code: "BAD_REQUEST", stored: false });
      expectItemError(res[12], "bi:no-value", 400, "BAD_REQUEST");
      expectItemError(res[13], "bi:num-value", 400, "BAD_REQUEST");
      expect(res[14]).to.include({ status: 400, code: "BAD_REQUEST", stored: false });
      expect(res[15]).to.include({ status: 400, code: "BAD_REQUEST", stored: false });
      expect(res[16]).to.include({ key: "bi:ok-2", status: 200, stored: true });
      expectItemError(res[17], "bi:lone-value", 400, "BAD_REQUEST");
      for (const i of [1, 2, 3, 4, 5, 6, 7, 12, 13]) expect(res[i], `item ${i}`).to.include({ stored: false });

      expect((await rawGet("bi:ok-1")).bytes.toString()).to.equal("one");
      expect((await rawGet("bi:ok-2")).bytes.toString()).to.equal("two");
      for (const key of ["bi:bad-b64", "bi:bad-enc", "bi:ttl-zero", "bi:ttl-neg", "bi:ttl-frac", "bi:ttl-str", "bi:no-value", "bi:num-value"]) {
        expect((await rawGet(key)).status, key).to.equal(404);
      }
    });

    it("a key given twice in one batch ends with the value of its later item", async () => {
      const res = await results("put", { items: [{ key: "bp:twice", value: "first" }, { key: "bp:twice", value: "second" }] });
      expect(res.map((r) => r.status)).to.deep.equal([200, 200]);
      expect((await rawGet("bp:twice")).bytes.toString()).to.equal("second");
    });

    it("an item whose decoded value is above 8 MiB fails alone with 413 PAYLOAD_TOO_LARGE", async () => {
      const res = await results("put", { items: [{ key: "bl:big", value: "a".repeat(8 * MIB + 1) }, { key: "bl:small", value: "s" }] });
      expectItemError(res[0], "bl:big", 413, "PAYLOAD_TOO_LARGE");
      expect(res[1]).to.include({ key: "bl:small", status: 200, stored: true });
      expect((await rawGet("bl:big")).status).to.equal(404);
    });

    it("ttl_ms sets an expiry that batch get reports as ttl_ms and expires_at", async () => {
      await results("put", { items: [{ key: "bt:ttl", value: "v", ttl_ms: 120_000 }, { key: "bt:none", value: "v" }] });
      const [withTtl, without] = await results("get", { keys: ["bt:ttl", "bt:none"] });
      expect(withTtl?.ttl_ms).to.be.a("number").within(100_000, 120_000);
      expect(withTtl?.expires_at).to.match(ISO);
      expect(Date.parse(withTtl?.expires_at as string) - Date.parse(withTtl?.last_updated as string)).to.equal(120_000);
      expect(without).to.not.have.any.keys("ttl_ms", "expires_at");
    });

    it("ttl as a duration string sets the expiry as ttl_ms does; both, or a malformed ttl, fail the item alone", async () => {
      const res = await results("put", {
        items: [
          { key: "bs:ttl", value: "v", ttl: "2m" },
          { key: "bs:both", value: "v", ttl: "2m", ttl_ms: 120_000 },
          { key: "bs:bad", value: "v", ttl: "soon" },
          { key: "bs:zero", value: "v", ttl: "0s" },
        ],
      });
      expect(res[0]).to.include({ key: "bs:ttl", status: 200, stored: true });
      expectItemError(res[1], "bs:both", 400, "BAD_REQUEST");
      expect(res[1]?.error).to.equal("a batch put item takes ttl or ttl_ms, not both");
      for (const [i, key] of [[2, "bs:bad"], [3, "bs:zero"]] as const) {
        expectItemError(res[i], key, 400, "BAD_REQUEST");
        expect(res[i]?.error).to.match(/^ttl must be a positive duration such as 500ms/);
      }
      const [got] = await results("get", { keys: ["bs:ttl"] });
      expect(Date.parse(got?.expires_at as string) - Date.parse(got?.last_updated as string)).to.equal(120_000);
      for (const key of ["bs:both", "bs:bad", "bs:zero"]) expect((await rawGet(key)).status, key).to.equal(404);
    });

    it("an item with an unknown member fails alone with 400 naming it, and nothing of it is stored (a misspelt if_match never writes unconditionally)", async () => {
      await results("put", { items: [{ key: "bu:guarded", value: "original" }] });
      const res = await results("put", {
        items: [
          { key: "bu:guarded", value: "overwritten", ifMatch: '"no-such-etag"' },
          { key: "bu:ttl", value: "v", ttlMs: 1000 },
          { key: "bu:ok", value: "v" },
        ],
      });
      expectItemError(res[0], "bu:guarded", 400, "BAD_REQUEST");
      expect(res[0]?.error).to.equal('unknown member "ifMatch" in a batch put item; expected key, value, value_encoding, ttl, ttl_ms, if_match, if_none_match');
      expectItemError(res[1], "bu:ttl", 400, "BAD_REQUEST");
      expect(res[2]).to.include({ key: "bu:ok", status: 200, stored: true });
      expect((await rawGet("bu:guarded")).bytes.toString()).to.equal("original");
      expect((await rawGet("bu:ttl")).status).to.equal(404);
    });

    it("1000 items are accepted; 1001 items are 400 BAD_REQUEST and store none of them", async () => {
      const items = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, value: "v" }));
      const ok = await results("put", { items: items(1000, "b1000:") });
      expect(ok).to.have.length(1000);
      expect(ok.every((r) => r.status === 200)).to.equal(true);
      expectEnvelope(await batch("put", { items: items(1001, "b1001:") }), 400, "BAD_REQUEST");
      expect((await rawGet("b1001:0")).status).to.equal(404);
    });
  });

  describe("POST /v1/cache/batch/get", () => {
    it("returns the item envelope fields for found keys and status 404 NOT_FOUND for missing ones, in request order", async () => {
      await results("put", { items: [{ key: "bg:a", value: ALL_BYTES.toString("base64"), value_encoding: "base64" }, { key: "bg:b", value: "bee" }] });
      const res = await results("get", { keys: ["bg:b", "bg:missing", "bg:a"] });
      expect(res.map((r) => r.key)).to.deep.equal(["bg:b", "bg:missing", "bg:a"]);
      const [b, missing, a] = res as [Json, Json, Json];
      expect(b).to.include({ key: "bg:b", status: 200, found: true, value: Buffer.from("bee").toString("base64"), value_encoding: "base64", origin: node.id, node: node.id });
      expect(b.owners).to.deep.equal([node.id]);
      expect(Number.isSafeInteger(b.version) && (b.version as number) > 0).to.equal(true);
      expect(b.last_updated).to.match(ISO);
      expect(Buffer.from(a.value as string, "base64").equals(ALL_BYTES)).to.equal(true);
      expectItemError(missing, "bg:missing", 404, "NOT_FOUND");
      expect(missing).to.include({ found: false });
      expect(missing.owners).to.deep.equal([node.id]);
      expect(missing).to.not.have.any.keys("value", "version");
    });

    it("reports the same version for a key as the single-key JSON read does", async () => {
      await results("put", { items: [{ key: "bg:ver", value: "v" }] });
      const [r] = await results("get", { keys: ["bg:ver"] });
      const single = (await (await fetch(`${node.api}/v1/cache/bg:ver`, { headers: { Accept: "application/json" } })).json()) as Json;
      expect(r?.version).to.equal(single.version);
      expect(r?.last_updated).to.equal(single.last_updated);
    });

    it("an empty, non-string or too long key fails alone with 400 BAD_REQUEST", async () => {
      await results("put", { items: [{ key: "bg:fine", value: "fine" }] });
      const res = await results("get", { keys: ["", 7, null, "k".repeat(4097), "bg:fine"] });
      expect(res).to.have.length(5);
      for (const i of [0, 1, 2, 3]) expect(res[i], `key ${i}`).to.include({ status: 400, code: "BAD_REQUEST", found: false });
      expect(res[4]).to.include({ key: "bg:fine", status: 200, found: true });
    });

    it("1001 keys are 400 BAD_REQUEST", async () => {
      expectEnvelope(await batch("get", { keys: Array.from({ length: 1001 }, (_, i) => `k${i}`) }), 400, "BAD_REQUEST");
    });

    it("an answer of more than 1 MiB of values (streamed in pieces) carries the same envelope fields and every byte of the values, a key named twice answered twice", async () => {
      const big = Buffer.from(Array.from({ length: 3 * MIB + 5 }, (_, i) => (i * 31) & 0xff));
      await results("put", { items: [{ key: "bg:big", value: big.toString("base64"), value_encoding: "base64" }, { key: "bg:small", value: "s" }] });
      const res = await results("get", { keys: ["bg:big", "bg:missing", "bg:small", "bg:big"] });
      expect(res.map((r) => `${String(r.key)}:${String(r.status)}`)).to.deep.equal(["bg:big:200", "bg:missing:404", "bg:small:200", "bg:big:200"]);
      for (const r of [res[0], res[3]] as Json[]) {
        expect(Buffer.from(r.value as string, "base64").equals(big)).to.equal(true);
        expect(r).to.include({ found: true, value_encoding: "base64", origin: node.id, node: node.id });
        expect(r.last_updated).to.match(ISO);
      }
      expect(res[2]).to.include({ value: Buffer.from("s").toString("base64") });
    });
  });

  describe("POST /v1/cache/batch/delete", () => {
    it("reports deleted:true with the removed bytes for present keys and deleted:false with 0 for absent ones; the keys are gone", async () => {
      await results("put", { items: [{ key: "bd:a", value: "aaaa" }, { key: "bd:b", value: "bb" }] });
      const res = await results("delete", { keys: ["bd:a", "bd:absent", "bd:b"] });
      expect(res).to.deep.equal([
        { key: "bd:a", status: 200, deleted: true, bytes: 4, node: node.id, owners: [node.id] },
        { key: "bd:absent", status: 200, deleted: false, bytes: 0, node: node.id, owners: [node.id] },
        { key: "bd:b", status: 200, deleted: true, bytes: 2, node: node.id, owners: [node.id] },
      ]);
      expect((await rawGet("bd:a")).status).to.equal(404);
      const again = await results("get", { keys: ["bd:a", "bd:b"] });
      expect(again.map((r) => r.status)).to.deep.equal([404, 404]);
    });

    it("an empty or non-string key fails alone with 400 BAD_REQUEST", async () => {
      await results("put", { items: [{ key: "bd:c", value: "c" }] });
      const res = await results("delete", { keys: ["", { key: "x" }, "bd:c"] });
      expect(res[0]).to.include({ status: 400, code: "BAD_REQUEST", deleted: false });
      expect(res[1]).to.include({ status: 400, code: "BAD_REQUEST", deleted: false });
      expect(res[2]).to.include({ key: "bd:c", status: 200, deleted: true });
    });

    it("1001 keys are 400 BAD_REQUEST and delete nothing", async () => {
      await results("put", { items: [{ key: "bd:kept", value: "kept" }] });
      const keys = ["bd:kept", ...Array.from({ length: 1000 }, (_, i) => `k${i}`)];
      expectEnvelope(await batch("delete", { keys }), 400, "BAD_REQUEST");
      expect((await rawGet("bd:kept")).bytes.toString()).to.equal("kept");
    });
  });

  describe("request-level errors of every batch route", () => {
    const ops = ["put", "get", "delete"] as const;
    const field = { put: "items", get: "keys", delete: "keys" } as const;

    it("malformed JSON is 400 BAD_REQUEST", async () => {
      for (const op of ops) {
        for (const text of ['{"items": [', "{keys:[]}", "", "nul"]) {
          expectEnvelope(await post(`/v1/cache/batch/${op}`, text), 400, "BAD_REQUEST");
        }
      }
    });

    it("a body that is not an object, or lacks its items/keys array, is 400 BAD_REQUEST", async () => {
      for (const op of ops) {
        for (const body of [[], "items", 42, null, {}, { [field[op]]: "not an array" }, { [field[op]]: { 0: "a" } }, { other: [] }]) {
          expectEnvelope(await batch(op, body), 400, "BAD_REQUEST");
        }
      }
    });

    it("a body member besides items/keys is 400 naming it, and the call does nothing (consistency in the body is not taken for the query's)", async () => {
      await results("put", { items: [{ key: "bm:kept", value: "kept" }] });
      const bodies = {
        put: { items: [{ key: "bm:kept", value: "overwritten" }], consistency: "all" },
        get: { keys: ["bm:kept"], consistency: "all" },
        delete: { keys: ["bm:kept"], Keys: ["bm:other"] },
      };
      for (const op of ops) {
        const r = await batch(op, bodies[op]);
        expectEnvelope(r, 400, "BAD_REQUEST");
        expect(r.body.error, op).to.match(new RegExp(`^unknown member "(consistency|Keys)" in the batch ${op} body; it takes only "${field[op]}"`));
      }
      expect((await rawGet("bm:kept")).bytes.toString()).to.equal("kept");
    });

    it("a body that is not application/json (text/plain, form, octet-stream, none) is 415 UNSUPPORTED_MEDIA_TYPE", async () => {
      for (const op of ops) {
        const body = JSON.stringify({ [field[op]]: [] });
        for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/octet-stream", "text/json", null]) {
          expectEnvelope(await post(`/v1/cache/batch/${op}`, body, type), 415, "UNSUPPORTED_MEDIA_TYPE");
        }
      }
    });

    it("application/json with a charset parameter is accepted and an empty list answers empty results", async () => {
      for (const op of ops) {
        const r = await post(`/v1/cache/batch/${op}`, JSON.stringify({ [field[op]]: [] }), "application/json; charset=utf-8");
        expect(r.status, op).to.equal(200);
        expect(r.body).to.deep.equal({ results: [] });
      }
    });

    it("consistency=one|quorum|all is accepted and consistency=bogus is 400 BAD_REQUEST", async () => {
      for (const level of ["one", "quorum", "all"]) {
        expect((await batch("put", { items: [{ key: `bc:${level}`, value: "v" }] }, `?consistency=${level}`)).status).to.equal(200);
        expect((await batch("get", { keys: [`bc:${level}`] }, `?consistency=${level}`)).status).to.equal(200);
        expect((await batch("delete", { keys: [`bc:${level}`] }, `?consistency=${level}`)).status).to.equal(200);
      }
      for (const op of ops) {
        expectEnvelope(await batch(op, { [field[op]]: [] }, "?consistency=bogus"), 400, "BAD_REQUEST");
      }
    });
  });

  describe("robustness", () => {
    it("after every bad batch the node still serves, is running and logged no error-level record", async () => {
      const res = await results("get", { keys: ["bi:ok-1", "bp:b64"] });
      expect(res.map((r) => r.status)).to.deep.equal([200, 200]);
      expect(node.child.exitCode).to.equal(null);
      expect(node.child.signalCode).to.equal(null);
      const errors = node.logs.filter((r) => r.level === "error");
      expect(errors, JSON.stringify(errors)).to.deep.equal([]);
    });
  });
});
