// The connection cap of the client and management listeners, on a real server over loopback with
// a cap of 4: at the cap a spare connection is closed for the new one (an answer its client stopped
// reading, then a silent connection or one still in its TLS handshake, then a keep-alive connection
// between requests), and a new one is refused only when every open connection has an answer in
// flight that moves. Before, the new connection was always refused, so 1,024
// connections that said nothing locked the management probes out for the 60 s header timeout.
import { expect } from "chai";
import type http from "node:http";
import https from "node:https";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { CapOutcome } from "../../src/http/connection-slots.js";
import { createListenerServer, type ListenerServer } from "../../src/http/listener-server.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { RawConnection } from "../helpers/raw-http.js";

const CAP = 4;
const STALLED_MS = 300;
const BIG = Buffer.alloc(8 * 1024 * 1024, 0x62);

/** A handler that answers `/ok` at once and holds `/hold` until `release()`. */
function holdingHandler() {
  const held: http.ServerResponse[] = [];
  return {
    handler: (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.url === "/hold") held.push(res);
      else res.end("ok");
    },
    held,
    release: () => held.splice(0).forEach((res) => res.end("released")),
  };
}

async function listening(server: ListenerServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: cap\r\n\r\n`;

describe("listener connection cap: the oldest idle connection makes room", function () {
  this.timeout(30_000);

  describe("plain HTTP", () => {
    let server: ListenerServer;
    let port: number;
    let hold: ReturnType<typeof holdingHandler>;
    let capped: CapOutcome[];
    let bigAnswers: number;
    const open: RawConnection[] = [];

    beforeEach(async () => {
      hold = holdingHandler();
      capped = [];
      bigAnswers = 0;
      const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
        if (req.url !== "/big") return hold.handler(req, res);
        bigAnswers++;
        res.end(BIG);
      };
      server = createListenerServer(handler, { keepAliveTimeout: 60_000 }, undefined, { maxConnections: CAP, stalledEvictableMs: STALLED_MS, onCapped: (o) => void capped.push(o) });
      port = await listening(server);
    });
    afterEach(async () => {
      hold.release();
      for (const c of open.splice(0)) c.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    async function openConnections(n: number, request?: string): Promise<RawConnection[]> {
      const out: RawConnection[] = [];
      for (let i = 0; i < n; i++) {
        const c = await RawConnection.open(port);
        open.push(c);
        out.push(c);
        if (request !== undefined) await c.write(request);
      }
      return out;
    }

    it("answers a new connection when the cap is taken by connections that said nothing, closing the oldest", async () => {
      const silent = await openConnections(CAP);
      const fresh = await openConnections(1, get("/ok"));
      const answer = await fresh[0]!.read({ timeoutMs: 5_000 });
      expect(answer.status).to.equal(200);
      await silent[0]!.waitClosed(5_000);
      for (const c of silent.slice(1)) expect(c.endedByPeer, "younger silent connections stay").to.equal(false);
      expect(capped).to.deep.equal(["evicted"]);
    });

    it("closes a silent connection before an older keep-alive connection between requests", async () => {
      const [kept] = await openConnections(1, get("/ok"));
      expect((await kept!.read()).status).to.equal(200);
      const silent = await openConnections(CAP - 1);
      const fresh = await openConnections(1, get("/ok"));
      expect((await fresh[0]!.read({ timeoutMs: 5_000 })).status).to.equal(200);
      await silent[0]!.waitClosed(5_000);
      expect(kept!.endedByPeer, "the pooled connection stays").to.equal(false);
      await kept!.write(get("/ok"));
      expect((await kept!.read()).status).to.equal(200);
    });

    it("closes a connection whose answer stopped moving (its client does not read) once it has stalled for stalledEvictableMs", async () => {
      const stuck: net.Socket[] = [];
      for (let i = 0; i < CAP; i++) {
        const s = net.connect(port, "127.0.0.1");
        s.setNoDelay(true);
        s.on("error", () => undefined);
        await new Promise((resolve) => s.once("connect", resolve));
        s.pause(); // never reads: the 8 MiB answer fills the socket buffers and stops
        s.write(get("/big"));
        stuck.push(s);
      }
      try {
        await until(() => bigAnswers === CAP, "the big answers");
        const [first] = await openConnections(1, get("/ok"));
        await first!.waitClosed(5_000);
        expect(capped, "first look: the answers are not known to be stuck yet").to.deep.equal(["refused"]);
        await new Promise((resolve) => setTimeout(resolve, STALLED_MS + 100));
        const [second] = await openConnections(1, get("/ok"));
        expect((await second!.read({ timeoutMs: 5_000 })).status).to.equal(200);
        expect(capped).to.deep.equal(["refused", "evicted"]);
      } finally {
        for (const s of stuck) s.destroy();
      }
    });

    it("refuses the new connection, and keeps every request in flight, when all are busy", async () => {
      const busy = await openConnections(CAP, get("/hold"));
      await until(() => hold.held.length === CAP, "the held requests");
      const [fresh] = await openConnections(1, get("/ok"));
      await fresh!.waitClosed(5_000);
      expect(fresh!.pending.length, "no answer on the refused connection").to.equal(0);
      expect(capped).to.deep.equal(["refused"]);
      hold.release();
      for (const c of busy) expect((await c.read({ timeoutMs: 5_000 })).body.toString()).to.equal("released");
    });

    it("passes over a busy oldest connection to the oldest idle one", async () => {
      const [busy] = await openConnections(1, get("/hold"));
      await until(() => hold.held.length === 1, "the held request");
      const silent = await openConnections(CAP - 1);
      const [fresh] = await openConnections(1, get("/ok"));
      expect((await fresh!.read({ timeoutMs: 5_000 })).status).to.equal(200);
      await silent[0]!.waitClosed(5_000);
      hold.release();
      expect((await busy!.read({ timeoutMs: 5_000 })).body.toString()).to.equal("released");
    });
  });

  describe("HTTPS", () => {
    let certs: TestCerts;
    let server: ListenerServer;
    let port: number;
    let hold: ReturnType<typeof holdingHandler>;
    const sockets: net.Socket[] = [];

    before(() => {
      certs = makeTestCerts();
    });
    after(() => certs.cleanup());
    beforeEach(async () => {
      hold = holdingHandler();
      const tls = { cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key), ca: undefined };
      server = createListenerServer(hold.handler, { keepAliveTimeout: 60_000 }, tls, { maxConnections: CAP });
      port = await listening(server);
    });
    afterEach(async () => {
      hold.release();
      for (const s of sockets.splice(0)) s.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    /** One HTTPS request on its own connection; resolves with status and body, rejects when the connection is closed first. */
    function request(path: string): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = https.request({ host: "127.0.0.1", port, path, ca: certs.pem(certs.ca.cert), agent: false }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("socket", (s) => sockets.push(s));
        req.on("error", reject);
        req.end();
      });
    }

    it("closes connections still in their TLS handshake for a new one", async () => {
      const silent: RawConnection[] = [];
      for (let i = 0; i < CAP; i++) silent.push(await RawConnection.open(port));
      const answer = await request("/ok");
      expect(answer).to.deep.equal({ status: 200, body: "ok" });
      await silent[0]!.waitClosed(5_000);
      for (const c of silent) c.destroy();
    });

    it("counts a TLS connection with a request in flight as busy", async () => {
      const held = Array.from({ length: CAP }, () => request("/hold"));
      await until(() => hold.held.length === CAP, "the held requests");
      const refused = await request("/ok").then(
        () => "answered",
        (err: Error) => err.message,
      );
      expect(refused).to.not.equal("answered");
      hold.release();
      for (const answer of await Promise.all(held)) expect(answer).to.deep.equal({ status: 200, body: "released" });
    });
  });
});
