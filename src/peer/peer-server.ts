// The dist listener: one port serving the peer service over HTTP/1.1 and cleartext HTTP/2.
// `http2.createServer({ allowHTTP1 })` only mixes protocols under TLS (ALPN), so a net server
// looks at the first bytes of each connection: the HTTP/2 preface ("PRI * HTTP/2.0") goes to
// the HTTP/2 server, anything else to the HTTP/1.1 server. Open sockets are tracked so that
// close() really closes. createSecurePeerServer is the mutual-TLS variant (ALPN does the mixing).
// Both cap their connections at PEER_CONNECTIONS_MAX with ConnectionSlots: at the cap the oldest
// connection that has not carried a request the gate let through is closed for the new one (a
// peer's open session once trusted is never closed to make room), so connections opened by
// someone without a token cannot keep a restarted peer out.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { systemTimers, type Timers } from "../core/clock.js";
import { PEER_CONNECTIONS_MAX, PEER_IDLE_TIMEOUT_MS, PEER_TIMEOUT_MS } from "../core/limits.js";
import { answerClientError } from "../http/client-errors.js";
import { acceptedSocketOf } from "../http/connection-rank.js";
import { closeForCap, ConnectionSlots, type CapOutcome } from "../http/connection-slots.js";
import type { PeerRequestHandler } from "./peer-handler.js";
import { idleTimeout } from "./session-idle.js";
import type { PeerConnectionTrust } from "./connection-trust.js";
import { PeerTrustRenewal } from "./peer-trust-renewal.js";

const PREFACE_START = Buffer.from("PRI ");

/** The dist listener's connection cap: at most `maxConnections` (PEER_CONNECTIONS_MAX by default); `onCapped` hears of each connection it closed. */
export interface PeerServerLimits {
  readonly maxConnections?: number;
  readonly onCapped?: (outcome: CapOutcome) => void;
  /** For the grace of sessions verified under a replaced CA (the process timers by default). */
  readonly timers?: Timers;
}

export interface PeerServer {
  /** The server to `listen()` on. */
  readonly server: net.Server;
  /** Stops accepting, then closes every open connection. */
  close(): Promise<void>;
  /**
   * Under mutual TLS, after the CA changed: ends the connections verified under the old one
   * (peer-trust-renewal.ts). Absent on the cleartext listener, which verifies no one.
   */
  renewTrust?(): void;
}

/**
 * The timers of a new HTTP/2 session: closed after the idle timeout, and after the peer timeout
 * unless a request on it passed the gate (connection-trust.ts).
 */
function watchSession(session: http2.ServerHttp2Session, trust: PeerConnectionTrust | undefined): void {
  idleTimeout(session, PEER_IDLE_TIMEOUT_MS, () => session.close());
  trust?.closeUntrusted(session, PEER_TIMEOUT_MS);
}

/**
 * The connection cap of a dist listener: ConnectionSlots over its accepted sockets. `trustKeys`
 * maps an accepted socket to what the trust is recorded on once known (its HTTP/2 session, or
 * its TLS socket); until then the socket itself. Spare (rank 1): a connection the gate has not
 * trusted, or a trusted HTTP/2 session already closing (it waits for the peer's FIN, which a
 * partitioned peer never sends); everything else stays. Without `trust` nothing is spare and a
 * new connection at the cap is refused.
 */
function capConnections(server: net.Server, limits: PeerServerLimits, trust: PeerConnectionTrust | undefined, trustKeys: WeakMap<net.Socket, object>): void {
  const spare = (socket: net.Socket): boolean => {
    if (trust === undefined) return false;
    const key = trustKeys.get(socket) ?? socket;
    if (!trust.isTrusted(key)) return true;
    const session = key as Partial<http2.Http2Session>;
    return session.closed === true || session.destroyed === true;
  };
  const slots = new ConnectionSlots<net.Socket>(limits.maxConnections ?? PEER_CONNECTIONS_MAX, (socket) => (spare(socket) ? 1 : 0));
  server.on("connection", (socket: net.Socket) => {
    socket.once("close", () => slots.release(socket));
    closeForCap(slots.admit(socket), socket, limits.onCapped);
  });
}

