// The node:http or node:https server of a Koa listener, built but not listening (main.ts binds).
// With TLS material the same server options apply over HTTPS; with a client CA the listener
// requires a client certificate and refuses, during the handshake, any certificate its CA did
// not sign (mutual TLS). The authentication chain then reads the verified certificate's CN.
// Every listener caps its open connections and answers what no route sees (parser errors,
// CONNECT, unknown Expect headers, framing it refuses: request-framing.ts) with the error
// envelope, and closes with a lingering close (lingering-close.ts) so an early answer is not lost
// to a reset. It answers pipelined requests one at a time (answer-order.ts), ends the connection
// of an answer written before its request's body was read and drops answers that stop moving
// (listener-response.ts), sends `100 Continue` only once the handler starts reading the body (so
// a request refused before its body, by authentication say, gets its answer without it), and
// never drops headers past a count (Node's default of 2000 silently dropped the rest, an
// `If-Match` among them): more than 500 lines are refused instead (request-framing.ts). At its
// connection cap a listener closes its oldest idle connection for a new one (connection-slots.ts).
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { TlsMaterial } from "../config/index.js";
import { HTTP_PIPELINED_WAITING_MAX } from "../core/limits.js";
import { answerInOrder } from "./answer-order.js";
import { answerClientError, answerConnect, answerExpectation } from "./client-errors.js";
import { closeForCap, ConnectionSlots, type CapOutcome } from "./connection-slots.js";
import { lingerOnClose } from "./lingering-close.js";
import { framingError } from "./request-framing.js";
import { writeError } from "./respond.js";
import { listenerResponse } from "./listener-response.js";
import { bodyDiscarding } from "./unread-body.js";

export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** An HTTP or HTTPS server; both close the same way. */
export type ListenerServer = http.Server | https.Server;

export interface ListenerLimits {
  /** Open connections at most; past it the oldest idle one is closed for a new one (or the new one, when none is idle). */
  readonly maxConnections: number;
  /**
   * An answer whose bytes do not move (a client that does not read it) for a whole period of this
   * length is dropped with its connection (listener-response.ts); 0 or absent: never.
   */
  readonly stallTimeoutMs?: number;
  /** Told of each connection the cap closed: an idle one evicted for a new one, or the new one refused. */
  readonly onCapped?: (outcome: CapOutcome) => void;
}

/**
 * The listeners' own checks around the route handler: request framing (at once, so a refused
 * request never waits in line holding its headers), then answer order.
 */
function guarded(handler: RequestHandler): RequestHandler {
  const ordered = answerInOrder(handler, HTTP_PIPELINED_WAITING_MAX);
  return (req, res) => {
    const refused = framingError(req);
    if (refused === undefined) return ordered(req, res);
    res.shouldKeepAlive = false;
    writeError(res, refused);
  };
}

/**
 * `100 Continue` once the handler reads the body (Node sends it before the handler unless this
 * listens); not for a body read only to be dropped after a refusal (body.ts).
 */
function continueWhenRead(handler: RequestHandler): RequestHandler {
  return (req, res) => {
    req.once("resume", () => {
      if (!res.headersSent && !res.writableEnded && !bodyDiscarding(req)) res.writeContinue();
    });
    handler(req, res);
  };
}

/** The socket HTTP runs on: the TLS socket over a raw one, once its handshake is done. */
type HttpSocket = Socket & { _httpMessage?: unknown };

/**
 * Caps the server's open connections with ConnectionSlots. A connection is idle when no answer is
 * pending on it: Node sets `_httpMessage` on the socket from the moment a request is handed to the
 * handler until its answer is done (its own closeIdleConnections() reads the same field). A TLS
 * connection is counted from its TCP accept, so a handshake that never ends holds no slot for good.
 */
function capConnections(server: ListenerServer, max: number, onCapped: ((outcome: CapOutcome) => void) | undefined): ConnectionSlots<Socket> {
  const httpSocket = new WeakMap<Socket, HttpSocket>();
  const slots = new ConnectionSlots<Socket>(max, (raw) => ((httpSocket.get(raw) ?? raw) as HttpSocket)._httpMessage == null);
  server.on("connection", (socket: Socket) => {
    socket.once("close", () => slots.release(socket));
    closeForCap(slots.admit(socket), socket, onCapped);
  });
  server.on("secureConnection", (socket: TLSSocket) => {
    const raw = (socket as TLSSocket & { _parent?: Socket })._parent;
    if (raw) httpSocket.set(raw, socket);
  });
  return slots;
}

/**
 * Creates the server of a listener. `tls` undefined: plain HTTP. `tls.ca` set: mutual TLS
 * (`requestCert` and `rejectUnauthorized`).
 */
export function createListenerServer(handler: RequestHandler, options: http.ServerOptions, tls: TlsMaterial | undefined, limits: ListenerLimits): ListenerServer {
  let server: ListenerServer;
  const handle = guarded(handler);
  options = { ...options, ServerResponse: listenerResponse(limits.stallTimeoutMs ?? 0), requireHostHeader: false };
  if (tls === undefined) {
    server = http.createServer(options, handle);
    server.on("connection", (socket: Socket) => lingerOnClose(socket));
  } else {
    const mutual = tls.ca !== undefined;
    server = https.createServer({ ...options, cert: tls.cert, key: tls.key, ...(mutual ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) }, handle);
    // A refused handshake (no, expired or foreign client certificate) is the client's problem.
    server.on("tlsClientError", () => undefined);
    server.on("secureConnection", (socket: TLSSocket) => lingerOnClose(socket));
  }
  capConnections(server, limits.maxConnections, limits.onCapped);
  server.maxHeadersCount = 0;
  server.on("checkContinue", continueWhenRead(handle));
  server.on("clientError", answerClientError);
  server.on("connect", answerConnect);
  server.on("checkExpectation", answerExpectation);
  return server;
}
