// Which connections of the dist listener have carried a request the gate let through. A
// connection that has not, within the peer timeout of opening (an HTTP/2 session; twice that for
// an HTTP/1.1 socket, whose own header timeout answers first), is closed: a caller without a
// token could otherwise hold one of the PEER_CONNECTIONS_MAX connections for the 60 s idle
// timeout, with a session that said nothing, or whose protocol error had made Node stop reading
// it (Node sends GOAWAY, reads no more and tells nobody, so the caller's close goes unseen and the
// socket sits in CLOSE-WAIT): about 70 connections a second filled the listener. Peers and tools
// send their first request as soon as the session is up.
import type { IncomingMessage } from "node:http";
import type http2 from "node:http2";
import type { Duplex } from "node:stream";
import type { Timers } from "../core/clock.js";

export class PeerConnectionTrust {
  private readonly trusted = new WeakSet<object>();

  constructor(private readonly timers: Timers) {}

  /** Marks the connection `req` came on (its HTTP/2 session, or its socket) as trusted. */
  markRequest(req: IncomingMessage | http2.Http2ServerRequest): void {
    const connection = "stream" in req ? req.stream.session : req.socket;
    if (connection) this.trusted.add(connection);
  }

  /** True once a request on `connection` (an HTTP/2 session or an HTTP/1.1 socket) passed the gate. */
  isTrusted(connection: object): boolean {
    return this.trusted.has(connection);
  }

  /** Closes `connection` (an HTTP/2 session or an HTTP/1.1 socket) after `ms` unless a request on it passed the gate by then. */
  closeUntrusted(connection: http2.ServerHttp2Session | Duplex, ms: number): void {
    const timer = this.timers.after(ms, () => {
      if (!connection.destroyed && !this.trusted.has(connection)) connection.destroy();
    });
    connection.once("close", () => timer.cancel());
  }
}
