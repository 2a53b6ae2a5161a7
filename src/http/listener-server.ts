// The node:http or node:https server of a Koa listener, built but not listening (main.ts binds).
// With TLS material the same server options apply over HTTPS; with a client CA the listener
// requires a client certificate and refuses, during the handshake, any certificate its CA did
// not sign (mutual TLS). The authentication chain then reads the verified certificate's CN.
// Every listener caps its open connections and answers what no route sees (parser errors,
// CONNECT, unknown Expect headers) with the error envelope, and closes with a lingering close
// (lingering-close.ts) so an early answer is not lost to a reset.
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { TlsMaterial } from "../config/index.js";
import { answerClientError, answerConnect, answerExpectation } from "./client-errors.js";
import { lingerOnClose } from "./lingering-close.js";

export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** An HTTP or HTTPS server; both close the same way. */
export type ListenerServer = http.Server | https.Server;

export interface ListenerLimits {
  /** Open connections at most; past it new connections are closed at once. */
  readonly maxConnections: number;
}

/**
 * Creates the server of a listener. `tls` undefined: plain HTTP. `tls.ca` set: mutual TLS
 * (`requestCert` and `rejectUnauthorized`).
 */
export function createListenerServer(handler: RequestHandler, options: http.ServerOptions, tls: TlsMaterial | undefined, limits: ListenerLimits): ListenerServer {
  let server: ListenerServer;
  if (tls === undefined) {
    server = http.createServer(options, handler);
    server.on("connection", (socket: Socket) => lingerOnClose(socket));
  } else {
    const mutual = tls.ca !== undefined;
    server = https.createServer({ ...options, cert: tls.cert, key: tls.key, ...(mutual ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) }, handler);
    // A refused handshake (no, expired or foreign client certificate) is the client's problem.
    server.on("tlsClientError", () => undefined);
    server.on("secureConnection", (socket: TLSSocket) => lingerOnClose(socket));
  }
  server.maxConnections = limits.maxConnections;
  server.on("clientError", answerClientError);
  server.on("connect", answerConnect);
  server.on("checkExpectation", answerExpectation);
  return server;
}
