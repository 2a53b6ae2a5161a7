// The client API of one real node over real HTTP on 127.0.0.1: the item routes (PUT, GET, HEAD,
// DELETE of /v1/cache/{key}), ttl and consistency, keys in the path, body limits, owners, health,
// identity and the OpenAPI document, unknown routes, and that the node survives all of it.
// Batch routes and the key browser have their own files (client-batch, client-key-browser).
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { expect } from "chai";
import { parse as parseYaml } from "yaml";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectEnvelope } from "../helpers/envelope.js";

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

type Json = Record<string, unknown>;

const MIB = 1024 * 1024;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const enc = (key: string) => `/v1/cache/${encodeURIComponent(key)}`;

let node: NodeProcess;

/** One request on a fresh connection, with exact control over method, path, headers and body. */
function request(method: string, path: string, opts: { headers?: Record<string, string | number>; body?: Buffer | string; chunks?: Buffer[] } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: node.apiPort, method, path, headers: opts.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else {
      req.end(opts.body);
    }
  });
}

/**
 * Sends a body of `totalBytes` (in 1 MiB chunks, honouring back-pressure) and stops sending as
 * soon as the answer arrives; with `headersOnly` it sends the headers and waits without any body.
 * Socket errors after the answer (the server closes the connection on 413) are expected.
 */
