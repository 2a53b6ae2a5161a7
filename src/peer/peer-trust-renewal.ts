// The connections of a mutual-TLS dist listener verified under a CA that has since changed. A
// connection is verified once, at its handshake, so before this a peer that the reloaded CA no
// longer trusted kept its sessions for as long as its traffic kept them open. On renew():
// - each older HTTP/2 session is closed: GOAWAY with the last stream processed. Its open streams
//   may finish, and a node's peer client moves its Exchange stream to a new connection. Streams
//   the peer sent that had not arrived yet are refused, unprocessed, and the peer client sends
//   them again (isRefusedStream). A session that still has a stream after PEER_RENEW_GRACE_MS is
//   destroyed. (Node offers no shutdown notice: a GOAWAY with the highest stream id is capped to
//   the last one received, and a second GOAWAY after a PING left streams without an answer.)
// - an idle older HTTP/1.1 connection is closed (idle: no answer pending and nothing read since
//   the last one finished, so a request head on its way is not cut); on any other the next answer
//   says `Connection: close` (the response class asks, so 100-continue answers are covered too).
// - a handshake that began before the change (checked against the old CA) is treated the same as
//   it completes: an HTTP/2 session is closed at once, an HTTP/1.1 connection destroyed.
// A connection's age counts from its TCP accept (ConnectionEpochs).
import http from "node:http";
import type http2 from "node:http2";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Timers } from "../core/clock.js";
import { PEER_RENEW_GRACE_MS } from "../core/limits.js";
import { ConnectionEpochs } from "../http/connection-epochs.js";

type HttpSocket = TLSSocket & { _httpMessage?: unknown };

export class PeerTrustRenewal {
  private readonly epochs = new ConnectionEpochs();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly h1Sockets = new Set<HttpSocket>();
  /**
   * Bytes an HTTP/1.1 connection had read when it last became idle (its handshake done, or an
   * answer finished): more since then is a request head on its way, not an idle connection.
   */
  private readonly readWhenIdle = new WeakMap<Socket, number>();

  constructor(private readonly timers: Timers) {}

  /** The HTTP/1.1 response class of the listener: an answer on an older connection ends it. */
  http1Response(): typeof http.ServerResponse {
    const epochs = this.epochs;
    const readWhenIdle = this.readWhenIdle;
    class RenewingResponse<Request extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<Request> {}
    const base = http.ServerResponse.prototype.writeHead as (...a: unknown[]) => http.ServerResponse;
    // Every answer passes here (Node's implicit headers call writeHead too), before its head is built.
    RenewingResponse.prototype.writeHead = function writeHead(this: http.ServerResponse, ...args: unknown[]) {
      if (this.shouldKeepAlive && epochs.isOlder(this.socket)) this.shouldKeepAlive = false;
      const socket = this.socket;
      if (socket !== null) this.once("finish", () => readWhenIdle.set(socket, socket.bytesRead));
      return base.apply(this, args);
    } as typeof http.ServerResponse.prototype.writeHead;
    return RenewingResponse;
  }

  /** Follows the connections of `server` (created with http1Response()). */
  attach(server: http2.Http2SecureServer): void {
    server.on("connection", (socket: Socket) => this.epochs.accepted(socket));
    server.prependListener("secureConnection", (socket: HttpSocket) => {
      if (socket.alpnProtocol === "h2") return;
      // Prepended: an HTTP/1.1 handshake from before the change ends before HTTP reads from it.
      if (this.epochs.isOlder(socket)) return void socket.destroy();
      this.h1Sockets.add(socket);
      this.readWhenIdle.set(socket, socket.bytesRead);
      socket.once("close", () => this.h1Sockets.delete(socket));
    });
    server.on("session", (session: http2.ServerHttp2Session) => {
      this.sessions.add(session);
      session.once("close", () => this.sessions.delete(session));
      // An HTTP/2 handshake from before the change is closed at once: a node's streams on it are
      // refused and sent again on a new connection (destroying it failed the calls in flight).
      if (this.epochs.isOlder(session.socket as Socket)) this.close(session);
    });
  }

  /** The CA changed: ends the connections verified under the old one, as described above. */
  renew(): void {
    this.epochs.advance();
    for (const socket of this.h1Sockets) {
      const idle = socket._httpMessage == null && socket.bytesRead === this.readWhenIdle.get(socket);
      if (idle && this.epochs.isOlder(socket)) socket.destroy();
    }
    for (const session of this.sessions) {
      if (!session.closed && !session.destroyed && this.epochs.isOlder(session.socket as Socket)) this.close(session);
    }
  }

  /** GOAWAY now; destroyed if a stream is still open after the grace. */
  private close(session: http2.ServerHttp2Session): void {
    session.close();
    const timer = this.timers.after(PEER_RENEW_GRACE_MS, () => session.destroy());
    session.once("close", () => timer.cancel());
  }
}
