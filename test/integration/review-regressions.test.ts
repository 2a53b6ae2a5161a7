// Edge cases of the peer and client APIs found in review (fixed in dce0726), on real processes:
// a bodiless POST /dist/drain on the dist listener; the batch get answer budget (items past
// SERVICE_MAX_BODY_BYTES of values are 413 in place); node ids restricted to [A-Za-z0-9._-] at
// start-up, in pushed records' origins and in gossip; a 413 for an oversized PUT body lets the
// client read its answer and keeps the connection usable; capacity counted over the whole node.
import http from "node:http";
import net from "node:net";
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { batchPut, eventually, sleep } from "./cluster-helpers.js";

const KIB = 1024;

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `request` as is on a new TCP connection and reads the answer until the server closes it. */
function rawRequest(port: number, request: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    const parts: Buffer[] = [];
    socket.on("data", (d: Buffer) => parts.push(d));
    socket.on("error", reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error("no answer within 5 s")));
    socket.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const sep = text.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = text.slice(0, sep).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
      let body = text.slice(sep + 4);
      if (headers["transfer-encoding"] === "chunked") {
        let out = "";
        for (;;) {
          const nl = body.indexOf("\r\n");
          const size = parseInt(body.slice(0, nl), 16);
          if (!size) break;
          out += body.slice(nl + 2, nl + 2 + size);
          body = body.slice(nl + 2 + size + 2);
        }
        body = out;
      }
      resolve({ status: Number(statusLine?.split(" ")[1]), headers, body });
    });
  });
}

