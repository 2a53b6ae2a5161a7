// Authentication comes before the body on the dist listener (SPEC-NOTES): a request without the
// peer token, or with a wrong one, is answered 401 before its body is read, inflated or decoded,
// whatever the body holds and whichever path or protocol it uses. Nothing it asked for happens.
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { call } from "../helpers/http-call.js";
import { FLAG, FRAME, frame, headerBlock, headersThenReset, sendBytes, sendFrames } from "../helpers/h2-frames.js";
import { RawConnection } from "../helpers/raw-http.js";

const TOKEN = "peer-token-auth-first";
const SERVICE = "/internal/hypercache.peer.v1.PeerService";

/** RSS of a process in MiB, from /proc. */
async function rssMiB(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

describe("dist listener: authentication comes before the body", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  let base: string;
  // 256 MiB of zeros, gzipped to about 256 KB: a decoder that ran first would inflate it.
  const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });

  before(async () => {
    node = await startNode({ id: "af1", env: { SERVICE_PEER_TOKEN: TOKEN } });
    base = `http://127.0.0.1:${node.distPort}`;
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  const bodies: Array<[string, { body?: string | Buffer; headers?: Record<string, string> }]> = [
    ["no body", {}],
    ["an empty body", { body: "" }],
    ["[]", { body: "[]" }],
    ["invalid JSON", { body: "{nope" }],
    ["valid JSON", { body: JSON.stringify({ from: "intruder", members: [{ id: "intruder", address: "10.1.1.1:7946", state: "MEMBER_STATE_ALIVE", incarnation: "1" }] }) }],
    ["a gzip body inflating to 256 MiB", { body: bomb, headers: { "content-encoding": "gzip" } }],
  ];
  const paths = ["/internal/gossip", "/internal/set", `${SERVICE}/Gossip`, `${SERVICE}/Set`, "/dist/drain"];

  for (const [what, b] of bodies) {
    it(`POST with ${what} to each peer path, without a token or with a wrong one: 401 envelope`, async () => {
      for (const path of paths) {
        for (const auth of [{}, { authorization: "Bearer wrong" }] as Array<Record<string, string>>) {
          const r = await call(`${base}${path}`, { method: "POST", body: b.body, headers: { "content-type": "application/json", ...b.headers, ...auth } });
          expectEnvelope(r, 401, "UNAUTHORIZED", /peer token/);
        }
      }
    });
  }

  it("GET /health and the GET fixed paths without the token: 401 envelope", async () => {
    for (const path of ["/health", "/internal/keys", "/internal/probe?target=x", `${SERVICE}/Health?connect=v1&encoding=json&message=%7B%7D`]) {
      expectEnvelope(await call(`${base}${path}`), 401, "UNAUTHORIZED");
    }
  });

  it("nothing the refused requests asked for happened: the node is not draining, no intruder joined, RSS did not grow by the bomb", async () => {
    const before = await rssMiB(node.child.pid as number);
    for (let i = 0; i < 5; i++) await call(`${base}/internal/set`, { method: "POST", body: bomb, headers: { "content-type": "application/json", "content-encoding": "gzip" } });
    expect((await rssMiB(node.child.pid as number)) - before, "RSS growth (MiB)").to.be.below(64);
    const health = await call(`${node.mgmt}/health`);
    expect(health.status).to.equal(200);
    expect(health.json()).to.include({ draining: false });
    const members = (await call(`${node.mgmt}/cluster/members`)).json<{ members: Array<{ id: string }> }>();
    expect(members.members.map((m) => m.id)).to.deep.equal(["af1"]);
  });

  it("with the token, a body that is not valid protobuf answers 400 invalid_argument, never 500 (fuzz corpus dist-2a4de39495a4)", async () => {
    for (const body of [Buffer.from("IiAi", "base64"), Buffer.from("ZmFsc2U=", "base64"), Buffer.from([0xff, 0xff, 0xff])]) {
      const r = await call(`${base}${SERVICE}/Forward`, { method: "POST", body, headers: { "content-type": "application/proto", authorization: `Bearer ${TOKEN}` } });
      expect(r.status, r.body.toString()).to.equal(400);
      expect(r.json<{ code: string }>().code).to.equal("invalid_argument");
    }
  });

  /** The node is still running and serving. */
  async function expectAlive(): Promise<void> {
    expect(node.child.exitCode, node.stderr.join("")).to.equal(null);
    const r = await call(`${base}/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).to.equal(200);
  }

  it("a refused HTTP/2 stream whose reset arrives with its headers does not kill the node, whatever its protocol (found by the exchange fuzz family)", async () => {
    // HEADERS and RST_STREAM in one TCP write: the node reads both before its handler runs, so
    // the handler meets a stream that is already closed. Each stream goes once without the
    // token and once with it, for the handlers behind the gate.
    const types = ["application/grpc", "application/grpc+proto", "application/grpc-web+proto", "application/connect+proto", "application/connect+json", "application/json"];
    const frames = types.flatMap((type, i) => {
      const fields = (token: string): [string, string][] => [[":method", "POST"], [":scheme", "http"], [":path", `${SERVICE}/Exchange`], [":authority", "127.0.0.1"], ["content-type", type], ["authorization", `Bearer ${token}`]];
      return [headersThenReset(4 * i + 1, fields("wrong")), headersThenReset(4 * i + 3, fields(TOKEN))];
    });
    // a GOAWAY from the node would mean the frames were not what they should be
    expect(await sendFrames(node.distPort, frames)).to.not.include(FRAME.GOAWAY);
    await expectAlive();
  });

  it("a stream with Expect: 100-continue whose reset arrives with its headers does not kill the node (Node's compat layer answers 100 before any handler)", async () => {
    const frames = ["/health", `${SERVICE}/Exchange`, `${SERVICE}/Set`].flatMap((path, i) =>
      [undefined, TOKEN].map((token, j) =>
        headersThenReset(4 * i + 2 * j + 1, [[":method", "POST"], [":scheme", "http"], [":path", path], [":authority", "127.0.0.1"], ["content-type", "application/json"], ["expect", "100-continue"], ...(token ? [["authorization", `Bearer ${token}`] as [string, string]] : [])]),
      ),
    );
    expect(await sendFrames(node.distPort, frames)).to.not.include(FRAME.GOAWAY);
    await expectAlive();
  });

  it("Expect: 100-continue over HTTP/1.1: without the token the first answer is the 401, never 100 Continue; with it, 100 then the answer", async () => {
    for (const path of ["/internal/set", `${SERVICE}/Set`, "/dist/drain"]) {
      const c = await RawConnection.open(node.distPort);
      await c.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`);
      expect((await c.read()).status, `${path}: the first answer is the final one`).to.equal(401);
      c.destroy();
    }
    const c = await RawConnection.open(node.distPort);
    await c.write(`POST ${SERVICE}/Health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`);
    expect((await c.read()).status, "accepted: 100 Continue first").to.equal(100);
    await c.write("{}");
    expect((await c.read()).status).to.equal(200);
    c.destroy();
  });

  it("over HTTP/1.1 a refused request's large body is not read to its end: JSON gets Connection: close, gRPC and gRPC-Web are cut after 64 KiB (a refused gRPC-Web call was kept open and its body read: 3.7 GB in 5 s)", async () => {
    for (const type of ["application/json", "application/grpc-web+proto", "application/grpc", "application/grpc-web-text"]) {
      const c = await RawConnection.open(node.distPort);
      await c.write(`POST ${SERVICE}/Set HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: 104857600\r\n\r\n`);
      const r = await c.read({ headOnly: true });
      if (type === "application/json") expect(r.headers.connection, type).to.equal("close");
      else expect(r.headers["grpc-status"], type).to.equal("16");
      // More than the 64 KiB a refused gRPC call's body is read for, a piece at a time.
      for (let i = 0; i < 4 && !c.endedByPeer; i++) await c.write(Buffer.alloc(32 * 1024)).catch(() => undefined);
      const closedAt = await Promise.race([c.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 2_000))]);
      expect(closedAt, `${type}: the node closed the connection without reading the body`).to.be.greaterThan(0);
      c.destroy();
    }
  });

  it("over HTTP/1.1 a refused gRPC-Web call with a small body is answered Unauthenticated on a connection that stays open", async () => {
    const c = await RawConnection.open(node.distPort);
    await c.write(`POST ${SERVICE}/Health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/grpc-web+proto\r\nContent-Length: 5\r\n\r\n\u0000\u0000\u0000\u0000\u0000`);
    const r = await c.read({ headOnly: true });
    expect([r.status, r.headers["grpc-status"], r.headers.connection]).to.deep.equal([200, "16", "keep-alive"]);
    c.destroy();
  });

  it("Expect: 100-continue over HTTP/2: without the token no 100 Continue comes before the 401; with it, 100 then the answer", async () => {
    const session = http2.connect(base);
    try {
      const ask = (auth: Record<string, string>) =>
        new Promise<{ continued: boolean; status: number }>((resolve, reject) => {
          let continued = false;
          const req = session.request({ ":method": "POST", ":path": `${SERVICE}/Health`, "content-type": "application/json", expect: "100-continue", ...auth });
          req.on("continue", () => {
            continued = true;
            req.end("{}");
          });
          req.on("response", (h) => {
            resolve({ continued, status: Number(h[":status"]) });
            req.close();
          });
          req.on("error", reject);
        });
      expect(await ask({})).to.deep.equal({ continued: false, status: 401 });
      expect(await ask({ authorization: "Bearer wrong" })).to.deep.equal({ continued: false, status: 401 });
      expect(await ask({ authorization: `Bearer ${TOKEN}` })).to.deep.equal({ continued: true, status: 200 });
    } finally {
      session.close();
    }
  });

  it("an authority that is not a host, with the token, gets 400 and does not kill the node (HTTP/2 :authority and HTTP/1.1 Host)", async () => {
    for (const authority of ["[", "a b", "%"]) {
      const frames = [frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock([[":method", "POST"], [":scheme", "http"], [":path", `${SERVICE}/Health`], [":authority", authority], ["content-type", "application/json"], ["authorization", `Bearer ${TOKEN}`]]))];
      await sendFrames(node.distPort, frames);
      const h1 = await sendBytes(node.distPort, `POST ${SERVICE}/Health HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
      expect(h1, authority).to.match(/^HTTP\/1\.1 400 /);
      await expectAlive();
    }
  });

  it("with the token, the same paths still work (Health over Connect JSON, /health)", async () => {
    const h = await call(`${base}${SERVICE}/Health`, { method: "POST", body: "{}", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` } });
    expect(h.status, h.body.toString()).to.equal(200);
    expect((await call(`${base}/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).to.equal(200);
  });
});

describe("dist listener in protected mode (no peer credential): a loopback request without an authority", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  before(async () => {
    node = await startNode({ id: "af2" });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("HTTP/1.0 without Host gets 400 and does not kill the node (Connect's adapter cannot build the request's URL)", async () => {
    for (const path of ["/health", `${SERVICE}/Health`]) {
      const answer = await sendBytes(node.distPort, `GET ${path} HTTP/1.0\r\n\r\n`);
      expect(answer, path).to.match(/^HTTP\/1\.1 400 /);
      expect(answer).to.include('"code":"BAD_REQUEST"');
    }
    expect(node.child.exitCode, node.stderr.join("")).to.equal(null);
    expect((await call(`http://127.0.0.1:${node.distPort}/health`)).status).to.equal(200);
  });
});
