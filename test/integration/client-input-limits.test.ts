// Input limits of the client listener on one real node (SERVICE_MAX_VALUE_BYTES=4KiB,
// SERVICE_MAX_BODY_BYTES=16KiB), over raw TCP so that framing and connection reuse are visible:
// - batch put items: ttl_ms past MAX_DURATION_MS is 400, a base64 value whose decoded size is
//   past the value limit is 413 (sized before decoding), malformed base64 is 400, all in place;
// - bodies: a declared Content-Length past twice the limit is 413 with `Connection: close` and
//   the connection ends without the body being sent; a body over the limit but within twice it
//   is 413 and the same keep-alive connection serves the next request; a JSON body that is not
//   valid UTF-8 is 400;
// - what no route sees: CONNECT is 400 and `Expect: foo` is 417, both with the JSON envelope.
// The 60 s header timeout (HTTP_HEADERS_TIMEOUT_MS) is not configurable and is not tested here;
// the same envelope on the dist listener's 5 s header timeout is in peer-listener-timeouts.
import http from "node:http";
import { expect } from "chai";
import { MAX_DURATION_MS } from "../../src/core/duration.js";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { RawConnection } from "../helpers/raw-http.js";
import { expectEnvelope } from "../helpers/envelope.js";

const VALUE_LIMIT = 4 * 1024;
const BODY_LIMIT = 16 * 1024;

type Json = Record<string, unknown>;

