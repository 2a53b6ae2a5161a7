// The responses of the client and management listeners, with two rules Node's own lacks:
// - An answer written before its request's body was read ends the connection. Node would keep
//   the connection alive and read the rest of the body to find the next request (its
//   `req._dump()`), without a bound: a PUT refused with 401 before its body (authentication comes
//   first), or a GET sent with a body, made the node read a 1 GiB or endless body for nothing.
//   Closing hands the socket to the lingering close (lingering-close.ts: at most 5 s and 16 MiB,
//   so the client still reads its answer). A body body.ts discards within a bound is the
//   exception (unread-body.ts).
// - An answer whose bytes stop moving (a client that does not read) is dropped once the socket
//   made no progress for a whole `stallMs` period: 1 to 2 periods after it stalled, since Node's
//   socket timeout lets a period pass when bytes moved in it. The timer is armed only when a
//   write leaves bytes queued; once the answer is done, Node's keep-alive timer replaces it.
// - With `endsConnection` (client-ca-renewal.ts), an answer on a connection it names says
//   `Connection: close`, and the connection ends after it.
import http, { type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { markAnswered } from "./client-errors.js";
import { bodyLeftUnread } from "./unread-body.js";

type Args = unknown[];
const base = http.ServerResponse.prototype;

/**
 * The response class of a listener; `stallMs` 0: answers are never dropped for not moving.
 * `endsConnection`: whether an answer must end its connection (asked only while keep-alive holds).
 */
export function listenerResponse(stallMs: number, endsConnection?: (socket: Socket | null) => boolean): typeof http.ServerResponse {
  class ListenerResponse<Request extends IncomingMessage = IncomingMessage> extends http.ServerResponse<Request> {}
  const proto = ListenerResponse.prototype;

  // Every answer passes here (Node's implicit headers call writeHead too), before its head is
  // built: `shouldKeepAlive` decides the Connection header and whether the socket ends after it.
  proto.writeHead = function writeHead(this: http.ServerResponse, ...args: Args) {
    if (this.shouldKeepAlive && bodyLeftUnread(this.req)) {
      this.shouldKeepAlive = false;
      // A parser error on the body that follows is not answered a second time.
      if (this.socket !== null) markAnswered(this.socket);
    } else if (this.shouldKeepAlive && endsConnection?.(this.socket) === true) {
      this.shouldKeepAlive = false;
    }
    return (base.writeHead as (...a: Args) => http.ServerResponse).apply(this, args);
  } as typeof base.writeHead;

  if (stallMs > 0) {
    const watch = (res: http.ServerResponse) => {
      const socket: Socket | null = res.socket;
      if (socket !== null && socket.writableLength > 0 && socket.timeout !== stallMs) socket.setTimeout(stallMs);
    };
    proto.write = function write(this: http.ServerResponse, ...args: Args) {
      const flushed = (base.write as (...a: Args) => boolean).apply(this, args);
      if (!flushed) watch(this);
      return flushed;
    } as typeof base.write;
    proto.end = function end(this: http.ServerResponse, ...args: Args) {
      const self = (base.end as (...a: Args) => http.ServerResponse).apply(this, args);
      watch(this);
      return self;
    } as typeof base.end;
  }
  return ListenerResponse;
}
