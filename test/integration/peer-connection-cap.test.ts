// The dist listener's connection cap, in process with a cap of 3: at the cap the oldest connection
// that has not carried a request the gate let through is closed for the new one, and a trusted
// peer session is never closed to make room. Before, the new connection was refused: 4,096
// connections opened without a token kept a restarting peer out for the peer timeout (5-10 s),
// and whoever reopened them kept it out for good.
import { expect } from "chai";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { systemTimers } from "../../src/core/clock.js";
import { PeerConnectionTrust } from "../../src/peer/connection-trust.js";
import type { PeerRequestHandler } from "../../src/peer/peer-handler.js";
import type { CapOutcome } from "../../src/http/connection-slots.js";
import { createPeerServer, createSecurePeerServer, type PeerServer } from "../../src/peer/peer-server.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { RawConnection } from "../helpers/raw-http.js";

const CAP = 3;
const TOKEN = "cap-token";

/** Server-side HTTP/2 sessions of requests to /hold, whose answers never end. */
const holding: http2.ServerHttp2Session[] = [];

/** Trusts the connection of a request that carries the token (as the peer gate does), answers "ok" (never, for /hold). */
function handlerFor(trust: PeerConnectionTrust): PeerRequestHandler {
  return (req, res) => {
    if (req.headers.authorization === `Bearer ${TOKEN}`) trust.markRequest(req);
    if (req.url === "/hold" && "stream" in req) {
      holding.push(req.stream.session as http2.ServerHttp2Session);
      (res as http2.Http2ServerResponse).write("held");
      return;
    }
    res.end("ok");
  };
}

/** One GET with the token on an HTTP/2 session; resolves with the body. */
function h2Get(session: http2.ClientHttp2Session): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": "/health", authorization: `Bearer ${TOKEN}` });
    let body = "";
    stream.setEncoding("utf8");
    stream.on("data", (d: string) => (body += d));
    stream.on("end", () => resolve(body));
    stream.on("error", reject);
    stream.end();
  });
}

const h1Get = `GET /health HTTP/1.1\r\nHost: peer\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;

function closedSoon(session: http2.ClientHttp2Session): Promise<boolean> {
  return new Promise((resolve) => {
    if (session.closed || session.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), 300);
    session.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function listening(peer: PeerServer): Promise<number> {
  await new Promise<void>((resolve) => peer.server.listen(0, "127.0.0.1", resolve));
  return (peer.server.address() as AddressInfo).port;
}

describe("dist listener connection cap: untrusted connections make room, trusted sessions stay", function () {
  this.timeout(30_000);
  const sessions: http2.ClientHttp2Session[] = [];
  const raws: RawConnection[] = [];
  let peer: PeerServer;
  let capped: CapOutcome[];
  const limits = () => ({ maxConnections: CAP, onCapped: (o: CapOutcome) => void capped.push(o) });
  beforeEach(() => {
    capped = [];
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    for (const r of raws.splice(0)) r.destroy();
    await peer.close();
  });

  describe("cleartext (HTTP/2 and HTTP/1.1 on one port)", () => {
    let port: number;
    beforeEach(async () => {
      const trust = new PeerConnectionTrust(systemTimers);
      peer = createPeerServer(handlerFor(trust), trust, limits());
      port = await listening(peer);
    });

    it("closes the oldest untrusted connection, not an older trusted session, for a new one", async () => {
      const trusted = http2.connect(`http://127.0.0.1:${port}`);
      sessions.push(trusted);
      expect(await h2Get(trusted)).to.equal("ok");
      for (let i = 0; i < CAP - 1; i++) raws.push(await RawConnection.open(port));
      const fresh = await RawConnection.open(port);
      raws.push(fresh);
      await fresh.write(h1Get);
      expect((await fresh.read({ timeoutMs: 5_000 })).status).to.equal(200);
      await raws[0]!.waitClosed(5_000);
      expect(await closedSoon(trusted), "the trusted session stays").to.equal(false);
      expect(await h2Get(trusted)).to.equal("ok");
      expect(capped).to.deep.equal(["evicted"]);
    });

    it("closes a trusted session that is already closing (its peer never finishes) for a new one", async () => {
      holding.length = 0;
      const closing = http2.connect(`http://127.0.0.1:${port}`);
      sessions.push(closing);
      closing.on("error", () => undefined);
      const held = closing.request({ ":path": "/hold", authorization: `Bearer ${TOKEN}` });
      held.on("error", () => undefined);
      await new Promise((resolve) => held.once("data", resolve));
      // The node closes the session (its idle timeout does this); the open stream keeps it from ending.
      holding[0]!.close();
      for (let i = 0; i < CAP - 1; i++) {
        const s = http2.connect(`http://127.0.0.1:${port}`);
        sessions.push(s);
        expect(await h2Get(s)).to.equal("ok");
      }
      const fresh = await RawConnection.open(port);
      raws.push(fresh);
      await fresh.write(h1Get);
      expect((await fresh.read({ timeoutMs: 5_000 })).status).to.equal(200);
      expect(capped).to.deep.equal(["evicted"]);
      expect(await closedSoon(closing), "the closing session made room").to.equal(true);
    });

    it("refuses a new connection when every open one is trusted", async () => {
      for (let i = 0; i < CAP; i++) {
        const s = http2.connect(`http://127.0.0.1:${port}`);
        sessions.push(s);
        expect(await h2Get(s)).to.equal("ok");
      }
      const fresh = await RawConnection.open(port);
      raws.push(fresh);
      await fresh.waitClosed(5_000);
      for (const s of sessions) expect(await h2Get(s)).to.equal("ok");
      expect(capped).to.deep.equal(["refused"]);
    });
  });

  describe("mutual TLS (ALPN)", () => {
    let certs: TestCerts;
    let port: number;
    before(() => {
      certs = makeTestCerts(["peer"]);
    });
    after(() => certs.cleanup());
    beforeEach(async () => {
      const trust = new PeerConnectionTrust(systemTimers);
      const tls = { ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key) };
      peer = createSecurePeerServer(handlerFor(trust), tls, trust, limits());
      port = await listening(peer);
    });

    const connect = () =>
      http2.connect(`https://127.0.0.1:${port}`, {
        ca: certs.pem(certs.ca.cert),
        cert: certs.pem(certs.clients["peer"]!.cert),
        key: certs.pem(certs.clients["peer"]!.key),
      });

    it("closes a connection stuck before its handshake, not an older trusted session, for a new one", async () => {
      const trusted = connect();
      sessions.push(trusted);
      expect(await h2Get(trusted)).to.equal("ok");
      for (let i = 0; i < CAP - 1; i++) raws.push(await RawConnection.open(port));
      const fresh = connect();
      sessions.push(fresh);
      expect(await h2Get(fresh)).to.equal("ok");
      await raws[0]!.waitClosed(5_000);
      expect(await closedSoon(trusted), "the trusted session stays").to.equal(false);
      expect(await h2Get(trusted)).to.equal("ok");
    });

    it("refuses a new connection when every open one is trusted", async () => {
      for (let i = 0; i < CAP; i++) {
        const s = connect();
        sessions.push(s);
        expect(await h2Get(s)).to.equal("ok");
      }
      const fresh = new net.Socket();
      const closed = new Promise<void>((resolve) => fresh.once("close", () => resolve()));
      fresh.on("error", () => undefined);
      fresh.connect(port, "127.0.0.1");
      await closed;
      for (const s of sessions) expect(await h2Get(s)).to.equal("ok");
    });
  });
});
