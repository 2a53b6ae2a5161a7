// The mutual-TLS dist listener after its CA changed (renewTrust): sessions verified under the old
// CA get GOAWAY at once, keep the streams they have, and are destroyed when the grace runs out
// (a peer that does not move its streams); a session opened afterwards is left alone; an HTTP/1.1
// answer on an older connection says Connection: close. One process, a real TLS listener on
// loopback, the grace timer injected.
import { expect } from "chai";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import type { TimerHandle, Timers } from "../../src/core/clock.js";
import { createSecurePeerServer, type PeerServer } from "../../src/peer/index.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";

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
        answer.end("ok");
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

  it("an HTTP/1.1 answer on a connection from before the change says Connection: close, and the connection ends", async () => {
    const socket = tls.connect({ host: "127.0.0.1", port, ...clientTls(), ALPNProtocols: ["http/1.1"] });
    await new Promise((r) => socket.once("secureConnect", r));
    let text = "";
    socket.setEncoding("utf8").on("data", (c: string) => (text += c));
    const ended = new Promise((r) => socket.once("end", r));
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    while (!text.includes("ok")) await new Promise((r) => setTimeout(r, 10));
    expect(text.toLowerCase(), "before the change: keep-alive").to.not.contain("connection: close");
    peer.renewTrust!();
    text = "";
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await ended;
    expect(text.toLowerCase()).to.contain("connection: close");
    socket.destroy();
  });
});
