// The node:http or node:https server of a Koa listener, built but not listening (server.ts binds).
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
// connection cap a listener closes a spare connection for a new one (connection-slots.ts,
// connection-rank.ts).
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { TlsMaterial } from "../config/index.js";
import { CONNECTION_SAMPLE_MS, CONNECTION_STALLED_EVICTABLE_MS, HTTP_PIPELINED_WAITING_MAX } from "../core/limits.js";
import { answerInOrder } from "./answer-order.js";
import { answerClientError, answerConnect, answerExpectation } from "./client-errors.js";
import { systemClock, systemTimers, type TimerHandle } from "../core/clock.js";
import { closeForCap, ConnectionSlots, type CapOutcome } from "./connection-slots.js";
import { HttpConnectionRanker } from "./connection-rank.js";
import { lingerOnClose } from "./lingering-close.js";
import { framingError } from "./request-framing.js";
import { writeError } from "./respond.js";
import type { ClientCaRenewal } from "./client-ca-renewal.js";
import { listenerResponse } from "./listener-response.js";
import { bodyDiscarding } from "./unread-body.js";

export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** An HTTP or HTTPS server; both close the same way. */
export type ListenerServer = http.Server | https.Server;

export interface ListenerLimits {
  /** Open connections at most; past it a spare one is closed for a new one (connection-rank.ts), or the new one when none is. */
  readonly maxConnections: number;
  /**
   * An answer whose bytes do not move (a client that does not read it) for a whole period of this
   * length is dropped with its connection (listener-response.ts); 0 or absent: never.
   */
  readonly stallTimeoutMs?: number;
  /** Told of each connection the cap closed: a spare one evicted for a new one, or the new one refused. */
  readonly onCapped?: (outcome: CapOutcome) => void;
  /** At the cap, a pending answer whose bytes have not moved for this long may be closed (CONNECTION_STALLED_EVICTABLE_MS by default). */
  readonly stalledEvictableMs?: number;
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

/**
 * Caps the server's open connections with ConnectionSlots, ranked by HttpConnectionRanker. A TLS
 * connection is counted from its TCP accept, so a handshake that never ends holds no slot for good.
 * From the moment every slot is taken until one is free again, the progress of every open
 * connection's answer is sampled once a second (a few property reads per connection).
 */
function capConnections(server: ListenerServer, tls: boolean, limits: ListenerLimits): void {
  const ranker = new HttpConnectionRanker(tls, limits.stalledEvictableMs ?? CONNECTION_STALLED_EVICTABLE_MS, systemClock.monotonicMs);
  const slots = new ConnectionSlots<Socket>(limits.maxConnections, (socket) => ranker.rank(socket));
  let sampler: TimerHandle | undefined;
  const sampleWhileFull = () => {
    if (!slots.full) {
      sampler?.cancel();
      sampler = undefined;
      return;
    }
    for (const socket of slots.connections()) ranker.sample(socket);
  };
  server.on("connection", (socket: Socket) => {
    socket.once("close", () => slots.release(socket));
    const closing = slots.admit(socket);
    if (slots.full) sampler ??= systemTimers.every(CONNECTION_SAMPLE_MS, sampleWhileFull);
    closeForCap(closing, socket, limits.onCapped);
  });
  server.on("secureConnection", (socket: TLSSocket) => ranker.adoptTls(socket));
  server.on("close", () => sampler?.cancel());
}

/**
 * Creates the server of a listener. `tls` undefined: plain HTTP. `tls.ca` set: mutual TLS
 * (`requestCert` and `rejectUnauthorized`); `renewal` then ends the connections of a replaced CA.
 */
export function createListenerServer(handler: RequestHandler, options: http.ServerOptions, tls: TlsMaterial | undefined, limits: ListenerLimits, renewal?: ClientCaRenewal): ListenerServer {
  let server: ListenerServer;
  const handle = guarded(handler);
  options = { ...options, ServerResponse: listenerResponse(limits.stallTimeoutMs ?? 0, renewal?.endsConnection), requireHostHeader: false };
  if (tls === undefined) {
    server = http.createServer(options, handle);
    server.on("connection", (socket: Socket) => lingerOnClose(socket));
  } else {
    const mutual = tls.ca !== undefined;
    const secure = https.createServer({ ...options, cert: tls.cert, key: tls.key, ...(mutual ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) }, handle);
    // A refused handshake (no, expired or foreign client certificate) is the client's problem.
    secure.on("tlsClientError", () => undefined);
    secure.on("secureConnection", (socket: TLSSocket) => lingerOnClose(socket));
    renewal?.attach(secure);
    server = secure;
  }
  capConnections(server, tls !== undefined, limits);
  server.maxHeadersCount = 0;
  server.on("checkContinue", continueWhenRead(handle));
  server.on("clientError", answerClientError);
  server.on("connect", answerConnect);
  server.on("checkExpectation", answerExpectation);
  return server;
}
