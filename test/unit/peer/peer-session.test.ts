// The HTTP/2 session to one peer: failures become rejected calls, never an unhandled 'error'
// event; a reset opens a new connection; a peer that never completes a connection fails within
// the connect timeout.
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { expect } from "chai";
import { systemTimers, type Timers } from "../../../src/core/clock.js";
import { PeerSession } from "../../../src/peer/peer-session.js";
import { makeTestCerts } from "../../helpers/certs.js";

const opts = { timers: systemTimers, connectTimeoutMs: 300, idleTimeoutMs: 60_000, connect: () => ({}) };

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as net.AddressInfo).port;
}

/** Records uncaught exceptions while `body` runs (an unhandled 'error' event would be one). */
async function noUncaught(body: () => Promise<void>): Promise<void> {
  const seen: unknown[] = [];
  const onErr = (e: unknown) => seen.push(e);
  process.prependListener("uncaughtException", onErr);
  try {
    await body();
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off("uncaughtException", onErr);
  }
  expect(seen.map(String)).to.deep.equal([]);
}

/** Records how each accepted socket ends: "end (FIN)", or its error code (ECONNRESET for a reset). */
function recordEnds(s: net.Socket, ends: string[]): void {
  s.on("data", () => undefined);
  s.on("end", () => ends.push("end (FIN)"));
  s.on("error", (e: NodeJS.ErrnoException) => ends.push(e.code ?? e.message));
}