export function createPeerServer(handle: PeerRequestHandler, trust?: PeerConnectionTrust, limits: PeerServerLimits = {}): PeerServer {
  const h1 = http.createServer(
    { requestTimeout: PEER_TIMEOUT_MS, headersTimeout: PEER_TIMEOUT_MS, keepAliveTimeout: PEER_IDLE_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    handle,
  );
  // h1 never listens itself (it is handed sockets), and Node checks the headers and request
  // timeouts only for servers that announced 'listening': announce it so they apply.
  h1.emit("listening");
  h1.on("clientError", answerClientError);
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: 1000 } }, handle);
  const trustKeys = new WeakMap<net.Socket, object>();
  // The socket being handed to the HTTP/2 server: it emits 'session' for it synchronously.
  let handing: net.Socket | undefined;
  h2.on("session", (session: http2.ServerHttp2Session) => {
    if (handing) trustKeys.set(handing, session);
    watchSession(session, trust);
  });
  // Expect: 100-continue: no automatic 100 Continue; the handler sends it once the gate let the
  // request through (peer-handler.ts).
  h1.on("checkContinue", handle);
  h2.on("checkContinue", handle);
  const sockets = new Set<net.Socket>();

  const server = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    // A connection that does not say which protocol it speaks within the peer timeout is closed.
    socket.setTimeout(PEER_TIMEOUT_MS, () => socket.destroy());
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      if (seen.length < PREFACE_START.length && PREFACE_START.subarray(0, seen.length).equals(seen)) return;
      socket.off("data", onData);
      socket.setTimeout(0);
      const isH2 = seen.subarray(0, PREFACE_START.length).equals(PREFACE_START);
      // Hand the socket over with the sniffed bytes put back. The HTTP/2 session drains bytes
      // buffered in the socket when it takes over the native handle, so the socket must stay
      // paused for it (resuming would feed them to a JavaScript reader instead).
      socket.pause();
      socket.unshift(seen);
      if (isH2) {
        handing = socket;
        try {
          h2.emit("connection", socket);
        } finally {
          handing = undefined;
        }
      } else {
        // twice the peer timeout: a request head still incomplete at the peer timeout gets its 400
        // from the HTTP/1.1 server's own timeout first
        trust?.closeUntrusted(socket, 2 * PEER_TIMEOUT_MS);
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
  });
  capConnections(server, limits, trust, trustKeys);

  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        h1.close();
        h2.close();
        for (const s of sockets) s.destroy();
      }),
  };
}

/**
 * The dist listener under mutual TLS (SERVICE_DIST_TLS_CERT, _KEY, _CA): HTTP/2 and HTTP/1.1 on
 * one port through ALPN, every client certificate verified against the CA (a peer without one,
 * or with one from another CA, fails the handshake). The peer token is still checked per call.
 */
export function createSecurePeerServer(
  handle: PeerRequestHandler,
  tls: { readonly ca: Buffer; readonly cert: Buffer; readonly key: Buffer },
  trust?: PeerConnectionTrust,
  limits: PeerServerLimits = {},
): PeerServer {
  const renewal = new PeerTrustRenewal(limits.timers ?? systemTimers);
  const server = http2.createSecureServer(
    {
      allowHTTP1: true, requestCert: true, rejectUnauthorized: true, ca: tls.ca, cert: tls.cert, key: tls.key, settings: { maxConcurrentStreams: 1000 },
      Http1ServerResponse: renewal.http1Response(),
    },
    handle,
  );
  renewal.attach(server);
  const trustKeys = new WeakMap<net.Socket, object>();
  server.on("secureConnection", (socket: net.Socket) => {
    // an HTTP/2 session was recorded first ('session' comes from the server's own listener)
    const accepted = acceptedSocketOf(socket);
    if (accepted && !trustKeys.has(accepted)) trustKeys.set(accepted, socket);
  });
  server.on("session", (session: http2.ServerHttp2Session) => {
    const accepted = acceptedSocketOf(session.socket);
    if (accepted) trustKeys.set(accepted, session);
    watchSession(session, trust);
  });
  server.on("checkContinue", handle);
  capConnections(server, limits, trust, trustKeys);
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // Failed handshakes (no or foreign client certificate) are the client's problem: not logged.
  server.on("tlsClientError", () => undefined);
  return {
    server,
    renewTrust: () => renewal.renew(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