describe("review regressions: peer and client API edge cases on a real node", function () {
  this.timeout(30_000);
  const running: NodeProcess[] = [];
  const start = async (id: string, env: Record<string, string> = {}) => {
    const n = await startNode({ id, env });
    running.push(n);
    return n;
  };
  after(async () => {
    for (const n of running) await n.stop("SIGKILL");
  });

  describe("POST /dist/drain on the dist listener", () => {
    let node: NodeProcess;
    before(async () => {
      node = await start("drain-rr");
    });

    it("without any body (no Content-Length, no Transfer-Encoding) answers 200 {draining: true} and the node drains", async () => {
      const r = await rawRequest(node.distPort, "POST /dist/drain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      expect(r.status, r.body).to.equal(200);
      expect(JSON.parse(r.body)).to.deep.equal({ draining: true });
      expect((await call(`${node.mgmt}/health`)).json()).to.include({ status: "draining", draining: true });
    });

    it("with an empty body (Content-Length: 0) answers 200 {draining: true}", async () => {
      const r = await rawRequest(node.distPort, "POST /dist/drain HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      expect(r.status, r.body).to.equal(200);
      expect(JSON.parse(r.body)).to.deep.equal({ draining: true });
    });
  });

  describe("batch get answer budget (SERVICE_MAX_BODY_BYTES=1MiB)", () => {
    let node: NodeProcess;
    before(async () => {
      node = await start("budget-rr", { SERVICE_MAX_BODY_BYTES: "1MiB" });
    });

    it("five 300 KiB values: the first three come back, the found items past the 1 MiB budget are status 413 PAYLOAD_TOO_LARGE in place, a missing key stays 404, all in one 200 JSON answer", async () => {
      const keys = ["bb-0", "bb-1", "bb-2", "bb-3", "bb-4"];
      for (const [i, k] of keys.entries()) {
        const r = await call(`${node.api}/v1/cache/${k}`, { method: "PUT", body: Buffer.alloc(300 * KIB, 0x61 + i) });
        expect(r.status).to.equal(200);
      }
      const asked = ["bb-0", "bb-missing", "bb-1", "bb-2", "bb-3", "bb-4"];
      const r = await call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ keys: asked }) });
      expect(r.status, r.body.toString().slice(0, 200)).to.equal(200);
      expect(String(r.headers["content-type"])).to.match(/^application\/json/);
      const results = r.json<{ results: Array<Record<string, unknown>> }>().results;
      expect(results.map((x) => `${String(x.key)}:${String(x.status)}:${String(x.code ?? "")}`)).to.deep.equal([
        "bb-0:200:",
        "bb-missing:404:NOT_FOUND",
        "bb-1:200:",
        "bb-2:200:",
        "bb-3:413:PAYLOAD_TOO_LARGE",
        "bb-4:413:PAYLOAD_TOO_LARGE",
      ]);
      for (const x of results.filter((x) => x.status === 200)) expect(Buffer.from(String(x.value), "base64").length).to.equal(300 * KIB);
      for (const x of results.filter((x) => x.status === 413)) {
        expect(x.found).to.equal(false);
        expect(x.error).to.be.a("string").and.not.equal("");
        expect(x).to.not.have.property("value");
      }
      // Asked alone, a key refused for the budget is served.
      const alone = await call(`${node.api}/v1/cache/batch/get`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ keys: ["bb-4"] }) });
      expect(alone.json<{ results: Array<Record<string, unknown>> }>().results[0]).to.include({ key: "bb-4", status: 200 });
    });
  });

  describe("node ids", () => {
    for (const id of ["节点1", "a b", "x/y"]) {
      it(`SERVICE_NODE_ID=${JSON.stringify(id)} (outside [A-Za-z0-9._-]) exits 2 with one stderr line naming SERVICE_NODE_ID`, async () => {
        const node = await startNode({ id, readyMessage: false });
        running.push(node);
        const code = await Promise.race([node.exited, sleep(8_000).then(() => "still running")]);
        expect(code, `stderr: ${node.stderr.join("")}`).to.equal(2);
        const lines = node.stderr.join("").trim().split("\n");
        expect(lines).to.have.length(1);
        expect(lines[0]).to.match(/SERVICE_NODE_ID/);
      });
    }
  });

  describe("peer pushes and gossip with invalid fields", () => {
    let node: NodeProcess;
    before(async () => {
      node = await start("push-rr");
      const r = await call(`${node.api}/v1/cache/pp-ok`, { method: "PUT", body: "fine" });
      expect(r.status).to.equal(200);
    });

    const entry = (key: string, origin: string, version: string) => ({ key, value: Buffer.from("pushed").toString("base64"), version, origin });
    const version = () => String(Date.now() * 1000 + 500);
    const push = (entries: object[]) =>
      call(`${node.dist}/internal/set`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from: "push-peer", entries }) });

    /** GET and HEAD of the stored key answer 200 with its headers; the pushed keys are absent. */
    async function stillServing(absent: readonly string[]): Promise<void> {
      const get = await call(`${node.api}/v1/cache/pp-ok`);
      expect(get.status).to.equal(200);
      expect(get.body.toString()).to.equal("fine");
      expect(get.headers["x-cache-origin"]).to.equal("push-rr");
      const head = await call(`${node.api}/v1/cache/pp-ok`, { method: "HEAD" });
      expect(head.status).to.equal(200);
      for (const k of absent) {
        expect((await call(`${node.api}/v1/cache/${encodeURIComponent(k)}`)).status, `GET ${k}`).to.equal(404);
        expect((await call(`${node.api}/v1/cache/${encodeURIComponent(k)}`, { method: "HEAD" })).status, `HEAD ${k}`).to.equal(404);
      }
    }

    const cases: Array<[string, object]> = [
      ["an origin with a space", entry("pp-space", "bad origin", version())],
      ["an origin with a non-ASCII character", entry("pp-unicode", "节点", version())],
      ["an empty key", entry("", "push-peer", version())],
      ["version 0", entry("pp-v0", "push-peer", "0")],
    ];
    for (const [what, bad] of cases) {
      it(`POST /internal/set with an entry having ${what} is refused 400 (invalid_argument), nothing of the call is stored, and GET/HEAD keep answering`, async () => {
        const good = entry(`pp-good-${what.length}`, "push-peer", version());
        const r = await push([good, bad]);
        expect(r.status, r.body.toString()).to.equal(400);
        expect(r.json()).to.include({ code: "invalid_argument" });
        const key = (bad as { key: string }).key;
        await stillServing([(good as { key: string }).key, ...(key === "" ? [] : [key])]);
      });
    }

    it("gossip naming members whose ids have invalid characters does not add them to /cluster/members (a valid id in the same push is added)", async () => {
      const member = (id: string) => ({ id, address: "127.0.0.1:9", state: "MEMBER_STATE_ALIVE", incarnation: "1" });
      const r = await call(`${node.dist}/internal/gossip`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ from: "push-peer", members: [member("bad id"), member("节点2"), member("x/y"), member("ghost-ok")] }),
      });
      expect(r.status, r.body.toString()).to.equal(200);
      const listed = (await call(`${node.mgmt}/cluster/members`)).json<{ members: Array<{ id: string }> }>().members.map((m) => m.id).sort();
      expect(listed).to.deep.equal(["ghost-ok", "push-rr"]);
    });
  });

  describe("413 for an oversized PUT body (SERVICE_MAX_VALUE_BYTES=64KiB)", () => {
    let node: NodeProcess;
    let agent: http.Agent;
    before(async () => {
      node = await start("body-rr", { SERVICE_MAX_VALUE_BYTES: "64KiB" });
    });
    beforeEach(() => {
      agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    });
    afterEach(() => agent.destroy());

    interface Sent {
      status: number;
      headers: http.IncomingHttpHeaders;
      body: string;
      socket: net.Socket;
    }

    /** One request through `agent`; the body is written in 16 KiB chunks (chunked unless a Content-Length is given). */
    function send(method: string, path: string, body: Buffer | undefined, headers: Record<string, string> = {}): Promise<Sent> {
      return new Promise((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port: node.apiPort, method, path, agent, headers }, (res) => {
          const parts: Buffer[] = [];
          res.on("data", (d: Buffer) => parts.push(d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString("utf8"), socket: req.socket as net.Socket }));
          res.on("error", reject);
        });
        req.on("error", reject);
        if (!body) {
          req.end();
          return;
        }
        let at = 0;
        const next = () => {
          while (at < body.length) {
            const chunk = body.subarray(at, at + 16 * KIB);
            at += chunk.length;
            if (!req.write(chunk)) {
              req.once("drain", next);
              return;
            }
          }
          req.end();
        };
        next();
      });
    }

    for (const framing of ["chunked", "content-length"] as const) {
      it(`a ${framing} PUT body of 96 KiB (within twice the limit): the client reads the 413 PAYLOAD_TOO_LARGE envelope (no EPIPE/ECONNRESET) and the same keep-alive connection serves the next request`, async () => {
        const body = Buffer.alloc(96 * KIB, 0x62);
        const headers: Record<string, string> = framing === "content-length" ? { "Content-Length": String(body.length) } : {};
        const first = await send("PUT", `/v1/cache/too-big-${framing}`, body, headers);
        expect(first.status, first.body).to.equal(413);
        expect(JSON.parse(first.body)).to.include({ code: "PAYLOAD_TOO_LARGE" });
        expect(first.headers.connection, "the answer keeps the connection open").to.not.equal("close");
        const second = await send("GET", `/v1/cache/too-big-${framing}`, undefined).catch((err: unknown) => err as Error);
        expect(second instanceof Error ? `${second.message} (the server closed the connection after the 413 without Connection: close)` : second.status, "the next request on the kept-alive connection").to.equal(404);
        if (second instanceof Error) return;
        expect(second.socket, "the second request travelled on the first one's connection").to.equal(first.socket);
        const third = await send("PUT", `/v1/cache/fits-${framing}`, Buffer.alloc(10 * KIB, 0x63));
        expect(third.status).to.equal(200);
        expect(third.socket).to.equal(first.socket);
      });
    }
  });

  describe("capacity (SERVICE_CAPACITY=1000, the default 32 shards)", () => {
    let node: NodeProcess;
    before(async () => {
      node = await start("cap-rr", { SERVICE_CAPACITY: "1000", SERVICE_EVICTION_INTERVAL: "200ms" });
    });
    const items = async () => (await call(`${node.mgmt}/stats`)).json<{ items: number }>().items;

    it("keeps all 1000 distinct keys written (no eviction below capacity), and after 1100 keys POST /evict leaves exactly 1000 items", async () => {
      const first = Array.from({ length: 1000 }, (_, i) => ({ key: `cap-${i}`, value: `v${i}` }));
      expect((await batchPut(node, first)).filter((r) => r.status !== 200)).to.deep.equal([]);
      await sleep(600); // several eviction loop passes
      expect(await items()).to.equal(1000);
      const stats = (await call(`${node.mgmt}/stats`)).json<{ evictions: number }>();
      expect(stats.evictions).to.equal(0);

      const more = Array.from({ length: 100 }, (_, i) => ({ key: `cap-more-${i}`, value: `w${i}` }));
      expect((await batchPut(node, more)).filter((r) => r.status !== 200)).to.deep.equal([]);
      const evict = await call(`${node.mgmt}/evict`, { method: "POST" });
      expect(evict.status).to.equal(200);
      expect(await items()).to.equal(1000);
      expect(await eventually(items, (n) => n === 1000, 1000)).to.equal(1000);
    });
  });
});
