// The mutual-TLS dist listener after its CA changed (renewTrust): sessions verified under the old
// CA get GOAWAY at once, keep the streams they have, and are destroyed when the grace runs out
// (a peer that does not move its streams); a session opened afterwards is left alone; an idle
// older HTTP/1.1 connection is closed, a busy one's answer says Connection: close; a handshake
// held back across the change ends unanswered. One process, a real TLS listener on
// loopback, the grace timer injected.
import { expect } from "chai";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import type { TimerHandle, Timers } from "../../src/core/clock.js";
import { systemClock, systemTimers } from "../../src/core/clock.js";
import { systemRandom } from "../../src/core/random.js";
import { recordingLogger } from "../../src/log/index.js";
import { createNode } from "../../src/node.js";
import { ConnectPeerTransport, createSecurePeerServer, type PeerServer } from "../../src/peer/index.js";
import { testConfig } from "../helpers/test-config.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { handshakeRelay } from "../helpers/handshake-relay.js";

/** Timers whose `after` callbacks run only when the test fires them. */
class ManualTimers implements Timers {
  readonly due: Array<{ fn: () => void; cancelled: boolean }> = [];
  every(): TimerHandle {
    return { cancel: () => undefined };
  }
  after(_ms: number, fn: () => void): TimerHandle {
    const t = { fn, cancelled: false };
    this.due.push(t);
    return { cancel: () => void (t.cancelled = true) };
  }
  defer(fn: () => void): void {
    setImmediate(fn);
  }
  fireAll(): void {
    for (const t of this.due.splice(0)) if (!t.cancelled) t.fn();
  }
}