/** A JSON error envelope answer: status, content type, exactly {error, code[, details]}. */
/** A request head (HTTP/1.1, Host set) with these extra header lines. */
function head(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** A complete request with a Content-Length body. */
function withBody(method: string, path: string, body: Buffer | string, headers: Record<string, string | number> = {}): Buffer {
  const b = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return Buffer.concat([Buffer.from(head(method, path, { ...headers, "Content-Length": b.length }), "latin1"), b]);
}

/** A complete request with a chunked body (in 1 KiB chunks). */
function chunked(method: string, path: string, body: Buffer, headers: Record<string, string | number> = {}): Buffer {
  const parts: Buffer[] = [Buffer.from(head(method, path, { ...headers, "Transfer-Encoding": "chunked" }), "latin1")];
  for (let at = 0; at < body.length; at += 1024) {
    const c = body.subarray(at, at + 1024);
    parts.push(Buffer.from(`${c.length.toString(16)}\r\n`, "latin1"), c, Buffer.from("\r\n", "latin1"));
  }
  parts.push(Buffer.from("0\r\n\r\n", "latin1"));
  return Buffer.concat(parts);
}

/** A batch put body of about `bytes` bytes (one item whose value fills it). */
function batchBodyOf(bytes: number, key: string): string {
  const empty = JSON.stringify({ items: [{ key, value: "" }] });
  return JSON.stringify({ items: [{ key, value: "v".repeat(bytes - empty.length) }] });
}

describe("client listener input limits on a real node (4 KiB values, 16 KiB JSON bodies)", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  const open: RawConnection[] = [];
  const connect = async (port = node.apiPort) => {
    const c = await RawConnection.open(port);
    open.push(c);
    return c;
  };

  before(async () => {
    node = await startNode({ id: "limits-1", env: { SERVICE_MAX_VALUE_BYTES: "4KiB", SERVICE_MAX_BODY_BYTES: "16KiB" } });
  });
  afterEach(() => {
    for (const c of open.splice(0)) c.destroy();
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  /** One batch put on a fresh connection; returns the per-item results of a 200 answer. */
  async function batchPut(items: unknown[]): Promise<Json[]> {
    const r = await call(`${node.api}/v1/cache/batch/put`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ items }) });
    expect(r.status, r.body.toString()).to.equal(200);
    return r.json<{ results: Json[] }>().results;
  }
  const getValue = (key: string) => call(`${node.api}/v1/cache/${encodeURIComponent(key)}`);

  describe("batch put items", () => {
    it(`ttl_ms of MAX_DURATION_MS + 1 (${MAX_DURATION_MS + 1}) is refused in place with status 400 BAD_REQUEST and nothing is stored; the item beside it is stored`, async () => {
      const res = await batchPut([
        { key: "ttl:over", value: "x", ttl_ms: MAX_DURATION_MS + 1 },
        { key: "ttl:way-over", value: "x", ttl_ms: 1e300 },
        { key: "ttl:ok", value: "fine", ttl_ms: 60_000 },
      ]);
      expect(res).to.have.length(3);
      expect(res[0]).to.include({ key: "ttl:over", status: 400, code: "BAD_REQUEST", stored: false });
      expect(res[0]?.error).to.equal(`ttl_ms must be a positive integer of at most ${MAX_DURATION_MS}; got ${MAX_DURATION_MS + 1}`);
      expect(res[1]).to.include({ key: "ttl:way-over", status: 400, code: "BAD_REQUEST", stored: false });
      expect(res[1]?.error).to.match(/^ttl_ms must be a positive integer of at most 9223372036854; got /);
      expect(res[2]).to.include({ key: "ttl:ok", status: 200, stored: true });
      expect((await getValue("ttl:over")).status).to.equal(404);
      expect((await getValue("ttl:way-over")).status).to.equal(404);
      expect((await getValue("ttl:ok")).body.toString()).to.equal("fine");
    });

    it("ttl_ms of exactly MAX_DURATION_MS is accepted and the item is served with an expiry ~292 years ahead", async () => {
      const res = await batchPut([{ key: "ttl:max", value: "long-lived", ttl_ms: MAX_DURATION_MS }]);
      expect(res[0]).to.include({ key: "ttl:max", status: 200, stored: true });
      const r = await call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ keys: ["ttl:max"] }) });
      const got = r.json<{ results: Json[] }>().results[0] as Json;
      expect(got).to.include({ key: "ttl:max", status: 200, found: true });
      expect(got.ttl_ms).to.be.a("number").within(MAX_DURATION_MS - 60_000, MAX_DURATION_MS);
      expect(new Date(String(got.expires_at)).getUTCFullYear()).to.be.within(2250, 2400);
    });

    it("a base64 value decoding to exactly 4096 bytes (padded or not) is stored byte for byte", async () => {
      const bytes = Buffer.from(Array.from({ length: VALUE_LIMIT }, (_, i) => (i * 31) & 0xff));
      const padded = bytes.toString("base64");
      expect(padded.endsWith("=")).to.equal(true);
      const res = await batchPut([
        { key: "b64:limit-padded", value: padded, value_encoding: "base64" },
        { key: "b64:limit-unpadded", value: padded.replace(/=+$/, ""), value_encoding: "base64" },
      ]);
      expect(res.map((r) => [r.status, r.bytes])).to.deep.equal([[200, VALUE_LIMIT], [200, VALUE_LIMIT]]);
      expect((await getValue("b64:limit-padded")).body.equals(bytes)).to.equal(true);
      expect((await getValue("b64:limit-unpadded")).body.equals(bytes)).to.equal(true);
    });

    it("a base64 value decoding to 4097 bytes (padded or not) is refused in place with status 413 PAYLOAD_TOO_LARGE and nothing is stored", async () => {
      const padded = Buffer.alloc(VALUE_LIMIT + 1, 0x5a).toString("base64");
      const res = await batchPut([
        { key: "b64:over-padded", value: padded, value_encoding: "base64" },
        { key: "b64:over-unpadded", value: padded.replace(/=+$/, ""), value_encoding: "base64" },
        { key: "b64:fits", value: Buffer.from("small").toString("base64"), value_encoding: "base64" },
      ]);
      for (const [i, key] of ["b64:over-padded", "b64:over-unpadded"].entries()) {
        expect(res[i]).to.include({ key, status: 413, code: "PAYLOAD_TOO_LARGE", stored: false });
        expect(res[i]?.error).to.equal(`value is larger than ${VALUE_LIMIT} bytes`);
        expect((await getValue(key)).status, key).to.equal(404);
      }
      expect(res[2]).to.include({ key: "b64:fits", status: 200, stored: true, bytes: 5 });
    });

    it("a 4096-character literal value of 2-byte UTF-8 characters (8192 bytes) is 413 too: the limit is in bytes", async () => {
      const res = await batchPut([{ key: "lit:wide", value: "é".repeat(VALUE_LIMIT / 2 + 1) }]);
      expect(res[0]).to.include({ key: "lit:wide", status: 413, code: "PAYLOAD_TOO_LARGE", stored: false });
    });

    const malformed: Array<[string, string]> = [
      ["a character outside the alphabet", "QUJ*"],
      ["a length of 1 mod 4", "QUJDR"],
      ["padding in the middle", "QQ==QQ=="],
      ["three padding characters", "QQ==="],
      ["the URL-safe alphabet", "-_-_"],
      ["embedded whitespace", "QU JD"],
    ];
    it(`malformed base64 (${malformed.map(([w]) => w).join(", ")}) is refused in place with status 400 "value is not valid base64"`, async () => {
      const res = await batchPut(malformed.map(([, value], i) => ({ key: `b64:bad-${i}`, value, value_encoding: "base64" })));
      expect(res).to.have.length(malformed.length);
      for (const [i, [what]] of malformed.entries()) {
        expect(res[i], what).to.include({ key: `b64:bad-${i}`, status: 400, code: "BAD_REQUEST", stored: false, error: "value is not valid base64" });
        expect((await getValue(`b64:bad-${i}`)).status, what).to.equal(404);
      }
    });
  });

  describe("request bodies", () => {
    it(`PUT with a declared Content-Length of twice the limit + 1 (${2 * VALUE_LIMIT + 1}) and no body sent: 413 with Connection: close, then the server closes the connection`, async () => {
      const c = await connect();
      await c.write(head("PUT", "/v1/cache/body:declared-huge", { "Content-Length": 2 * VALUE_LIMIT + 1 }));
      const r = await c.read();
      const body = expectEnvelope(r, 413, "PAYLOAD_TOO_LARGE", `value is larger than ${VALUE_LIMIT} bytes`);
      expect(body.details).to.deep.equal({ limit_bytes: VALUE_LIMIT });
      expect(r.headers.connection).to.equal("close");
      await c.waitClosed(5_000);
      expect(c.pending.length, "nothing after the answer").to.equal(0);
      expect((await getValue("body:declared-huge")).status).to.equal(404);
    });

    it(`a batch put with a declared Content-Length of twice the limit + 1 (${2 * BODY_LIMIT + 1}) and no body sent: 413 with Connection: close, then the server closes the connection`, async () => {
      const c = await connect();
      await c.write(head("POST", "/v1/cache/batch/put", { "Content-Type": "application/json", "Content-Length": 2 * BODY_LIMIT + 1 }));
      const r = await c.read();
      const body = expectEnvelope(r, 413, "PAYLOAD_TOO_LARGE", `request body is larger than ${BODY_LIMIT} bytes`);
      expect(body.details).to.deep.equal({ limit_bytes: BODY_LIMIT });
      expect(r.headers.connection).to.equal("close");
      await c.waitClosed(5_000);
    });

    const withinTwice: Array<[string, () => Buffer]> = [
      [`PUT, Content-Length limit + 1 (${VALUE_LIMIT + 1})`, () => withBody("PUT", "/v1/cache/body:over-1", Buffer.alloc(VALUE_LIMIT + 1, 0x61))],
      [`PUT, Content-Length exactly twice the limit (${2 * VALUE_LIMIT})`, () => withBody("PUT", "/v1/cache/body:over-2", Buffer.alloc(2 * VALUE_LIMIT, 0x62))],
      [`PUT, chunked, ${VALUE_LIMIT + 1024} bytes`, () => chunked("PUT", "/v1/cache/body:over-3", Buffer.alloc(VALUE_LIMIT + 1024, 0x63))],
      [`batch put, Content-Length ${BODY_LIMIT + 100}`, () => withBody("POST", "/v1/cache/batch/put", batchBodyOf(BODY_LIMIT + 100, "body:over-4"), { "Content-Type": "application/json" })],
      [`batch put, Content-Length exactly twice the limit (${2 * BODY_LIMIT})`, () => withBody("POST", "/v1/cache/batch/put", batchBodyOf(2 * BODY_LIMIT, "body:over-5"), { "Content-Type": "application/json" })],
      [`batch put, chunked, ${BODY_LIMIT + 2048} bytes`, () => chunked("POST", "/v1/cache/batch/put", Buffer.from(batchBodyOf(BODY_LIMIT + 2048, "body:over-6")), { "Content-Type": "application/json" })],
    ];
    for (const [what, request] of withinTwice) {
      it(`${what}: 413 without Connection: close, and the same connection then serves a GET (404) and a PUT that fits (200)`, async () => {
        const c = await connect();
        const sent = request();
        await c.write(sent);
        const first = await c.read();
        expectEnvelope(first, 413, "PAYLOAD_TOO_LARGE", /is larger than (4096|16384) bytes$/);
        expect(first.headers.connection ?? "keep-alive", "the 413 keeps the connection").to.not.equal("close");
        await c.write(head("GET", "/v1/cache/body:never-stored"));
        const second = await c.read().catch((err: Error) => err);
        expect(second instanceof Error ? `${second.message}` : second.status, "a GET on the same connection after the 413").to.equal(404);
        await c.write(withBody("PUT", "/v1/cache/body:fits", "fits"));
        const third = await c.read();
        expect(third.status, third.body.toString()).to.equal(200);
        expect(third.json()).to.include({ key: "body:fits", stored: true, bytes: 4 });
        expect(c.endedByPeer, "the connection is still open").to.equal(false);
      });
    }

    it("a keep-alive http.Agent: after a 413 for a 6 KiB PUT the next request reuses the same socket", async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const send = (method: string, path: string, body?: Buffer) =>
          new Promise<{ status: number; socket: unknown; body: string }>((resolve, reject) => {
            const req = http.request({ host: "127.0.0.1", port: node.apiPort, method, path, agent }, (res) => {
              const parts: Buffer[] = [];
              res.on("data", (d: Buffer) => parts.push(d));
              res.on("end", () => resolve({ status: res.statusCode ?? 0, socket: req.socket, body: Buffer.concat(parts).toString() }));
            });
            req.on("error", reject);
            req.end(body);
          });
        const first = await send("PUT", "/v1/cache/agent:big", Buffer.alloc(6 * 1024, 0x61));
        expect(first.status, first.body).to.equal(413);
        const second = await send("GET", "/v1/cache/agent:big");
        expect(second.status).to.equal(404);
        expect(second.socket, "the same socket").to.equal(first.socket);
      } finally {
        agent.destroy();
      }
    });

    const notUtf8: Array<[string, string, Buffer]> = [
      ["batch get, a key with byte 0xff", "get", Buffer.concat([Buffer.from('{"keys":["utf8:a'), Buffer.of(0xff), Buffer.from('"]}')])],
      ["batch put, a value with byte 0xff", "put", Buffer.concat([Buffer.from('{"items":[{"key":"utf8:b","value":"x'), Buffer.of(0xff), Buffer.from('"}]}')])],
      ["batch put, a UTF-8-encoded surrogate (ED A0 80)", "put", Buffer.concat([Buffer.from('{"items":[{"key":"utf8:c","value":"x'), Buffer.of(0xed, 0xa0, 0x80), Buffer.from('"}]}')])],
      ["batch delete, an overlong encoding of '/' (C0 AF)", "delete", Buffer.concat([Buffer.from('{"keys":["utf8:'), Buffer.of(0xc0, 0xaf), Buffer.from('"]}')])],
      ["batch put, a truncated 3-byte sequence (E2 82)", "put", Buffer.concat([Buffer.from('{"items":[{"key":"utf8:d","value":"'), Buffer.of(0xe2, 0x82), Buffer.from('"}]}')])],
    ];
    for (const [what, route, body] of notUtf8) {
      it(`a JSON body that is not valid UTF-8 (${what}) is 400 "request body is not valid UTF-8"`, async () => {
        const c = await connect();
        await c.write(withBody("POST", `/v1/cache/batch/${route}`, body, { "Content-Type": "application/json" }));
        expectEnvelope(await c.read(), 400, "BAD_REQUEST", "request body is not valid UTF-8");
      });
    }

    it("a batch body with 1001 keys (within the byte limit) is 400 with details.max_items, and the same connection then serves a request", async () => {
      const c = await connect();
      const keys = Array.from({ length: 1001 }, (_, i) => String(i % 10));
      await c.write(withBody("POST", "/v1/cache/batch/get", JSON.stringify({ keys }), { "Content-Type": "application/json" }));
      const first = await c.read();
      const body = expectEnvelope(first, 400, "BAD_REQUEST", "at most 1000 keys per batch call; got more");
      expect(body.details).to.deep.equal({ max_items: 1000 });
      await c.write(head("GET", "/v1/cache/body:never-stored"));
      expect((await c.read()).status, "a GET on the same connection after the 400").to.equal(404);
    });

    it("a chunked batch body is refused 400 at its 1001st item, before the client has sent the rest", async () => {
      const c = await connect();
      await c.write(head("POST", "/v1/cache/batch/put", { "Content-Type": "application/json", "Transfer-Encoding": "chunked" }));
      const part = Buffer.from(`{"items":[${'{"key":"a"},'.repeat(1001)}`);
      await c.write(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]));
      // The body is not finished (no last chunk): the answer comes anyway.
      expectEnvelope(await c.read({ timeoutMs: 5_000 }), 400, "BAD_REQUEST", "at most 1000 items per batch call; got more");
    });

    it("a batch body nesting arrays 65 deep is 400 with details.max_depth 64; 64 deep reaches the item checks", async () => {
      const deep = (n: number) => `{"keys":[${"[".repeat(n - 2)}${"]".repeat(n - 2)}]}`;
      const refused = await call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "Content-Type": "application/json" }, body: deep(65) });
      expect(refused.status, refused.body.toString()).to.equal(400);
      expect(refused.json()).to.deep.include({ code: "BAD_REQUEST", details: { max_depth: 64 } });
      const accepted = await call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "Content-Type": "application/json" }, body: deep(64) });
      expect(accepted.status, accepted.body.toString()).to.equal(200);
      expect(accepted.json<{ results: Json[] }>().results[0]).to.include({ status: 400 });
    });

    it("nothing of a refused invalid-UTF-8 batch put is stored, while the same body with valid multi-byte UTF-8 is stored as its UTF-8 bytes", async () => {
      for (const key of ["utf8:b", "utf8:c", "utf8:d"]) expect((await getValue(key)).status, key).to.equal(404);
      const c = await connect();
      await c.write(withBody("POST", "/v1/cache/batch/put", '{"items":[{"key":"utf8:ключ","value":"x€"}]}', { "Content-Type": "application/json" }));
      const r = await c.read();
      expect(r.status, r.body.toString()).to.equal(200);
      expect(r.json<{ results: Json[] }>().results[0]).to.include({ key: "utf8:ключ", status: 200, stored: true, bytes: 4 });
      expect((await getValue("utf8:ключ")).body.equals(Buffer.from("x€", "utf8"))).to.equal(true);
    });
  });

  describe("requests no route sees", () => {
    for (const listener of ["client", "management"] as const) {
      it(`a raw CONNECT example.com:443 on the ${listener} listener is 400 with the envelope "CONNECT is not supported: this is not a proxy" and the connection closes`, async () => {
        const c = await connect(listener === "client" ? node.apiPort : node.mgmtPort);
        await c.write("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
        const r = await c.read();
        expectEnvelope(r, 400, "BAD_REQUEST");
        expect(r.json()).to.deep.equal({ error: "CONNECT is not supported: this is not a proxy", code: "BAD_REQUEST" });
        expect(r.headers.connection).to.equal("close");
        await c.waitClosed(5_000);
      });
    }

    it("Expect: foo is 417 with the envelope naming the header, and the connection closes", async () => {
      const c = await connect();
      await c.write(head("GET", "/v1/cache/expect:any", { Expect: "foo" }));
      const r = await c.read();
      expectEnvelope(r, 417, "BAD_REQUEST");
      expect(r.json()).to.deep.equal({ error: 'unsupported Expect header "foo": only 100-continue is understood', code: "BAD_REQUEST" });
      expect(r.headers.connection).to.equal("close");
      await c.waitClosed(5_000);
    });

    it("Expect: foo on a PUT stores nothing", async () => {
      const c = await connect();
      await c.write(withBody("PUT", "/v1/cache/expect:put", "value", { Expect: "foo" }));
      expect((await c.read()).status).to.equal(417);
      expect((await getValue("expect:put")).status).to.equal(404);
    });

    it("Expect: 100-continue still works: 100 Continue, then the body, then 200", async () => {
      const c = await connect();
      await c.write(head("PUT", "/v1/cache/expect:continue", { Expect: "100-continue", "Content-Length": 5 }));
      const interim = await c.read();
      expect(interim.status).to.equal(100);
      await c.write("hello");
      const r = await c.read();
      expect(r.status, r.body.toString()).to.equal(200);
      expect((await getValue("expect:continue")).body.toString()).to.equal("hello");
    });

    it("the node keeps serving afterwards", async () => {
      expect((await call(`${node.mgmt}/health`)).status).to.equal(200);
      expect((await getValue("body:fits")).body.toString()).to.equal("fits");
    });
  });
});
