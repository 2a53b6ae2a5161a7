// Authentication comes before the body on the dist listener (SPEC-NOTES): a request without the
// peer token, or with a wrong one, is answered 401 before its body is read, inflated or decoded,
// whatever the body holds and whichever path or protocol it uses. Nothing it asked for happens.
import net from "node:net";
import { gzipSync } from "node:zlib";
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { call } from "../helpers/http-call.js";

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

  it("a refused HTTP/2 stream whose reset arrives with its headers does not kill the node, whatever its protocol (found by the exchange fuzz family)", async () => {
    // HEADERS and RST_STREAM in one TCP write: the node reads both before its handler runs, so
    // the handler meets a stream that is already closed.
    const literal = (name: string, value: string) => Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
    const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
      const head = Buffer.alloc(9);
      head.writeUIntBE(payload.length, 0, 3);
      head[3] = type;
      head[4] = flags;
      head.writeUInt32BE(stream, 5);
      return Buffer.concat([head, payload]);
    };
    const types = ["application/grpc", "application/grpc+proto", "application/grpc-web+proto", "application/connect+proto", "application/connect+json", "application/json"];
    const frames: Buffer[] = [Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(4, 0, 0, Buffer.alloc(0))];
    types.forEach((type, i) => {
      const id = 4 * i + 1;
      // :method POST, :scheme http (indexed), :path and :authority (literal, indexed names 4 and 1)
      const block = Buffer.concat([Buffer.from([0x83, 0x86]), Buffer.from([0x04, `${SERVICE}/Exchange`.length]), Buffer.from(`${SERVICE}/Exchange`), Buffer.from([0x01, 9]), Buffer.from("127.0.0.1"), literal("content-type", type), literal("authorization", "Bearer wrong")]);
      frames.push(frame(1, 0x4, id, block), frame(3, 0, id, Buffer.from([0, 0, 0, 8])));
      // the same stream with the token, for the handlers behind the gate
      const served = Buffer.concat([block.subarray(0, block.length - literal("authorization", "Bearer wrong").length), literal("authorization", `Bearer ${TOKEN}`)]);
      frames.push(frame(1, 0x4, id + 2, served), frame(3, 0, id + 2, Buffer.from([0, 0, 0, 8])));
    });
    const socket = net.connect(node.distPort, "127.0.0.1");
    socket.on("error", () => undefined);
    await new Promise((r) => socket.once("connect", r));
    // a GOAWAY (frame type 7) from the node would mean the frames were not what they should be
    const received: Buffer[] = [];
    socket.on("data", (c: Buffer) => received.push(c));
    socket.write(Buffer.concat(frames));
    await new Promise((r) => setTimeout(r, 300));
    const answer = Buffer.concat(received);
    for (let at = 0; at + 9 <= answer.length; at += 9 + answer.readUIntBE(at, 3)) expect(answer[at + 3], "no GOAWAY").to.not.equal(7);
    socket.destroy();
    expect(node.child.exitCode, node.stderr.join("")).to.equal(null);
    const r = await call(`${base}/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).to.equal(200);
  });

  it("with the token, the same paths still work (Health over Connect JSON, /health)", async () => {
    const h = await call(`${base}${SERVICE}/Health`, { method: "POST", body: "{}", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` } });
    expect(h.status, h.body.toString()).to.equal(200);
    expect((await call(`${base}/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).to.equal(200);
  });
});