describe("dist listener: sessions of a replaced peer CA (renewTrust)", function () {
  this.timeout(20_000);
  let certs: TestCerts;
  let timers: ManualTimers;
  let peer: PeerServer;
  let port: number;
  const clientTls = () => ({ ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key), servername: "localhost" });

  before(() => {
    certs = makeTestCerts([]);
  });
  after(() => certs?.cleanup());
  beforeEach(async () => {
    timers = new ManualTimers();
    // "/hold" streams stay open until the client ends them; anything else answers at once.
    peer = createSecurePeerServer(
      (req, res) => {
        const answer = res as http2.Http2ServerResponse;
        if (req.url === "/hold") return void answer.writeHead(200).write("held ");
        if (req.headers.expect !== undefined) answer.writeContinue();
        req.resume();
        req.on("end", () => answer.end("ok"));
      },
      { ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key) },
      undefined,
      { timers },
    );
    await new Promise<void>((r) => peer.server.listen(0, "127.0.0.1", r));
    port = (peer.server.address() as AddressInfo).port;
  });
  afterEach(() => peer.close());

  function connect(): Promise<http2.ClientHttp2Session> {
    return new Promise((resolve, reject) => {
      const s = http2.connect(`https://127.0.0.1:${port}`, clientTls());
      s.once("connect", () => resolve(s));
      s.once("error", reject);
    });
  }

  it("an older session gets GOAWAY, keeps its open stream through the grace, and is destroyed when it runs out; a newer one stays", async () => {
    const old = await connect();
    const held = old.request({ ":path": "/hold", ":method": "POST" });
    held.on("error", () => undefined);
    await new Promise((r) => held.once("response", r));
    const goaway = new Promise((r) => old.once("goaway", r));

    peer.renewTrust!();
    await goaway;
    const fresh = await connect();
    const answer = await new Promise<string>((resolve) => {
      const s = fresh.request({ ":path": "/" });
      let text = "";
      s.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve(text));
    });
    expect(answer, "a session opened after the change is served").to.equal("ok");
    expect(held.closed, "the stream open at the change lives on during the grace").to.equal(false);
    expect(timers.due.length, "one grace timer, for the older session only").to.equal(1);

    const cut = new Promise((r) => held.once("close", r));
    timers.fireAll();
    await cut;
    expect(fresh.closed || fresh.destroyed, "the newer session is left alone").to.equal(false);
    fresh.close();
    old.destroy();
  });

  it("an older session whose streams all end closes without waiting for the grace", async () => {
    const old = await connect();
    const held = old.request({ ":path": "/hold", ":method": "POST" });
    held.on("error", () => undefined);
    await new Promise((r) => held.once("response", r));
    peer.renewTrust!();
    await new Promise((r) => old.once("goaway", r));
    const closed = new Promise((r) => old.once("close", r));
    held.end();
    held.resume();
    held.close();
    await closed;
    expect(timers.due.every((t) => t.cancelled), "the grace timer was cancelled").to.equal(true);
  });

  /** An HTTP/1.1 connection over TLS with the raw text it received. */
  async function h1(target = port): Promise<{ socket: tls.TLSSocket; text: () => string; reset: () => void; ended: Promise<unknown> }> {
    const socket = tls.connect({ host: "127.0.0.1", port: target, ...clientTls(), ALPNProtocols: ["http/1.1"] });
    let text = "";
    socket.setEncoding("utf8").on("data", (c: string) => (text += c));
    socket.on("error", () => undefined);
    const ended = new Promise((r) => socket.once("close", r));
    await new Promise((r) => socket.once("secureConnect", r));
    return { socket, text: () => text, reset: () => void (text = ""), ended };
  }
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it("an idle HTTP/1.1 connection from before the change is closed by it; one in a 100-continue request gets Connection: close", async () => {
    const idle = await h1();
    idle.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => idle.text().includes("ok"));
    const busy = await h1();
    busy.socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
    await until(() => busy.text().includes("100 Continue"));
    peer.renewTrust!();
    await idle.ended;
    expect(busy.socket.destroyed, "the connection in a request stays for its answer").to.equal(false);
    busy.socket.write("{}");
    await busy.ended;
    expect(busy.text().toLowerCase()).to.contain("200 ok").and.contain("connection: close");
  });

  it("an HTTP/1.1 connection with part of a request head in at the change is not taken as idle: the request is answered, with Connection: close", async () => {
    const c = await h1();
    c.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => c.text().includes("ok"));
    c.reset();
    c.socket.write("GET / HTTP/1.1\r\nHo");
    await new Promise((r) => setTimeout(r, 50));
    peer.renewTrust!();
    await new Promise((r) => setTimeout(r, 50));
    expect(c.socket.destroyed, "cut in the middle of its request head").to.equal(false);
    c.socket.write("st: x\r\n\r\n");
    await c.ended;
    expect(c.text().toLowerCase()).to.contain("200 ok").and.contain("connection: close");
  });

  it("a handshake held back across the change (checked against the old CA) ends as it completes: HTTP/1.1 with no answer, HTTP/2 with GOAWAY", async () => {
    const relay = await handshakeRelay(port);
    try {
      const relayPort = relay.port;
      const held = await h1(relayPort);
      held.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      const heldH2 = http2.connect(`https://127.0.0.1:${relayPort}`, clientTls());
      heldH2.on("error", () => undefined);
      const goaway = new Promise((r) => heldH2.once("goaway", r));
      await new Promise((r) => heldH2.once("connect", r));
      peer.renewTrust!();
      relay.release();
      await held.ended;
      expect(held.text(), "no answer on an HTTP/1.1 connection verified under the old CA").to.equal("");
      await goaway; // an HTTP/2 session verified under the old CA is closed as it starts
      heldH2.destroy();
    } finally {
      relay.close();
    }
  });

  it("a node's peer client loses no call while the listener renews again and again: refused streams are sent again", async () => {
    const node = createNode(testConfig({ SERVICE_NODE_ID: "renew-1", SERVICE_DIST_ADDR: "127.0.0.1:1", SERVICE_REPLICATION: "1" }), {
      logger: recordingLogger("error"), clock: systemClock, timers: systemTimers, random: systemRandom, documents: { client: "", management: "" }, serviceVersion: "test",
    });
    const served = createSecurePeerServer(node.peerHandler, { ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key) });
    await new Promise<void>((r) => served.server.listen(0, "127.0.0.1", r));
    const transport = new ConnectPeerTransport({ compressionThresholdBytes: 0, tls: { ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key) } });
    const to = { id: "renew-1", address: `localhost:${(served.server.address() as AddressInfo).port}` };
    const failures = new Map<string, number>();
    let ok = 0;
    let stop = false;
    // Unary calls (Health) and Exchange frames (Get), 16 of each at a time.
    const worker = async (exchange: boolean) => {
      while (!stop) {
        try {
          if (exchange) await transport.get(to, ["k"]);
          else await transport.health(to);
          ok++;
        } catch (err) {
          const m = (err as Error).message.slice(0, 100);
          failures.set(m, (failures.get(m) ?? 0) + 1);
        }
      }
    };
    try {
      const workers = Array.from({ length: 32 }, (_, i) => worker(i % 2 === 1));
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 12; i++) {
        served.renewTrust!();
        await new Promise((r) => setTimeout(r, 150));
      }
      stop = true;
      await Promise.all(workers);
      // Before: 'Stream closed with error code NGHTTP2_REFUSED_STREAM' for calls in flight.
      expect([...failures], `failed calls (of ${ok + [...failures.values()].reduce((a, b) => a + b, 0)})`).to.deep.equal([]);
      expect(ok).to.be.greaterThan(1000);
    } finally {
      stop = true;
      await transport.close();
      await served.close();
      await node.stop();
    }
  });
});