/** Sends a call's first bytes, resets the session, and waits until `ends` has `count` entries (at most 1 s). */
async function writeThenReset(session: PeerSession, ends: readonly string[], count: number): Promise<void> {
  await noUncaught(async () => {
    const stream = await session.request("POST", "/x", {}, {});
    stream.on("error", () => undefined);
    stream.write("a gossip push");
    await new Promise((r) => setTimeout(r, 100));
    session.reset();
    for (let i = 0; i < 100 && ends.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  });
}

describe("peer/peer-session", () => {
  it("a peer that resets every connection makes the call fail, with no unhandled error event", async () => {
    const server = net.createServer((s) => s.resetAndDestroy());
    const port = await listen(server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    await noUncaught(async () => {
      const err = await session.request("POST", "/x", {}, {}).then(
        (stream) => new Promise((resolve) => stream.on("error", resolve).on("close", () => resolve(new Error("closed")))),
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(Error);
    });
    session.close();
    server.close();
  });

  it("a stream to a peer that accepts and never answers ends when the session is reset (what a timed-out call does), with no unhandled error", async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => void sockets.push(s));
    const port = await listen(server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    await noUncaught(async () => {
      const stream = await session.request("POST", "/x", {}, {});
      stream.on("error", () => undefined);
      const ended = new Promise((r) => stream.on("close", r));
      session.reset();
      await ended;
      expect(stream.destroyed).to.equal(true);
    });
    session.close();
    for (const s of sockets) s.destroy();
    server.close();
  });

  it("reset() ends the connection with a TCP reset, not a close: its unsent bytes are dropped, never delivered after a partition heals", async () => {
    // A close (FIN) leaves the kernel retransmitting what the connection still had queued; after
    // a partition heals, that arrives up to tens of seconds late and the peer acts on it (chaos
    // seed 40002: a gossip push queued during an isolation, delivered 25 s later, marked two live
    // nodes suspect and held their quorum votes for 5 s).
    const ends: string[] = [];
    const server = net.createServer((s) => recordEnds(s, ends));
    const port = await listen(server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    await writeThenReset(session, ends, 1);
    expect(ends).to.deep.equal(["ECONNRESET"]);
    session.close();
    server.close();
  });

  it("over TLS too, reset() ends the TCP connection under it with a reset; the certificate check and ALPN work as before", async () => {
    const certs = makeTestCerts();
    const ends: string[] = [];
    const server = tls.createServer({ cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key), ALPNProtocols: ["h2"] }, (s) => {
      ends.push(`alpn ${String(s.alpnProtocol)}`);
      recordEnds(s, ends);
    });
    const port = await listen(server);
    try {
      // an IP address (the certificate's SAN) and a host name (SNI): both must pass the check
      for (const host of ["127.0.0.1", "localhost"]) {
        ends.length = 0;
        const session = new PeerSession(`https://${host}:${port}/internal`, { ...opts, connect: () => ({ ca: certs.pem(certs.ca.cert) }) });
        await writeThenReset(session, ends, 2);
        expect(ends, host).to.deep.equal(["alpn h2", "ECONNRESET"]);
        session.close();
      }
      // a certificate the CA did not sign fails the connection, as with Node's own connect
      const foreign = new PeerSession(`https://127.0.0.1:${port}/internal`, { ...opts, connect: () => ({ ca: certs.pem(certs.foreignCa.cert) }) });
      const err = await foreign.request("POST", "/x", {}, {}).then(() => undefined, (e: unknown) => e);
      expect(String(err)).to.match(/certificate|self.signed|verify/i);
      foreign.close();
    } finally {
      server.close();
      certs.cleanup();
    }
  });

  it("reset() drops the connection: the next request opens a new one", async () => {
    const server = http2.createServer((_req, res) => res.end("ok"));
    let connections = 0;
    server.on("connection", () => connections++);
    const port = await listen(server as unknown as net.Server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    const get = async () => {
      const stream = await session.request("GET", "/", {}, {});
      stream.resume();
      await new Promise((r) => stream.on("close", r));
    };
    await get();
    await get();
    expect(connections, "two requests share one connection").to.equal(1);
    session.reset();
    await get();
    expect(connections, "a reset opens a new connection").to.equal(2);
    session.close();
    await new Promise((r) => server.close(r));
  });

  it("a connection that completes after close() or reset() is not adopted: it is destroyed and the waiting call fails", async () => {
    const server = http2.createServer((_req, res) => res.end("ok"));
    const sessions: http2.ServerHttp2Session[] = [];
    server.on("session", (s) => sessions.push(s));
    const port = await listen(server as unknown as net.Server);
    for (const end of ["close", "reset"] as const) {
      const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
      const pending = session.request("GET", "/", {}, {}).then(
        () => "adopted",
        (e: unknown) => String(e),
      );
      session[end](); // before the connection completes
      expect(await pending, end).to.contain("reset while connecting");
      await new Promise((r) => setTimeout(r, 50));
      expect(sessions.filter((s) => !s.closed && !s.destroyed).length, `${end}: no connection left open`).to.equal(0);
      session.close();
    }
    await new Promise((r) => server.close(r));
  });

  it("retire() moves to a new connection without cutting a stream: the open one finishes on the old connection, which then closes", async () => {
    const held: http2.Http2ServerResponse[] = [];
    const server = http2.createServer((req, res) => (req.url === "/hold" ? void held.push(res) : res.end("ok")));
    const sessions: http2.ServerHttp2Session[] = [];
    server.on("session", (x) => sessions.push(x));
    const port = await listen(server as unknown as net.Server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    const body = async (path: string) => {
      const stream = await session.request("GET", path, {}, {});
      let text = "";
      stream.setEncoding("utf8").on("data", (c: string) => (text += c));
      await new Promise((r) => stream.on("close", r));
      return text;
    };
    const slow = body("/hold");
    while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
    session.retire();
    expect(await body("/"), "a request after the retire").to.equal("ok");
    expect(sessions, "it went on a new connection").to.have.length(2);
    expect(sessions[0]!.destroyed, "the old connection is still there for its stream").to.equal(false);
    held[0]!.end("late");
    expect(await slow, "the stream open at the retire finished").to.equal("late");
    await new Promise((r) => setTimeout(r, 100));
    expect(sessions[0]!.destroyed || sessions[0]!.closed, "the old connection closed once its stream ended").to.equal(true);
    session.close();
    await new Promise((r) => server.close(r));
  });

  it("a connection attempt under way at retire() does not fail its caller: the call waits for a connection opened afterwards", async () => {
    const server = http2.createServer((_req, res) => res.end("ok"));
    let connections = 0;
    server.on("connection", () => connections++);
    const port = await listen(server as unknown as net.Server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    const pending = session.request("GET", "/", {}, {}).then(
      async (stream) => {
        stream.resume();
        await new Promise((r) => stream.on("close", r));
        return "answered";
      },
      (e: unknown) => String(e),
    );
    session.retire(); // before the connection completes
    expect(await pending).to.equal("answered");
    expect(connections, "the attempt from before the retire was not used").to.equal(2);
    session.close();
    await new Promise((r) => server.close(r));
  });

  it("a GOAWAY from the peer on the current connection is told to onGoaway's listener on a later turn; the next request opens a new connection", async () => {
    const server = http2.createServer((_req, res) => res.end("ok"));
    const sessions: http2.ServerHttp2Session[] = [];
    server.on("session", (x) => sessions.push(x));
    const port = await listen(server as unknown as net.Server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    let told = 0;
    session.onGoaway(() => told++);
    const get = async () => {
      const stream = await session.request("GET", "/", {}, {});
      stream.resume();
      await new Promise((r) => stream.on("close", r));
    };
    await get();
    sessions[0]!.close();
    while (told === 0) await new Promise((r) => setTimeout(r, 5));
    await get();
    expect(told).to.equal(1);
    expect(sessions).to.have.length(2);
    session.close();
    await new Promise((r) => server.close(r));
  });

  it("after a GOAWAY, a stream the peer never ends is cut when the grace runs out (the connection is not kept for good)", async () => {
    const server = http2.createServer((_req, res) => void res.writeHead(200).write("held"));
    const sessions: http2.ServerHttp2Session[] = [];
    server.on("session", (x) => sessions.push(x));
    const port = await listen(server as unknown as net.Server);
    const due: Array<() => void> = [];
    const timers: Timers = { ...systemTimers, after: (_ms, fn) => (due.push(fn), { cancel: () => undefined }) };
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, { ...opts, timers });
    const stream = await session.request("GET", "/", {}, {});
    stream.on("error", () => undefined);
    stream.resume();
    await new Promise((r) => stream.once("response", r));
    const goaway = new Promise((r) => stream.session!.once("goaway", r));
    sessions[0]!.close();
    await goaway;
    await new Promise((r) => setTimeout(r, 50));
    expect(stream.closed, "the stream lives on after the GOAWAY").to.equal(false);
    const closed = new Promise((r) => stream.once("close", r));
    for (const fn of due.splice(0)) fn();
    await closed;
    expect(stream.session === undefined || stream.session.destroyed).to.equal(true);
    session.close();
    await new Promise((r) => server.close(r));
  });

  it("close() and reset() destroy the connection on the next turn of the event loop, never in the caller's stack", async () => {
    // The caller may be inside this session's receive callback (an answer that ends on a DATA
    // frame resolves its promise there): destroying the session then re-enters nghttp2 and frees
    // the stream it is processing (test/integration/peer-session-teardown.test.ts shows it).
    const server = http2.createServer((req, res) => {
      if (req.url === "/hold") res.write("x");
      else res.end("ok");
    });
    const port = await listen(server as unknown as net.Server);
    for (const end of ["close", "reset"] as const) {
      const deferred: Array<() => void> = [];
      const timers: Timers = { ...systemTimers, defer: (fn) => void deferred.push(fn) };
      const session = new PeerSession(`http://127.0.0.1:${port}/internal`, { ...opts, timers });
      const stream = await session.request("GET", "/hold", {}, {});
      stream.on("error", () => undefined);
      stream.resume();
      await new Promise((r) => stream.once("data", r));
      session[end]();
      expect(stream.session?.destroyed, `${end}: not destroyed in the caller's stack`).to.equal(false);
      expect(deferred.length, `${end}: the destroy is deferred`).to.equal(1);
      for (const fn of deferred.splice(0)) fn();
      expect(stream.session?.destroyed ?? true, `${end}: destroyed on the deferred turn`).to.equal(true);
      session.close();
    }
    await new Promise((r) => server.close(r));
  });

  it("a stream reset with a code other than CANCEL goes out on the next turn; CANCEL at once (Node defers it itself)", async () => {
    const server = http2.createServer((_req, res) => void res.write("x"));
    const port = await listen(server as unknown as net.Server);
    const deferred: Array<() => void> = [];
    const timers: Timers = { ...systemTimers, defer: (fn) => void deferred.push(fn) };
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, { ...opts, timers });
    const open = async () => {
      const stream = await session.request("GET", "/", {}, {});
      stream.on("error", () => undefined);
      stream.resume();
      await new Promise((r) => stream.once("data", r));
      return stream;
    };
    const failed = await open();
    failed.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    expect(failed.closed, "INTERNAL_ERROR: not in the caller's stack").to.equal(false);
    expect(deferred.length).to.equal(1);
    for (const fn of deferred.splice(0)) fn();
    expect(failed.closed).to.equal(true);
    expect(failed.rstCode).to.equal(http2.constants.NGHTTP2_INTERNAL_ERROR);
    const cancelled = await open();
    cancelled.close(http2.constants.NGHTTP2_CANCEL);
    expect(cancelled.closed, "CANCEL: at once").to.equal(true);
    expect(deferred.length).to.equal(0);
    session.close();
    for (const fn of deferred.splice(0)) fn();
    await new Promise((r) => server.close(r));
  });

  it("resetIfSilentSince resets only when nothing was read since the mark", async () => {
    const server = http2.createServer((_req, res) => res.end("ok"));
    let connections = 0;
    server.on("connection", () => connections++);
    const port = await listen(server as unknown as net.Server);
    const session = new PeerSession(`http://127.0.0.1:${port}/internal`, opts);
    const get = async () => {
      const stream = await session.request("GET", "/", {}, {});
      stream.resume();
      await new Promise((r) => stream.on("close", r));
    };
    await get();
    const mark = session.reads;
    session.notifyResponseByteRead(); // what Connect reports for every chunk it reads
    expect(session.resetIfSilentSince(mark), "something was read: kept").to.equal(false);
    await get();
    expect(connections).to.equal(1);
    expect(session.resetIfSilentSince(session.reads), "silent since the mark: reset").to.equal(true);
    await get();
    expect(connections).to.equal(2);
    session.close();
    await new Promise((r) => server.close(r));
  });
});