function upload(method: string, path: string, headers: Record<string, string | number>, totalBytes: number, headersOnly = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request({ host: "127.0.0.1", port: node.apiPort, method, path, headers, agent: false }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) });
        req.destroy();
      });
      res.on("error", reject);
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    if (headersOnly) {
      req.flushHeaders();
      return;
    }
    const chunk = Buffer.alloc(MIB, 0x61);
    let sent = 0;
    const pump = (): void => {
      while (!answered && sent < totalBytes) {
        const n = Math.min(chunk.length, totalBytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Opens a raw connection, writes `text`, and destroys the socket once it is written. */
function writeAndDisconnect(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(node.apiPort, "127.0.0.1", () => {
      socket.write(text, () => {
        socket.destroy();
        resolve();
      });
    });
    socket.on("error", reject);
  });
}

function json(r: Reply): Json {
  return JSON.parse(r.body.toString("utf8")) as Json;
}

/** The error envelope `{error, code, details?}` with this status and code. */
function put(key: string, value: Buffer | string, query = "", headers: Record<string, string | number> = {}): Promise<Reply> {
  return request("PUT", enc(key) + query, { body: value, headers });
}

function getJson(key: string, query = ""): Promise<Reply> {
  return request("GET", enc(key) + query, { headers: { Accept: "application/json" } });
}

function postJson(path: string, body: unknown): Promise<Reply> {
  return request("POST", path, { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
}

/** Keys written before any bad input; they must survive every test of this file unchanged. */
const SEEDS: ReadonlyArray<{ key: string; value: Buffer }> = [
  { key: "seed:text", value: Buffer.from("the seed survives", "utf8") },
  { key: "seed:binary", value: Buffer.concat([ALL_BYTES, Buffer.from(ALL_BYTES).reverse()]) },
  { key: "seed:nul-and-high", value: Buffer.from([0x00, 0xff, 0x00, 0xfe, 0x80, 0x0d, 0x0a]) },
  { key: "seed:empty", value: Buffer.alloc(0) },
  { key: "seed/ключ/🔑", value: Buffer.from("unicode key", "utf8") },
];

describe("client API: item routes, ttl, keys, limits and meta routes of one real node", function () {
  this.timeout(20_000);

  before(async () => {
    node = await startNode({ id: "client-api-1" });
    for (const s of SEEDS) {
      const r = await put(s.key, s.value);
      expect(r.status, r.body.toString()).to.equal(200);
    }
  });

  after(async () => {
    await node?.stop("SIGKILL");
  });

  describe("PUT, GET, HEAD and DELETE of /v1/cache/{key}", () => {
    it("PUT of all 256 byte values answers 200 {key, stored, bytes, node, owners} and GET returns the identical bytes as application/octet-stream", async () => {
      const w = await put("bytes:all", ALL_BYTES, "", { "Content-Type": "application/octet-stream" });
      expect(w.status).to.equal(200);
      expect(w.headers["content-type"]).to.match(/^application\/json/);
      expect(json(w)).to.deep.equal({ key: "bytes:all", stored: true, bytes: 256, node: node.id, owners: [node.id] });

      const r = await request("GET", enc("bytes:all"));
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.equal("application/octet-stream");
      expect(r.body.equals(ALL_BYTES), r.body.toString("hex")).to.equal(true);
      expect(r.headers["x-cache-node"]).to.equal(node.id);
      expect(r.headers["x-cache-owners"]).to.equal(node.id);
      expect(r.headers["x-cache-origin"]).to.equal(node.id);
      expect(r.headers["x-cache-version"]).to.match(/^\d+$/);
    });

    it("an empty PUT body stores an empty value: bytes 0, and GET answers 200 with zero bytes", async () => {
      const w = await put("bytes:empty", Buffer.alloc(0));
      expect(w.status).to.equal(200);
      expect(json(w)).to.include({ key: "bytes:empty", stored: true, bytes: 0 });
      const r = await request("GET", enc("bytes:empty"));
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.equal("application/octet-stream");
      expect(r.body.length).to.equal(0);
      expect(r.headers["content-length"]).to.equal("0");
    });

    it("a text body is stored as opaque bytes whatever the content type (text, JSON, form) and read back unchanged", async () => {
      const cases: Array<[string, string]> = [
        ["text/plain; charset=utf-8", "héllo wörld ✓ 🚀\r\n"],
        ["application/json", '{"not":"parsed", "n": 1}'],
        ["application/x-www-form-urlencoded", "a=1&b=%20two"],
        ["image/png", "\u0000\u0001 definitely not a png"],
      ];
      for (const [i, [type, text]] of cases.entries()) {
        const key = `text:${i}`;
        const w = await put(key, text, "", { "Content-Type": type });
        expect(w.status, type).to.equal(200);
        expect(json(w).bytes, type).to.equal(Buffer.byteLength(text));
        const r = await request("GET", enc(key));
        expect(r.body.toString("utf8"), type).to.equal(text);
        expect(r.headers["content-type"], type).to.equal("application/octet-stream");
      }
    });

    it("a body sent chunked in several pieces without Content-Length is stored intact", async () => {
      const pieces = [ALL_BYTES.subarray(0, 100), Buffer.alloc(70_000, 0xab), ALL_BYTES.subarray(100)];
      const w = await request("PUT", enc("bytes:chunked"), { chunks: pieces });
      expect(w.status).to.equal(200);
      expect(json(w).bytes).to.equal(256 + 70_000);
      const r = await request("GET", enc("bytes:chunked"));
      expect(r.body.equals(Buffer.concat(pieces))).to.equal(true);
    });

    it("GET with Accept: application/json returns the item envelope, without ttl_ms and expires_at when no ttl was set", async () => {
      await put("env:plain", ALL_BYTES);
      const r = await getJson("env:plain");
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.match(/^application\/json/);
      const env = json(r);
      expect(Object.keys(env).sort()).to.deep.equal(["key", "last_updated", "node", "origin", "owners", "value", "value_encoding", "version"]);
      expect(env).to.include({ key: "env:plain", value: ALL_BYTES.toString("base64"), value_encoding: "base64", origin: node.id, node: node.id });
      expect(env.owners).to.deep.equal([node.id]);
      expect(Number.isSafeInteger(env.version) && (env.version as number) > 0, String(env.version)).to.equal(true);
      expect(env.last_updated).to.match(ISO);
    });

    it("GET with Accept: application/json carries ttl_ms and expires_at for an item written with a ttl", async () => {
      await put("env:ttl", "v", "?ttl=1h");
      const env = json(await getJson("env:ttl"));
      expect(env.ttl_ms).to.be.a("number").within(3_500_000, 3_600_000);
      expect(env.expires_at).to.match(ISO);
      const expiresMs = Date.parse(env.expires_at as string) - Date.parse(env.last_updated as string);
      expect(expiresMs).to.be.within(3_599_000, 3_601_000);
    });

    it("GET prefers raw bytes when application/octet-stream is listed before application/json", async () => {
      await put("env:accept", "raw please");
      const r = await request("GET", enc("env:accept"), { headers: { Accept: "application/octet-stream, application/json" } });
      expect(r.headers["content-type"]).to.equal("application/octet-stream");
      expect(r.body.toString()).to.equal("raw please");
    });

    it("HEAD of an item with a ttl answers 200 with no body and all seven X-Cache-* headers", async () => {
      await put("head:ttl", "12345", "?ttl=60s");
      const env = json(await getJson("head:ttl"));
      const r = await request("HEAD", enc("head:ttl"));
      expect(r.status).to.equal(200);
      expect(r.body.length).to.equal(0);
      expect(r.headers["content-length"]).to.equal("5");
      expect(r.headers["x-cache-version"]).to.equal(String(env.version));
      expect(r.headers["x-cache-origin"]).to.equal(node.id);
      expect(r.headers["x-cache-last-updated"]).to.equal(env.last_updated);
      expect(Number(r.headers["x-cache-ttl-ms"])).to.be.within(50_000, 60_000);
      expect(r.headers["x-cache-ttl-ms"]).to.match(/^\d+$/);
      expect(r.headers["x-cache-expires-at"]).to.equal(env.expires_at);
      expect(r.headers["x-cache-owners"]).to.equal(node.id);
      expect(r.headers["x-cache-node"]).to.equal(node.id);
    });

    it("HEAD of an item without a ttl omits X-Cache-Ttl-Ms and X-Cache-Expires-At", async () => {
      await put("head:plain", "x");
      const r = await request("HEAD", enc("head:plain"));
      expect(r.status).to.equal(200);
      expect(r.headers).to.include.keys("x-cache-version", "x-cache-origin", "x-cache-last-updated", "x-cache-owners", "x-cache-node");
      expect(r.headers).to.not.have.any.keys("x-cache-ttl-ms", "x-cache-expires-at");
    });

    it("HEAD of an absent key answers 404 with no body", async () => {
      const r = await request("HEAD", enc("head:absent"));
      expect(r.status).to.equal(404);
      expect(r.body.length).to.equal(0);
      expect(r.headers["x-cache-node"]).to.equal(node.id);
      expect(r.headers["x-cache-owners"]).to.equal(node.id);
    });

    it("GET of an absent key answers 404 NOT_FOUND envelope, for raw and JSON reads alike", async () => {
      expectEnvelope(await request("GET", enc("get:absent")), 404, "NOT_FOUND");
      expectEnvelope(await getJson("get:absent"), 404, "NOT_FOUND");
    });

    it("overwriting a key replaces its bytes and increases its version", async () => {
      await put("ver:k", "first");
      const v1 = json(await getJson("ver:k")).version as number;
      await put("ver:k", "second");
      const second = json(await getJson("ver:k"));
      expect(Buffer.from(second.value as string, "base64").toString()).to.equal("second");
      expect(second.version as number).to.be.greaterThan(v1);
    });

    it("DELETE of a present key answers 200 {key, deleted:true, bytes, node, owners}; GET afterwards is 404 NOT_FOUND", async () => {
      await put("del:k", "abcdef");
      const d = await request("DELETE", enc("del:k"));
      expect(d.status).to.equal(200);
      expect(json(d)).to.deep.equal({ key: "del:k", deleted: true, bytes: 6, node: node.id, owners: [node.id] });
      expectEnvelope(await request("GET", enc("del:k")), 404, "NOT_FOUND");
      expect((await request("HEAD", enc("del:k"))).status).to.equal(404);
    });

    it("DELETE of an absent key answers 200 with deleted:false and bytes:0", async () => {
      const d = await request("DELETE", enc("del:never-written"));
      expect(d.status).to.equal(200);
      expect(json(d)).to.deep.equal({ key: "del:never-written", deleted: false, bytes: 0, node: node.id, owners: [node.id] });
      const again = await request("DELETE", enc("del:k"));
      expect(json(again)).to.include({ deleted: false, bytes: 0 });
    });

    it("a key written again after a delete is readable with a version above the one before the delete", async () => {
      await put("del:revive", "old");
      const before = json(await getJson("del:revive")).version as number;
      await request("DELETE", enc("del:revive"));
      await put("del:revive", "new");
      const after = json(await getJson("del:revive"));
      expect(Buffer.from(after.value as string, "base64").toString()).to.equal("new");
      expect(after.version as number).to.be.greaterThan(before);
    });
  });

  describe("ttl and consistency query parameters", () => {
    it("an item written with ?ttl=1s is gone from GET, HEAD, batch get and the key browser after 1.5 s", async () => {
      const w = await put("ttl:short", "soon gone", "?ttl=1s");
      expect(w.status).to.equal(200);
      expect((await request("GET", enc("ttl:short"))).status).to.equal(200);
      const ttl = Number((await request("HEAD", enc("ttl:short"))).headers["x-cache-ttl-ms"]);
      expect(ttl).to.be.within(1, 1000);

      await new Promise((resolve) => setTimeout(resolve, 1_500));

      expectEnvelope(await request("GET", enc("ttl:short")), 404, "NOT_FOUND");
      expect((await request("HEAD", enc("ttl:short"))).status).to.equal(404);
      const batch = json(await postJson("/v1/cache/batch/get", { keys: ["ttl:short"] }));
      expect((batch.results as Json[])[0]).to.include({ key: "ttl:short", status: 404, found: false, code: "NOT_FOUND" });
      const page = json(await request("GET", "/v1/cache/keys?q=ttl%3Ashort"));
      expect(page.keys).to.deep.equal([]);
      expect(page.total_matched).to.equal(0);
    });

    it("ttl accepts decimals and Go-style compounds: 250ms, 1.5s, 1m30s, 2h", async () => {
      const cases: Array<[string, number]> = [["250ms", 250], ["1.5s", 1_500], ["1m30s", 90_000], ["2h", 7_200_000]];
      for (const [ttl, ms] of cases) {
        const key = `ttl:ok:${ttl}`;
        expect((await put(key, "v", `?ttl=${ttl}`)).status, ttl).to.equal(200);
        const env = json(await getJson(key));
        const span = Date.parse(env.expires_at as string) - Date.parse(env.last_updated as string);
        expect(span, ttl).to.equal(ms);
      }
    });

    for (const bad of ["abc", "0s", "-1s", "5", "1d", "", "1s ", "1.s"]) {
      it(`ttl=${JSON.stringify(bad)} is 400 BAD_REQUEST and stores nothing`, async () => {
        const key = `ttl:bad:${bad}`;
        const r = await put(key, "v", `?ttl=${encodeURIComponent(bad)}`);
        expectEnvelope(r, 400, "BAD_REQUEST");
        expect((await request("GET", enc(key))).status).to.equal(404);
      });
    }

    it("consistency=one, quorum and all are accepted on PUT, GET, HEAD and DELETE", async () => {
      for (const level of ["one", "quorum", "all"]) {
        const key = `cons:${level}`;
        const q = `?consistency=${level}`;
        expect((await put(key, level, q)).status, `PUT ${level}`).to.equal(200);
        const g = await request("GET", enc(key) + q);
        expect(g.status, `GET ${level}`).to.equal(200);
        expect(g.body.toString()).to.equal(level);
        expect((await request("HEAD", enc(key) + q)).status, `HEAD ${level}`).to.equal(200);
        const d = await request("DELETE", enc(key) + q);
        expect(json(d), `DELETE ${level}`).to.include({ deleted: true });
      }
    });

    it("consistency=bogus is 400 BAD_REQUEST on PUT, GET and DELETE, and 400 without a body on HEAD", async () => {
      await put("cons:target", "keep me");
      expectEnvelope(await put("cons:target", "changed", "?consistency=bogus"), 400, "BAD_REQUEST");
      expectEnvelope(await request("GET", enc("cons:target") + "?consistency=bogus"), 400, "BAD_REQUEST");
      expectEnvelope(await request("DELETE", enc("cons:target") + "?consistency=bogus"), 400, "BAD_REQUEST");
      const h = await request("HEAD", enc("cons:target") + "?consistency=bogus");
      expect(h.status).to.equal(400);
      expect(h.body.length).to.equal(0);
      expect((await request("GET", enc("cons:target"))).body.toString()).to.equal("keep me");
    });
  });

  describe("keys in the path", () => {
    it("unicode and percent-encoded keys round-trip: a/b as a%2Fb, ключ, emoji, spaces, %, + and ?", async () => {
      const keys = ["a/b", "ключ", "🔑🗝️", "日本語/キー", "with space", "100%", "a+b", "what?", "#hash"];
      for (const key of keys) {
        const w = await put(key, `value of ${key}`);
        expect(w.status, key).to.equal(200);
        expect(json(w).key, key).to.equal(key);
        const r = await request("GET", enc(key));
        expect(r.status, key).to.equal(200);
        expect(r.body.toString("utf8"), key).to.equal(`value of ${key}`);
        expect(json(await getJson(key)).key, key).to.equal(key);
        const o = json(await request("GET", `/v1/owners/${encodeURIComponent(key)}`));
        expect(o.key, key).to.equal(key);
      }
      expect((await request("GET", "/v1/cache/a%2fb")).body.toString(), "lower-case %2f").to.equal("value of a/b");
    });

    it("a key of exactly 4096 UTF-8 bytes is accepted, in ASCII and in multi-byte characters", async () => {
      for (const key of ["k".repeat(4096), "ж".repeat(2048), "🔑".repeat(1024), "€".repeat(1365) + "x"]) {
        expect(Buffer.byteLength(key)).to.equal(4096);
        const w = await put(key, "max key");
        expect(w.status, w.body.toString().slice(0, 200)).to.equal(200);
        expect(json(w).key).to.equal(key);
        expect((await request("GET", enc(key))).body.toString()).to.equal("max key");
        expect(json(await request("DELETE", enc(key))).deleted).to.equal(true);
      }
    });

    it("a key of 4097 UTF-8 bytes is 400 BAD_REQUEST on PUT, GET, HEAD, DELETE and owners, and stores nothing", async () => {
      for (const key of ["k".repeat(4097), "ж".repeat(2048) + "x"]) {
        expect(Buffer.byteLength(key)).to.equal(4097);
        expectEnvelope(await put(key, "too long"), 400, "BAD_REQUEST");
        expectEnvelope(await request("GET", enc(key)), 400, "BAD_REQUEST");
        expect((await request("HEAD", enc(key))).status).to.equal(400);
        expectEnvelope(await request("DELETE", enc(key)), 400, "BAD_REQUEST");
        expectEnvelope(await request("GET", `/v1/owners/${encodeURIComponent(key)}`), 400, "BAD_REQUEST");
      }
      const page = json(await request("GET", "/v1/cache/keys?q=kkkkkkkkkk&max=10"));
      expect((page.keys as string[]).some((k) => k.length > 4096)).to.equal(false);
    });

    it("a 10 KB key is 400 BAD_REQUEST, in ASCII and percent-encoded multi-byte form", async () => {
      expectEnvelope(await put("x".repeat(10 * 1024), "v"), 400, "BAD_REQUEST");
      expectEnvelope(await put("я".repeat(5 * 1024), "v"), 400, "BAD_REQUEST");
    });

    it("a key far above the limit (100 KB, a URL beyond the listener's 64 KiB header cap) still gets the 400 BAD_REQUEST envelope", async () => {
      expectEnvelope(await request("GET", `/v1/cache/${"y".repeat(100 * 1024)}`), 400, "BAD_REQUEST");
    });

    it("malformed percent-encoding (%E0%A4%A, a lone surrogate, a bare %) is 400 BAD_REQUEST on every item route and owners", async () => {
      for (const segment of ["%E0%A4%A", "%ED%A0%80", "abc%", "%zz"]) {
        expectEnvelope(await request("PUT", `/v1/cache/${segment}`, { body: "v" }), 400, "BAD_REQUEST");
        expectEnvelope(await request("GET", `/v1/cache/${segment}`), 400, "BAD_REQUEST");
        expectEnvelope(await request("DELETE", `/v1/cache/${segment}`), 400, "BAD_REQUEST");
        const h = await request("HEAD", `/v1/cache/${segment}`);
        expect(h.status, segment).to.equal(400);
        expect(h.body.length).to.equal(0);
        expectEnvelope(await request("GET", `/v1/owners/${segment}`), 400, "BAD_REQUEST");
      }
    });

    it("an empty key (PUT /v1/cache/) is 400 BAD_REQUEST, and so are GET and DELETE of it", async () => {
      expectEnvelope(await request("PUT", "/v1/cache/", { body: "v" }), 400, "BAD_REQUEST");
      expectEnvelope(await request("PUT", "/v1/cache/?ttl=1m", { body: "v" }), 400, "BAD_REQUEST");
      expectEnvelope(await request("GET", "/v1/cache/"), 400, "BAD_REQUEST");
      expectEnvelope(await request("DELETE", "/v1/cache/"), 400, "BAD_REQUEST");
    });

    it("GET /v1/cache/%6Beys reads the item whose key is keys, while GET /v1/cache/keys is the key browser", async () => {
      const w = await request("PUT", "/v1/cache/%6Beys", { body: "the keys item" });
      expect(json(w).key).to.equal("keys");
      const item = await request("GET", "/v1/cache/%6Beys");
      expect(item.status).to.equal(200);
      expect(item.headers["content-type"]).to.equal("application/octet-stream");
      expect(item.body.toString()).to.equal("the keys item");
      expect(json(await request("GET", "/v1/cache/%6beys", { headers: { Accept: "application/json" } })).key).to.equal("keys");

      const browser = await request("GET", "/v1/cache/keys?q=keys");
      expect(browser.status).to.equal(200);
      const page = json(browser);
      expect(page).to.have.all.keys("keys", "next_cursor", "total_matched", "truncated", "node", "partial_nodes");
      expect(page.keys).to.deep.equal(["keys"]);
    });
  });

  describe("body limits", () => {
    it("a PUT declaring a Content-Length above 8 MiB is refused with 413 PAYLOAD_TOO_LARGE before any body byte is sent", async () => {
      const r = await upload("PUT", enc("limit:declared"), { "Content-Length": 8 * MIB + 1 }, 8 * MIB + 1, true);
      expectEnvelope(r, 413, "PAYLOAD_TOO_LARGE");
      expect((await request("GET", enc("limit:declared"))).status).to.equal(404);
    });

    it("a chunked PUT body without Content-Length growing past 8 MiB is refused with 413 PAYLOAD_TOO_LARGE and stores nothing", async () => {
      const r = await upload("PUT", enc("limit:chunked"), { "Transfer-Encoding": "chunked" }, 9 * MIB);
      expectEnvelope(r, 413, "PAYLOAD_TOO_LARGE");
      expect((await request("GET", enc("limit:chunked"))).status).to.equal(404);
    });

    it("a value of exactly 8 MiB is accepted and read back whole", async () => {
      const value = Buffer.alloc(8 * MIB, 0x5a);
      const w = await put("limit:exact", value);
      expect(w.status).to.equal(200);
      expect(json(w).bytes).to.equal(8 * MIB);
      const r = await request("GET", enc("limit:exact"));
      expect(r.body.equals(value)).to.equal(true);
      await request("DELETE", enc("limit:exact"));
    });

    it("a batch body declaring a Content-Length above 16 MiB is refused with 413 PAYLOAD_TOO_LARGE", async () => {
      const r = await upload("POST", "/v1/cache/batch/put", { "Content-Type": "application/json", "Content-Length": 16 * MIB + 1 }, 16 * MIB + 1, true);
      expectEnvelope(r, 413, "PAYLOAD_TOO_LARGE");
    });

    it("a chunked batch body growing past 16 MiB is refused with 413 PAYLOAD_TOO_LARGE", async () => {
      const r = await upload("POST", "/v1/cache/batch/get", { "Content-Type": "application/json", "Transfer-Encoding": "chunked" }, 17 * MIB);
      expectEnvelope(r, 413, "PAYLOAD_TOO_LARGE");
    });
  });

  describe("owners, health, identity and the OpenAPI document", () => {
    it("GET /v1/owners/{key} answers {key, owners:[node], node} for plain and percent-encoded keys", async () => {
      for (const key of ["plain", "a/b", "ключ 🔑"]) {
        const r = await request("GET", `/v1/owners/${encodeURIComponent(key)}`);
        expect(r.status).to.equal(200);
        expect(json(r)).to.deep.equal({ key, owners: [node.id], node: node.id });
      }
    });

    it("GET /healthz and GET /health answer 200 {status:ok, node}", async () => {
      for (const path of ["/healthz", "/health"]) {
        const r = await request("GET", path);
        expect(r.status, path).to.equal(200);
        expect(json(r), path).to.deep.equal({ status: "ok", node: node.id });
      }
    });

    it("GET /v1/openapi.yaml serves the client document as application/yaml, parsing as OpenAPI 3.1 with every client path", async () => {
      const r = await request("GET", "/v1/openapi.yaml");
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.match(/^application\/yaml/);
      const doc = parseYaml(r.body.toString("utf8")) as { openapi: string; paths: Record<string, unknown> };
      expect(doc.openapi).to.match(/^3\.1\.\d+$/);
      expect(doc.paths).to.include.keys("/v1/cache/{key}", "/v1/cache/keys", "/v1/cache/batch/put", "/v1/owners/{key}", "/v1/me/can");
      const onDisk = readFileSync(new URL("../../openapi/client.yaml", import.meta.url), "utf8");
      expect(r.body.toString("utf8")).to.equal(onDisk);
    });

    it("GET /v1/me answers the anonymous identity with every scope and capability", async () => {
      const r = await request("GET", "/v1/me");
      expect(r.status).to.equal(200);
      expect(json(r)).to.deep.equal({ id: "anonymous", scopes: ["read", "write", "admin"], capabilities: ["cache.read", "cache.write", "cache.admin"] });
    });

    it("GET /v1/me/can answers {capability, allowed:true} for cache.read, cache.write and cache.admin", async () => {
      for (const capability of ["cache.read", "cache.write", "cache.admin"]) {
        const r = await request("GET", `/v1/me/can?capability=${capability}`);
        expect(r.status).to.equal(200);
        expect(json(r)).to.deep.equal({ capability, allowed: true });
      }
    });

    it("GET /v1/me/can with an unknown, empty or missing capability is 400 BAD_REQUEST", async () => {
      for (const query of ["?capability=cache.destroy", "?capability=write", "?capability=", ""]) {
        expectEnvelope(await request("GET", `/v1/me/can${query}`), 400, "BAD_REQUEST");
      }
    });
  });

  describe("unknown routes", () => {
    it("unknown paths and methods answer the 404 NOT_FOUND envelope", async () => {
      const cases: Array<[string, string]> = [
        ["GET", "/nope"],
        ["GET", "/v1"],
        ["GET", "/v2/cache/x"],
        ["POST", "/v1/cache/x"],
        ["PATCH", "/v1/cache/x"],
        ["GET", "/v1/cache/batch/put"],
        ["DELETE", "/v1/owners/x"],
        ["GET", "/v1/cache/a/b"],
      ];
      for (const [method, path] of cases) {
        expectEnvelope(await request(method, path), 404, "NOT_FOUND");
      }
    });

    it("HEAD of an unknown path answers 404 with no body", async () => {
      const r = await request("HEAD", "/nope");
      expect(r.status).to.equal(404);
      expect(r.body.length).to.equal(0);
    });
  });

  describe("abandoned requests", () => {
    it("a PUT whose client disconnects mid-body stores nothing, and the node keeps serving", async () => {
      await writeAndDisconnect("PUT /v1/cache/abandoned:put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n0123456789");
      await writeAndDisconnect("PUT /v1/cache/abandoned:chunked HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n");
      expectEnvelope(await request("GET", enc("abandoned:put")), 404, "NOT_FOUND");
      expectEnvelope(await request("GET", enc("abandoned:chunked")), 404, "NOT_FOUND");
    });

    it("a batch put whose client disconnects mid-body stores nothing, and the node keeps serving", async () => {
      const body = JSON.stringify({ items: [{ key: "abandoned:batch", value: "v" }] });
      await writeAndDisconnect(`POST /v1/cache/batch/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 10}\r\n\r\n${body}`);
      expectEnvelope(await request("GET", enc("abandoned:batch")), 404, "NOT_FOUND");
    });
  });

  describe("robustness after every bad input above", () => {
    it("the node still serves and every key written at the start keeps its exact bytes", async () => {
      for (const s of SEEDS) {
        const r = await request("GET", enc(s.key));
        expect(r.status, s.key).to.equal(200);
        expect(r.body.equals(s.value), `${s.key}: ${r.body.toString("hex")}`).to.equal(true);
      }
      const batch = json(await postJson("/v1/cache/batch/get", { keys: SEEDS.map((s) => s.key) }));
      const values = (batch.results as Json[]).map((x) => Buffer.from(x.value as string, "base64"));
      expect(values.every((v, i) => v.equals((SEEDS[i] as { value: Buffer }).value))).to.equal(true);
    });

    it("the process is still running and logged no error-level record", () => {
      expect(node.child.exitCode, "exit code").to.equal(null);
      expect(node.child.signalCode, "signal").to.equal(null);
      const errors = node.logs.filter((r) => r.level === "error");
      expect(errors, JSON.stringify(errors)).to.deep.equal([]);
    });
  });
});
